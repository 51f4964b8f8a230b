/**
 * One descriptor per cloud (lib/sources/clouds/<cloud>/descriptor.ts, issue 21 point 1): every provider and every
 * source has exactly one, each is complete, and the shared tables are the descriptors' own. A descriptor
 * that lacks a part fails here (the compiler already refuses one without a source of its provider or a
 * rule for one of its types).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { DrainbridgeError } from '../../../lib/errors/index.ts';
import { NOTICE_PROVIDERS, NOTICE_SOURCES } from '../../../lib/model/notice.ts';
import { INSTANCE_PROVIDERS, type InstanceProvider } from '../../../lib/model/request.ts';
import { PROVIDER_ID_SCHEMES } from '../../../lib/node/resolve.ts';
import type { AnyCloud } from '../../../lib/sources/clouds/contract/descriptor.ts';
import { SOURCE_TAGS } from '../../../lib/sources/clouds/ids.ts';
import { NoticeParseError, SOURCE_LABELS } from '../../../lib/sources/clouds/notice.ts';
import { DEFAULT_NOTICE_POLICY, describePolicy } from '../../../lib/sources/clouds/policy.ts';
import { CLOUD_AGENTS } from '../../../lib/sources/clouds/registry/agents.ts';
import {
  CLOUD_DESCRIPTORS,
  CLOUDS,
  missingParts,
  sourceFacts,
} from '../../../lib/sources/clouds/registry/descriptors.ts';
import { AGENT_SETTINGS } from '../../../lib/sources/clouds/registry/settings.ts';
import { parseNoticeDocument } from '../../../lib/sources/node-agent/parse.ts';

const isInstanceProvider = (provider: string): provider is InstanceProvider =>
  (INSTANCE_PROVIDERS as readonly string[]).includes(provider);

describe('cloud descriptors', () => {
  it("one per provider, and every source in exactly one (its provider's)", () => {
    assert.deepEqual(CLOUD_DESCRIPTORS.map((cloud) => cloud.provider).sort(), [...NOTICE_PROVIDERS].sort());
    const sources = sourceFacts().map(([source]) => source);
    assert.deepEqual([...sources].sort(), [...NOTICE_SOURCES].sort(), 'each source once');
  });

  it('each is complete', () => {
    for (const cloud of CLOUD_DESCRIPTORS) assert.deepEqual(missingParts(cloud), [], cloud.provider);
  });

  it('a descriptor that lacks a part, or gets one wrong, is named for it', () => {
    const gcp: AnyCloud = CLOUDS.gcp;
    const { preempted: _dropped, ...rules } = gcp.policy;
    assert.deepEqual(missingParts({ ...gcp, policy: rules }), ['notice type preempted: no default rule']);
    assert.deepEqual(missingParts({ ...gcp, docs: [] }), ['no provider page named']);
    assert.deepEqual(missingParts({ ...gcp, providerIdScheme: 'gce' }), ['no providerID scheme (`<scheme>://`)']);
    const unlabelled = {
      ...gcp.sources,
      'gcp-preempted': { label: '', tag: 'preempted', arrives: 'metadata' as const },
    };
    assert.deepEqual(missingParts({ ...gcp, sources: unlabelled }), ['source gcp-preempted: no label']);
    assert.deepEqual(missingParts({ ...gcp, sources: {} }), ['no source']);
    const { preempted: _setting, ...settings } = CLOUDS.gcp.settings;
    assert.deepEqual(missingParts({ ...gcp, settings }), [
      'source gcp-preempted: opted in by DRAINBRIDGE_AGENT_GCP_PREEMPTED, not a setting of the cloud',
    ]);
    const { baseUrl: _url, ...noUrl } = CLOUDS.gcp.settings;
    assert.deepEqual(missingParts({ ...gcp, settings: noUrl }), ['no metadata base URL setting']);
    assert.deepEqual(missingParts({ ...gcp, noticeTypes: gcp.noticeTypes.slice(0, 3) }), [
      'rule preempted: not one of the notice types',
    ]);
  });

  it("the shared tables are the descriptors' own", () => {
    for (const [source, facts] of sourceFacts()) {
      assert.equal(SOURCE_LABELS[source], facts.label, source);
      assert.equal(SOURCE_TAGS[source], facts.tag, source);
    }
    for (const cloud of CLOUD_DESCRIPTORS) {
      assert.equal(AGENT_SETTINGS[cloud.provider], cloud.settings, `${cloud.provider}: the agent's settings`);
      // Every cloud names instances (the bus contract's `instance`), resolved by the scheme its descriptor carries.
      assert.ok(isInstanceProvider(cloud.provider), `${cloud.provider}: an instance provider`);
      assert.equal(PROVIDER_ID_SCHEMES[cloud.provider], cloud.providerIdScheme, `${cloud.provider}: resolve.ts agrees`);
      assert.equal(DEFAULT_NOTICE_POLICY[cloud.provider], cloud.policy);
    }
    assert.equal(
      describePolicy().length,
      CLOUD_DESCRIPTORS.reduce((n, cloud) => n + cloud.noticeTypes.length, 0),
    );
  });

  it("each cloud's agent part: its provider's, a parser for each metadata source, none for an event-bus one", () => {
    assert.deepEqual(Object.keys(CLOUD_AGENTS).sort(), [...NOTICE_PROVIDERS].sort());
    for (const cloud of CLOUD_DESCRIPTORS) {
      const agent = CLOUD_AGENTS[cloud.provider];
      assert.equal(agent.provider, cloud.provider);
      assert.equal(typeof agent.loops, 'function', `${cloud.provider}: loops`);
      const parsers = agent.parse as Readonly<Record<string, unknown>>;
      assert.deepEqual(
        Object.keys(parsers).sort(),
        Object.keys(cloud.sources).sort(),
        `${cloud.provider}: one per source`,
      );
      for (const [source, facts] of Object.entries(cloud.sources)) {
        const expected = facts?.arrives === 'metadata' ? 'function' : 'object';
        assert.equal(typeof parsers[source], expected, `${source}: ${facts?.arrives}`);
      }
    }
  });

  it('a rule that approves events is refused for a cloud that cannot approve them', () => {
    const azure: AnyCloud = CLOUDS.azure;
    assert.deepEqual(missingParts(azure), []);
    const problems = missingParts({ ...azure, approvesEvents: false });
    assert.ok(
      problems.length > 0 && problems.every((p) => p.endsWith('approves an event the cloud cannot approve')),
      problems.join('; '),
    );
  });

  it('every metadata document has a parser, and an event-bus source is said not to be one', () => {
    for (const [source, facts] of sourceFacts()) {
      try {
        parseNoticeDocument(source, 'not a document', 'etag');
      } catch (error) {
        if (facts.arrives === 'metadata') assert.ok(error instanceof NoticeParseError, `${source}: ${error}`);
        else assert.match((error as DrainbridgeError).message, /is not a metadata document/, source);
      }
    }
  });
});
