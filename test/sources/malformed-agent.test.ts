/**
 * Every malformed document of test/unit/sources/malformed.ts, served by the fake metadata server of its
 * provider and read by the real agent over HTTP: nothing is published, the parse error is counted and
 * logged once, naming the field.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { NoticeSource } from '../../lib/model/notice.ts';
import { FakeAzureMetadata, FakeEc2Metadata, FakeGceMetadata } from '../../sim/metadata/index.ts';
import { waitUntil } from '../support/wait.ts';
import { MALFORMED } from '../unit/sources/malformed.ts';
import { type AgentCluster, AZURE_NODES, runAgent, startAgentCluster, testConfig } from './harness.ts';

let cluster: AgentCluster;
before(async () => {
  cluster = await startAgentCluster(AZURE_NODES);
});
after(async () => {
  await cluster.stop();
});

const EC2_PATHS: Partial<Record<NoticeSource, string>> = {
  'aws-scheduled-events': '/latest/meta-data/events/maintenance/scheduled',
  'aws-spot-instance-action': '/latest/meta-data/spot/instance-action',
  'aws-rebalance-recommendation': '/latest/meta-data/events/recommendations/rebalance',
};

/** Starts the fake of the case's provider serving the malformed body; returns the agent's environment. */
async function serve(
  source: NoticeSource,
  body: string,
): Promise<{ env: Record<string, string>; stop: () => Promise<void> }> {
  const base = { DRAINBRIDGE_NODE_NAME: 'node-1' };
  if (source.startsWith('azure')) {
    const fake = await FakeAzureMetadata.start();
    fake.serveRaw(body);
    return {
      env: { ...base, DRAINBRIDGE_AGENT_PROVIDER: 'azure', DRAINBRIDGE_AGENT_AZURE_URL: fake.url },
      stop: () => fake.server.stop(),
    };
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
  return {
    env: {
      ...base,
      DRAINBRIDGE_AGENT_PROVIDER: 'gcp',
      DRAINBRIDGE_AGENT_GCP_URL: fake.url,
      DRAINBRIDGE_AGENT_GCP_UPCOMING: 'true',
    },
    stop: () => fake.server.stop(),
  };
}

describe('malformed documents read by the agent over HTTP', () => {
  for (const c of MALFORMED) {
    it(`${c.name}: nothing published, one parse error counted per read, logged once`, async () => {
      const fake = await serve(c.source, c.body);
      const { agent, publisher, metrics, logger } = runAgent(testConfig(fake.env), cluster.kube);
      try {
        await waitUntil(
          'three reads of the malformed document failed',
          () => metrics.get('parseErrors', c.source) >= 3,
        );
        assert.deepEqual(publisher.events, []);
        const logged = logger.lines.filter(
          // A whole document refused, or its one event skipped: either way the line names the field.
          (l) => l.message.startsWith('malformed ') && String(l.extra.reason).includes(c.names),
        );
        assert.equal(logged.length, 1, `the problem naming "${c.names}" is logged, once`);
      } finally {
        await agent.stop();
        await fake.stop();
      }
    });
  }
});
