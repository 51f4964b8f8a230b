/**
 * The date forms the clouds really send, served by the fake metadata servers and read by the real agent
 * over HTTP (issue 21, item 4): Microsoft's Scheduled Events mock server writes ISO 8601 `NotBefore`;
 * EC2 events without `NotAfter`, with `"NotAfter": ""` (AWS NTH #147/#182/#361) and with RFC 3339
 * dates. A document whose one event cannot be read still counts for its other events; the bad one is
 * logged naming its field and counted. Fixtures: test/fixtures/notices/README.md names each source.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type AzureScheduledEvent, FakeAzureMetadata, FakeEc2Metadata } from '../../sim/metadata/index.ts';
import { waitUntil } from '../support/wait.ts';
import { fixture } from '../unit/sources/fixtures.ts';
import { type AgentCluster, AWS_NODES, AZURE_NODES, runAgent, startAgentCluster, testConfig } from './harness.ts';

type AzureDocument = { DocumentIncarnation: number; Events: AzureScheduledEvent[] };
type Ec2Events = Parameters<FakeEc2Metadata['setScheduledEvents']>[0];

let cluster: AgentCluster;
before(async () => {
  cluster = await startAgentCluster([...AZURE_NODES, { name: 'node-4', providerID: AWS_NODES[0]?.providerID ?? '' }]);
});
after(() => cluster.stop());

async function azureAgent(document: AzureDocument) {
  // The mock's default resource, `vmss_vm1`, is this VM's IMDS compute/name.
  const imds = await FakeAzureMetadata.start({ vmName: 'vmss_vm1' });
  imds.setDocument(document);
  const running = runAgent(
    testConfig({
      DRAINBRIDGE_NODE_NAME: 'node-3',
      DRAINBRIDGE_AGENT_PROVIDER: 'azure',
      DRAINBRIDGE_AGENT_AZURE_URL: imds.url,
    }),
    cluster.kube,
  );
  return {
    ...running,
    imds,
    stop: async () => {
      await running.agent.stop();
      await imds.server.stop();
    },
  };
}

describe('node agent: dates as the clouds and their official tools write them', () => {
  it("Azure: Microsoft's mock server's ISO 8601 NotBefore is acted on", async () => {
    const document = fixture<AzureDocument>('azure/mock-server-reboot-scheduled.json');
    const run = await azureAgent(document);
    try {
      await waitUntil('requested', () => run.publisher.of('Maintenance Requested').length === 1);
      const [requested] = run.publisher.of('Maintenance Requested');
      assert.equal(requested?.requestId, `azure:node-3:se:${document.Events[0]?.EventId}`);
      assert.equal(requested?.notBefore, '2025-11-05T20:19:11.000Z');
      assert.equal(run.metrics.get('parseErrors'), 0);
    } finally {
      await run.stop();
    }
  });

  it('Azure: one unreadable event does not hide the other; it is logged naming its field and counted', async () => {
    const document = fixture<AzureDocument>('azure/mock-server-reboot-scheduled.json');
    const unreadable: AzureScheduledEvent = {
      ...(document.Events[0] as AzureScheduledEvent),
      EventId: '0e8d1c2b-3a4f-4b5c-8d6e-7f8091a2b3c4',
      EventType: 'Redeploy',
      NotBefore: 'tomorrow 10:00',
    };
    const run = await azureAgent({ ...document, Events: [...document.Events, unreadable] });
    try {
      await waitUntil('requested', () => run.publisher.of('Maintenance Requested').length === 1);
      await waitUntil('the bad event counted', () => run.metrics.get('parseErrors', 'azure-scheduled-events') >= 1);
      assert.equal(
        run.publisher.of('Maintenance Requested')[0]?.requestId,
        `azure:node-3:se:${document.Events[0]?.EventId}`,
      );
      const logged = run.logger.lines.filter((line) => line.message.startsWith('malformed event skipped'));
      assert.equal(logged.length, 1, 'logged once while it persists');
      assert.match(String(logged[0]?.extra.reason), /Events\[1\]\.NotBefore: must be a date such as/);
      // While an event is unreadable nothing counts as gone: removing the good one ends nothing yet.
      const reads = () => run.imds.server.requestsTo('/metadata/scheduledevents', 'GET').length;
      run.imds.setDocument({ DocumentIncarnation: 9, Events: [unreadable] });
      const before = reads();
      await waitUntil('three more reads', () => reads() >= before + 3);
      assert.deepEqual(run.publisher.of('Maintenance Ended'), []);
    } finally {
      await run.stop();
    }
  });

  const ec2Cases = [
    { file: 'aws/scheduled-instance-stop-no-end.json', notBefore: '2021-02-25T02:00:00.000Z' },
    { file: 'aws/scheduled-instance-stop-empty-end.json', notBefore: '2020-12-28T06:00:00.000Z' },
    { file: 'aws/scheduled-instance-reboot-rfc3339.json', notBefore: '2022-07-19T22:25:00.000Z' },
  ];
  for (const { file, notBefore } of ec2Cases) {
    it(`EC2: ${file} is requested for its NotBefore`, async () => {
      const imds = await FakeEc2Metadata.start({ instanceId: 'i-abcd1111' });
      const events = fixture<Ec2Events>(file);
      imds.setScheduledEvents(events);
      const { agent, publisher, metrics } = runAgent(
        testConfig({
          DRAINBRIDGE_NODE_NAME: 'node-4',
          DRAINBRIDGE_AGENT_PROVIDER: 'aws',
          DRAINBRIDGE_AGENT_AWS_URL: imds.url,
        }),
        cluster.kube,
      );
      try {
        await waitUntil('requested', () => publisher.of('Maintenance Requested').length === 1);
        const [requested] = publisher.of('Maintenance Requested');
        assert.equal(requested?.requestId, `aws:node-4:scheduled:${events[0]?.EventId}`);
        assert.equal(requested?.notBefore, notBefore);
        assert.equal(metrics.get('parseErrors'), 0);
      } finally {
        await agent.stop();
        await imds.server.stop();
      }
    });
  }
});

describe('node agent: timeouts from the provider', () => {
  it('Azure: the first Scheduled Events read waits while the service enables itself (Microsoft: up to two minutes)', async () => {
    // The default agent timeout is 2 s; this service takes 3 s to answer its first request.
    const imds = await FakeAzureMetadata.start({ vmName: 'vmss_vm1', enablingMs: 3_000 });
    imds.setDocument(fixture<AzureDocument>('azure/mock-server-reboot-scheduled.json'));
    const config = testConfig({
      DRAINBRIDGE_NODE_NAME: 'node-3',
      DRAINBRIDGE_AGENT_PROVIDER: 'azure',
      DRAINBRIDGE_AGENT_AZURE_URL: imds.url,
    });
    assert.equal(config.timeoutMs, 2_000, 'the default timeout, shorter than the enabling');
    const { agent, publisher, metrics, logger } = runAgent(config, cluster.kube);
    try {
      await waitUntil('requested', () => publisher.of('Maintenance Requested').length === 1, 15_000);
      assert.equal(imds.requestsWhileEnabling, 1, 'one request, waited for: not given up after 2 s and sent again');
      assert.equal(metrics.get('failures'), 0);
      assert.equal(logger.has('reading the notices failed; trying again'), false);
    } finally {
      await agent.stop();
      await imds.server.stop();
    }
  });
});
