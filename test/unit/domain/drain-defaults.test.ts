/**
 * The drain options of an evacuation nobody typed flags for (lib/model/drain-defaults.ts): per origin,
 * what wins over what, and docs/drain-defaults.md's table against the code's.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { ORIGIN_DRAIN_DEFAULTS, resolveDrainOptions } from '../../../lib/model/drain-defaults.ts';
import { NOTICE_PROVIDERS } from '../../../lib/model/notice.ts';
import { KUBECTL_DRAIN_DEFAULTS, ORIGINS, type Origin } from '../../../lib/model/request.ts';
import { acceptRequest } from '../../../lib/workflow/accept.ts';

/** What each origin takes with nothing set anywhere: the table of docs/drain-defaults.md. */
const EXPECTED: Record<Origin, { ignoreDaemonSets: boolean; deleteEmptyDirData: boolean; force: boolean }> = {
  cordon: { ignoreDaemonSets: true, deleteEmptyDirData: false, force: false },
  manual: { ignoreDaemonSets: true, deleteEmptyDirData: false, force: false },
  'node-maintenance': { ignoreDaemonSets: true, deleteEmptyDirData: true, force: true },
  aws: { ignoreDaemonSets: true, deleteEmptyDirData: true, force: true },
  azure: { ignoreDaemonSets: true, deleteEmptyDirData: true, force: true },
  gcp: { ignoreDaemonSets: true, deleteEmptyDirData: true, force: true },
  alibaba: { ignoreDaemonSets: true, deleteEmptyDirData: true, force: true },
  schedule: { ignoreDaemonSets: true, deleteEmptyDirData: true, force: true },
};

describe('drain options per origin', () => {
  for (const origin of ORIGINS) {
    it(`${origin}: nothing set → its defaults over kubectl's; DaemonSet pods never block`, () => {
      const options = resolveDrainOptions(origin, {}, undefined);
      assert.deepEqual(options, { ...KUBECTL_DRAIN_DEFAULTS, ...EXPECTED[origin] });
      assert.equal(options.ignoreDaemonSets, true);
      assert.equal(options.disableEviction, false, 'no origin deletes where eviction is possible');
    });

    it(`${origin}: the operator's setting wins over the origin, the request's over both`, () => {
      const flip = !EXPECTED[origin].force;
      assert.equal(resolveDrainOptions(origin, { force: flip }, undefined).force, flip);
      assert.equal(resolveDrainOptions(origin, { ignoreDaemonSets: false }, undefined).ignoreDaemonSets, false);
      const both = resolveDrainOptions(origin, { force: flip, gracePeriodSeconds: 30 }, { force: !flip });
      assert.equal(both.force, !flip, 'the request wins');
      assert.equal(both.gracePeriodSeconds, 30, 'the operator still sets what the request leaves out');
      assert.equal(both.deleteEmptyDirData, EXPECTED[origin].deleteEmptyDirData, 'the origin what both leave out');
    });
  }

  it('an option given as undefined sets nothing', () => {
    const options = resolveDrainOptions('cordon', { force: undefined }, { deleteEmptyDirData: undefined });
    assert.equal(options.force, false);
    assert.equal(options.deleteEmptyDirData, false);
  });

  it('docs/drain-defaults.md shows the same table (one `<cloud>` row for every cloud origin)', () => {
    const text = readFileSync(new URL('../../../docs/drain-defaults.md', import.meta.url), 'utf8');
    const rows = new Map(
      [...text.matchAll(/^\| `([a-z<>-]+)` +\|[^|]+\| (true|false) +\| (true|false) +\| (true|false) +\|$/gm)].map(
        (m) => [
          m[1],
          { ignoreDaemonSets: m[2] === 'true', deleteEmptyDirData: m[3] === 'true', force: m[4] === 'true' },
        ],
      ),
    );
    const isCloud = (origin: string) => (NOTICE_PROVIDERS as readonly string[]).includes(origin);
    const rowOf = (origin: Origin) => (isCloud(origin) ? '<cloud>' : origin);
    assert.deepEqual([...rows.keys()].sort(), [...new Set(ORIGINS.map(rowOf))].sort());
    for (const origin of ORIGINS) {
      const code = { ...KUBECTL_DRAIN_DEFAULTS, ...ORIGIN_DRAIN_DEFAULTS[origin].drain };
      const { ignoreDaemonSets, deleteEmptyDirData, force } = code;
      assert.deepEqual(rows.get(rowOf(origin)), { ignoreDaemonSets, deleteEmptyDirData, force }, origin);
    }
  });
});

describe('accepting a request: its origin decides what nobody set', () => {
  const cordoned = {
    version: '1',
    requestId: 'cordon.node-2.0123456789ab',
    requester: 'kubectl',
    target: { nodeName: 'node-2' },
    observedAt: '2026-11-21T10:00:00Z',
  };
  const requested = (origin: Origin, drain?: Record<string, unknown>) => ({
    'detail-type': 'Maintenance Requested',
    detail: {
      version: '1',
      requestId: `${origin}-1`,
      requester: 'someone',
      origin,
      target: { nodeName: 'node-1' },
      reason: 'test',
      ...(drain ? { drain } : {}),
    },
  });

  it('a cordon skips DaemonSet pods and keeps emptyDir and bare pods', () => {
    const request = acceptRequest('evacuate', { 'detail-type': 'Node Cordoned', detail: cordoned }, {});
    assert.equal(request.origin, 'cordon');
    assert.deepEqual(request.drain, { ...KUBECTL_DRAIN_DEFAULTS, ignoreDaemonSets: true });
  });

  it("a cordon takes the forwarder's drain flags carried on the event, over the operator's", () => {
    const event = { 'detail-type': 'Node Cordoned', detail: { ...cordoned, drain: { force: true } } };
    const request = acceptRequest('evacuate', event, { force: false, gracePeriodSeconds: 10 });
    assert.equal(request.drain.force, true);
    assert.equal(request.drain.gracePeriodSeconds, 10);
  });

  it('a request sent by hand without drain (serverless invoke) is a manual one', () => {
    assert.deepEqual(acceptRequest('evacuate', requested('manual'), {}).drain, {
      ...KUBECTL_DRAIN_DEFAULTS,
      ignoreDaemonSets: true,
    });
  });

  it('a cloud notice, a NodeMaintenance, a window: NMO and NTH options', () => {
    for (const origin of ['aws', 'azure', 'gcp', 'node-maintenance', 'schedule'] as const) {
      const { drain } = acceptRequest('evacuate', requested(origin), {});
      assert.deepEqual(drain, {
        ...KUBECTL_DRAIN_DEFAULTS,
        ignoreDaemonSets: true,
        deleteEmptyDirData: true,
        force: true,
      });
    }
  });

  it("DRAINBRIDGE_DRAIN_* set by the operator wins over the origin; the event's drain over both", () => {
    assert.equal(acceptRequest('evacuate', requested('aws'), { force: false }).drain.force, false);
    assert.equal(acceptRequest('evacuate', requested('aws', { force: true }), { force: false }).drain.force, true);
  });
});
