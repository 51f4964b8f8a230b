/**
 * Bad input from the clouds: every malformed provider document (test/unit/sources/malformed.ts: Azure
 * Scheduled Events, EC2 metadata notices, GCE maintenance events) is refused by the parser with a clear
 * error naming the field, and — served by the provider's fake metadata server and read by the real node
 * agent over HTTP against the simulator — publishes nothing and writes nothing (the request log is read).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { NoticeSource } from '../../../lib/model/notice.ts';
import { NoticeParseError } from '../../../lib/sources/clouds/notice.ts';
import { parseNoticeDocument } from '../../../lib/sources/node-agent/parse.ts';
import { FakeAzureMetadata, FakeEc2Metadata, FakeGceMetadata } from '../../../sim/metadata/index.ts';
import { type AgentCluster, AZURE_NODES, runAgent, startAgentCluster, testConfig } from '../../sources/harness.ts';
import { assertCleanError } from '../../support/clean-error.ts';
import { assertNoWrites } from '../../support/request-log.ts';
import { waitUntil } from '../../support/wait.ts';
import { MALFORMED } from '../../unit/sources/malformed.ts';

const EC2_PATHS: Partial<Record<NoticeSource, string>> = {
  'aws-scheduled-events': '/latest/meta-data/events/maintenance/scheduled',
  'aws-spot-instance-action': '/latest/meta-data/spot/instance-action',
  'aws-rebalance-recommendation': '/latest/meta-data/events/recommendations/rebalance',
};

/** The fake metadata server of the document's provider, serving it; and the agent's environment for it. */
async function serve(source: NoticeSource, body: string) {
  const base = { DRAINBRIDGE_NODE_NAME: 'node-1' };
  if (source.startsWith('azure')) {
    const fake = await FakeAzureMetadata.start();
    fake.serveRaw(body);
    const env = { ...base, DRAINBRIDGE_AGENT_PROVIDER: 'azure', DRAINBRIDGE_AGENT_AZURE_URL: fake.url };
    return { env, stop: () => fake.server.stop() };
  }
  if (source.startsWith('aws')) {
    const fake = await FakeEc2Metadata.start();
    fake.serveRaw(EC2_PATHS[source] as string, body);
    const env = {
      ...base,
      DRAINBRIDGE_AGENT_PROVIDER: 'aws',
      DRAINBRIDGE_AGENT_AWS_URL: fake.url,
      DRAINBRIDGE_AGENT_AWS_SPOT: 'true',
      DRAINBRIDGE_AGENT_AWS_REBALANCE: 'true',
    };
    return { env, stop: () => fake.server.stop() };
  }
  const fake = await FakeGceMetadata.start();
  if (source === 'gcp-maintenance-event') fake.setMaintenanceEvent(body);
  else fake.serveRawUpcoming(body);
  const env = {
    ...base,
    DRAINBRIDGE_AGENT_PROVIDER: 'gcp',
    DRAINBRIDGE_AGENT_GCP_URL: fake.url,
    DRAINBRIDGE_AGENT_GCP_UPCOMING: 'true',
  };
  return { env, stop: () => fake.server.stop() };
}

/** The parser's refusal of `body` (thrown, or the last rejected event of an otherwise readable document). */
function refusal(source: NoticeSource, body: string): NoticeParseError {
  try {
    const parsed = parseNoticeDocument(source, body, 'etag-1');
    assert.deepEqual(parsed.notices, [], 'no notice from a malformed document');
    const last = parsed.rejected.at(-1);
    assert.ok(last instanceof NoticeParseError, 'the event is rejected');
    return last;
  } catch (error) {
    assert.ok(error instanceof NoticeParseError, `a NoticeParseError, not ${String(error)}`);
    return error;
  }
}

let cluster: AgentCluster;
before(async () => {
  cluster = await startAgentCluster(AZURE_NODES);
});
after(async () => {
  await cluster?.stop();
});

describe('bad input from the clouds: malformed notice documents', () => {
  for (const c of MALFORMED) {
    it(`${c.source}: ${c.name}`, async () => {
      assertCleanError(refusal(c.source, c.body).message, [c.names], `the parser refusing ${c.name}`);
      const fake = await serve(c.source, c.body);
      const mark = cluster.sim.requestLog.mark();
      const { agent, publisher, metrics, logger } = runAgent(testConfig(fake.env), cluster.kube);
      try {
        await waitUntil('two reads of the document failed', () => metrics.get('parseErrors', c.source) >= 2);
        assert.deepEqual(publisher.events, [], 'nothing published');
        const logged = logger.lines.filter((line) => String(line.extra.reason ?? '').includes(c.names));
        assert.ok(logged.length > 0, 'the agent logs the problem');
        for (const line of logged) assertCleanError(`${line.message}: ${String(line.extra.reason)}`, [c.names]);
      } finally {
        await agent.stop();
        await fake.stop();
      }
      assertNoWrites(cluster.sim, mark, `the agent reading ${c.name}`);
    });
  }
});
