/**
 * The providers' documented documents (test/fixtures/notices/) served by the fake metadata servers and
 * read by the real agent over HTTP, one sequence per provider: Azure's Scheduled Events article example
 * (incarnation 2 scheduled → 3 started → 4 gone), EC2's IMDS scheduled-event example (active →
 * completed) and spot instance-action example, and GCE's upcoming-maintenance example (→ nothing
 * scheduled, both ways a VM says so).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  type AzureScheduledEvent,
  FakeAzureMetadata,
  FakeEc2Metadata,
  FakeGceMetadata,
} from '../../sim/metadata/index.ts';
import { waitUntil } from '../support/wait.ts';
import { fixture } from '../unit/sources/fixtures.ts';
import { type AgentCluster, AZURE_NODES, runAgent, startAgentCluster, testConfig } from './harness.ts';

type AzureDocument = { DocumentIncarnation: number; Events: AzureScheduledEvent[] };

let cluster: AgentCluster;
before(async () => {
  cluster = await startAgentCluster(AZURE_NODES);
});
after(() => cluster.stop());

describe('node agent: the documented example documents, served over HTTP', () => {
  it('Azure: the Freeze example (two VMs) scheduled → started → gone, with Freeze evacuated by the policy', async () => {
    const imds = await FakeAzureMetadata.start({ vmName: 'WestNO_0' });
    const scheduled = fixture<AzureDocument>('azure/freeze-two-vms-scheduled.json');
    imds.setDocument(scheduled);
    const { agent, publisher, logger } = runAgent(
      testConfig({
        DRAINBRIDGE_NODE_NAME: 'node-3',
        DRAINBRIDGE_AGENT_PROVIDER: 'azure',
        DRAINBRIDGE_AGENT_AZURE_URL: imds.url,
        DRAINBRIDGE_NOTICE_POLICY: '{"azure":{"Freeze":{"action":"evacuate"}}}',
      }),
      cluster.kube,
    );
    const eventId = scheduled.Events[0]?.EventId as string;
    try {
      await waitUntil('requested', () => publisher.of('Maintenance Requested').length === 1);
      const [requested] = publisher.of('Maintenance Requested');
      assert.equal(requested?.requestId, `azure:node-3:se:${eventId}`);
      assert.equal(requested?.notBefore, '2026-04-11T22:26:58.000Z');
      assert.match(String(requested?.reason), /memory-preserving Live Migration/);

      imds.setDocument(fixture<AzureDocument>('azure/freeze-two-vms-started.json'));
      await waitUntil('incarnation 3 read', () => logger.has('document handled', (e) => e.version === '3'));
      assert.equal(publisher.events.length, 1, 'started: the same request, nothing new');

      imds.setDocument(fixture<AzureDocument>('azure/no-events.json'));
      await waitUntil('ended', () => publisher.of('Maintenance Ended').length === 1);
      assert.equal(publisher.of('Maintenance Ended')[0]?.requestId, requested?.requestId);
    } finally {
      await agent.stop();
      await imds.server.stop();
    }
  });

  it('Azure: the user-initiated Reboot example of another VM is not this node’s', async () => {
    const imds = await FakeAzureMetadata.start({ vmName: 'WestNO_0' });
    imds.setDocument(fixture<AzureDocument>('azure/reboot-user.json'));
    const { agent, publisher } = runAgent(
      testConfig({
        DRAINBRIDGE_NODE_NAME: 'node-3',
        DRAINBRIDGE_AGENT_PROVIDER: 'azure',
        DRAINBRIDGE_AGENT_AZURE_URL: imds.url,
      }),
      cluster.kube,
    );
    try {
      const reads = imds.server.requestsTo('/metadata/scheduledevents', 'GET').length;
      await waitUntil(
        'three reads',
        () => imds.server.requestsTo('/metadata/scheduledevents', 'GET').length >= reads + 3,
      );
      assert.deepEqual(publisher.events, [], 'flatcar-vm1 is not node-3');
    } finally {
      await agent.stop();
      await imds.server.stop();
    }
  });

  it('AWS: the IMDS scheduled system-reboot example → requested; completed → ended; the spot instance-action example', async () => {
    const imds = await FakeEc2Metadata.start({ instanceId: 'i-abcd1111' });
    type Ec2Events = Parameters<FakeEc2Metadata['setScheduledEvents']>[0];
    imds.setScheduledEvents(fixture<Ec2Events>('aws/scheduled-system-reboot.json'));
    imds.setSpotInstanceAction(fixture<{ action: string; time: string }>('aws/spot-instance-action.json'));
    const { agent, publisher } = runAgent(
      testConfig({
        DRAINBRIDGE_NODE_NAME: 'node-1',
        DRAINBRIDGE_AGENT_PROVIDER: 'aws',
        DRAINBRIDGE_AGENT_AWS_URL: imds.url,
        DRAINBRIDGE_AGENT_AWS_SPOT: 'true',
      }),
      cluster.kube,
    );
    try {
      await waitUntil('both requested', () => publisher.of('Maintenance Requested').length === 2);
      const byId = new Map(publisher.of('Maintenance Requested').map((e) => [e.requestId, e]));
      const scheduled = byId.get('aws:node-1:scheduled:instance-event-0d59937288b749b32');
      assert.equal(scheduled?.notBefore, '2019-01-21T09:00:43.000Z');
      assert.equal(scheduled?.deadline, undefined, 'the end of the example is long past: no deadline');
      const spot = [...byId.values()].find((e) => String(e.requestId).startsWith('aws:node-1:spot:'));
      assert.equal((spot?.notice as { eventType?: string } | undefined)?.eventType, 'terminate');
      assert.equal(spot?.deadline, undefined, 'the action time of the example is long past: no deadline');

      imds.setScheduledEvents(fixture<Ec2Events>('aws/scheduled-completed.json'));
      await waitUntil('ended', () => publisher.of('Maintenance Ended').length === 1);
      assert.equal(publisher.of('Maintenance Ended')[0]?.requestId, scheduled?.requestId);
    } finally {
      await agent.stop();
      await imds.server.stop();
    }
  });

  for (const nothing of ['gcp/upcoming-none.json', 'gcp/upcoming-no-notifications.json']) {
    it(`GCP: the upcoming-maintenance example → requested for its window; ${nothing} → ended`, async () => {
      const metadata = await FakeGceMetadata.start();
      metadata.setUpcomingMaintenance(fixture('gcp/upcoming-maintenance.json'));
      const config = testConfig({
        DRAINBRIDGE_NODE_NAME: 'node-1',
        DRAINBRIDGE_AGENT_PROVIDER: 'gcp',
        DRAINBRIDGE_AGENT_GCP_URL: metadata.url,
      });
      const { agent, publisher } = runAgent(
        { ...config, gcp: { ...config.gcp, upcomingPollSeconds: 0.05 } },
        cluster.kube,
      );
      try {
        await waitUntil('requested', () => publisher.of('Maintenance Requested').length === 1);
        const [requested] = publisher.of('Maintenance Requested');
        assert.equal(requested?.requestId, 'gcp:node-1:upcoming:upcoming-2024-12-01T19-00-01.000Z');
        assert.equal(requested?.notBefore, '2024-12-01T19:00:01.000Z');
        assert.equal(requested?.deadline, undefined, 'the end of the example window is past: no deadline');
        assert.equal((requested?.notice as { eventType?: string } | undefined)?.eventType, 'SCHEDULED');
        metadata.setUpcomingMaintenance(fixture(nothing));
        await waitUntil('ended', () => publisher.of('Maintenance Ended').length === 1);
      } finally {
        await agent.stop();
        await metadata.server.stop();
      }
    });
  }
});
