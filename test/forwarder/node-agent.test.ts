/**
 * `drainbridge forwarder --node-agent` as the DaemonSet runs it: a real child process (the TypeScript
 * sources) per node, reading a fake metadata service over HTTP (sim/metadata), the cluster as the
 * deploy/ node-agent ServiceAccount (read-only RBAC), publishing with the real AWS SDK to a local
 * PutEvents endpoint (sim/eventbridge) in front of the in-process bus. For each cloud: a notice appears →
 * `Maintenance Requested` for this node on the bus; it is over → `Maintenance Ended` with the same
 * requestId; the agent's counters on /metrics; SIGTERM → exit 0. On Azure also the approval: only once
 * drainbridge drained the node for that very event (the Evacuation record, the node's phase and hold).
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { InProcessBus } from '../../lib/bus/in-process-bus.ts';
import { evacuationName } from '../../lib/clients/kube/paths.ts';
import { LEDGER_ANNOTATION } from '../../lib/node/ledger.ts';
import { PHASE_ANNOTATION } from '../../lib/node/phase.ts';
import { formatEc2ImdsDate, formatRfc1123 } from '../../lib/sources/clouds/dates.ts';
import { type EventBridgeEndpoint, startEventBridgeEndpoint } from '../../sim/eventbridge/endpoint.ts';
import type { KubeObject } from '../../sim/index.ts';
import { FakeAzureMetadata, FakeEc2Metadata, FakeGceMetadata } from '../../sim/metadata/index.ts';
import { waitUntil } from '../support/wait.ts';
import { DrainbridgeProcess, metric, NODE_AGENT_USER, scrape, startTestCluster, type TestCluster } from './harness.ts';

const AZURE_VMSS =
  'azure:///subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/mc_rg/providers/Microsoft.Compute/virtualMachineScaleSets/aks-pool-12345678-vmss/virtualMachines';

/** One node per cloud, each with the providerID its cloud gives it. */
const SCENARIO = {
  name: 'node-agents',
  speed: 20,
  nodes: [
    { name: 'node-aws', providerID: 'aws:///eu-west-1a/i-0abc1111' },
    { name: 'node-azure', providerID: `${AZURE_VMSS}/1` },
    { name: 'node-gcp', providerID: 'gce://my-project/europe-west1-b/node-gcp' },
  ],
};

describe('drainbridge forwarder --node-agent: notices on the bus through the real SDK', () => {
  let cluster: TestCluster;
  let bus: InProcessBus;
  let endpoint: EventBridgeEndpoint;
  let kubeconfig: string;
  let agent: DrainbridgeProcess | undefined;

  before(async () => {
    cluster = await startTestCluster(SCENARIO);
    kubeconfig = await cluster.kubeconfigFor('drainbridge-node-agent');
    bus = new InProcessBus({ rules: [], busName: 'drainbridge', start: async () => undefined });
    endpoint = await startEventBridgeEndpoint(bus);
  });
  afterEach(async () => {
    agent?.kill('SIGKILL');
    await agent?.exited;
    agent = undefined;
  });
  after(async () => {
    await endpoint?.close();
    await cluster?.stop();
  });

  function startAgent(
    node: string,
    provider: string,
    env: Record<string, string>,
    flags: readonly string[] = [],
  ): DrainbridgeProcess {
    return new DrainbridgeProcess(
      [
        'forwarder',
        '--node-agent',
        '--node',
        node,
        '--provider',
        provider,
        '--kubeconfig',
        kubeconfig,
        '--metrics-address',
        '127.0.0.1:0',
        ...flags,
      ],
      {
        AWS_ENDPOINT_URL_EVENTBRIDGE: endpoint.url,
        AWS_REGION: 'eu-west-1',
        AWS_ACCESS_KEY_ID: 'AKIDTEST',
        AWS_SECRET_ACCESS_KEY: 'test-secret',
        DRAINBRIDGE_AGENT_POLL_SECONDS: '1',
        ...env,
      },
    );
  }

  /** The events on the bus for `requestId`, by detail-type. */
  const onBus = (detailType: string, requestId: string) =>
    bus.accepted.filter((e) => e['detail-type'] === detailType && e.detail.requestId === requestId);

  async function stopsCleanly(process: DrainbridgeProcess): Promise<void> {
    process.kill('SIGTERM');
    assert.deepEqual(await process.exited, { code: 0, signal: null }, process.output.slice(-10).join('\n'));
  }

  it('AWS (IMDSv2): a scheduled system-reboot → Maintenance Requested; completed → Maintenance Ended', async () => {
    const imds = await FakeEc2Metadata.start({ instanceId: 'i-0abc1111' });
    try {
      const start = new Date(Date.now() + 3_600_000);
      const event = {
        Code: 'system-reboot',
        Description: 'scheduled reboot',
        EventId: 'instance-event-0d59937288b749b32',
        NotBefore: formatEc2ImdsDate(start),
        NotAfter: formatEc2ImdsDate(new Date(start.getTime() + 3_600_000)),
        State: 'active',
      };
      imds.setScheduledEvents([event]);
      agent = startAgent('node-aws', 'aws', { DRAINBRIDGE_AGENT_AWS_URL: imds.url });
      const requestId = `aws:node-aws:scheduled:${event.EventId}`;
      await waitUntil(
        'Maintenance Requested on the bus',
        () => onBus('Maintenance Requested', requestId).length > 0,
        30_000,
        { context: () => (agent as DrainbridgeProcess).output.slice(-10).join('\n') },
      );
      const [requested] = onBus('Maintenance Requested', requestId);
      assert.equal(requested?.source, 'drainbridge.requests');
      assert.deepEqual(requested?.detail.target, { nodeName: 'node-aws' });
      assert.equal(requested?.detail.origin, 'aws');
      assert.equal(requested?.detail.drain, undefined, 'no drain flag, no policy override: the origin decides');
      assert.equal(requested?.detail.notBefore, new Date(Date.parse(event.NotBefore)).toISOString());
      const ops = await agent.opsUrl();
      assert.equal((await fetch(`${ops}/readyz`)).status, 200);
      const metrics = await scrape(ops);
      assert.equal(metric(metrics, 'drainbridge_notice_requests_total', { provider: 'aws' }), 1);
      assert.equal(
        metric(metrics, 'drainbridge_forwarder_events_published_total', { detail_type: 'Maintenance Requested' }),
        1,
      );
      imds.setScheduledEvents([{ ...event, State: 'completed' }]);
      await waitUntil('Maintenance Ended on the bus', () => onBus('Maintenance Ended', requestId).length > 0, 30_000);
      assert.equal(imds.refused, 0, 'every read carried an IMDSv2 session token');
      await stopsCleanly(agent);
    } finally {
      await imds.server.stop();
    }
  });

  it('kubectl drain flags: they ride on the request (the evacuation runs elsewhere); none given: no drain', async () => {
    const imds = await FakeEc2Metadata.start({ instanceId: 'i-0abc1111' });
    try {
      const start = new Date(Date.now() + 3_600_000);
      const event = {
        Code: 'instance-reboot',
        Description: 'scheduled reboot',
        EventId: 'instance-event-0aaaa00000000flags',
        NotBefore: formatEc2ImdsDate(start),
        NotAfter: formatEc2ImdsDate(new Date(start.getTime() + 3_600_000)),
        State: 'active',
      };
      imds.setScheduledEvents([event]);
      agent = startAgent('node-aws', 'aws', { DRAINBRIDGE_AGENT_AWS_URL: imds.url }, [
        '--delete-emptydir-data=false',
        '--grace-period',
        '45',
      ]);
      const requestId = `aws:node-aws:scheduled:${event.EventId}`;
      await waitUntil('Maintenance Requested on the bus', () => onBus('Maintenance Requested', requestId).length > 0);
      const [requested] = onBus('Maintenance Requested', requestId);
      assert.deepEqual(requested?.detail.drain, { deleteEmptyDirData: false, gracePeriodSeconds: 45 });
      await stopsCleanly(agent);
    } finally {
      await imds.server.stop();
    }
  });

  it('Azure: a Reboot listing this node → requested; approved only once drained for it; removed → ended', async () => {
    const imds = await FakeAzureMetadata.start({ vmName: 'aks-pool-12345678-vmss_1' });
    try {
      const event = {
        EventId: '602D9444-D2CD-49C7-8624-000000000777',
        EventStatus: 'Scheduled',
        EventType: 'Reboot',
        ResourceType: 'VirtualMachine',
        Resources: ['aks-pool-12345678-vmss_1'],
        NotBefore: formatRfc1123(new Date(Date.now() + 15 * 60_000)),
        Description: 'Host server is undergoing maintenance.',
        EventSource: 'Platform',
        DurationInSeconds: 9,
      };
      imds.putEvent(event);
      agent = startAgent('node-azure', 'azure', {
        DRAINBRIDGE_AGENT_AZURE_URL: imds.url,
        DRAINBRIDGE_AGENT_AZURE_APPROVAL_CHECK_SECONDS: '1',
      });
      const requestId = `azure:node-azure:se:${event.EventId}`;
      await waitUntil(
        'Maintenance Requested on the bus',
        () => onBus('Maintenance Requested', requestId).length > 0,
        30_000,
      );
      // Not drained yet: the agent has checked (it read the Evacuation record) and not approved.
      await waitUntil('the agent checked for a drain', () =>
        cluster.sim.requestLog
          .all()
          .some((r) => r.user === NODE_AGENT_USER && r.resource === 'evacuations' && r.status === 404),
      );
      assert.deepEqual(imds.startRequests, []);
      markDrained(cluster, 'node-azure', requestId);
      await waitUntil('the event is approved', () => imds.approved(event.EventId), 30_000);
      imds.removeEvent(event.EventId);
      await waitUntil('Maintenance Ended on the bus', () => onBus('Maintenance Ended', requestId).length > 0, 30_000);
      assert.equal(
        metric(await scrape(await agent.opsUrl()), 'drainbridge_notice_approvals_total', { provider: 'azure' }),
        1,
      );
      await stopsCleanly(agent);
    } finally {
      await imds.server.stop();
    }
  });

  it('GCP: MIGRATE_ON_HOST_MAINTENANCE (a hanging read) → requested; back to NONE → ended', async () => {
    const metadata = await FakeGceMetadata.start();
    try {
      agent = startAgent('node-gcp', 'gcp', {
        DRAINBRIDGE_AGENT_GCP_URL: metadata.url,
        DRAINBRIDGE_AGENT_GCP_UPCOMING: 'false',
      });
      await waitUntil('the agent waits for a change', () => metadata.waiting > 0, 30_000);
      metadata.setMaintenanceEvent('MIGRATE_ON_HOST_MAINTENANCE');
      const requested = () =>
        bus.accepted.filter(
          (e) =>
            e['detail-type'] === 'Maintenance Requested' &&
            (e.detail.target as { nodeName?: string }).nodeName === 'node-gcp',
        );
      await waitUntil('Maintenance Requested on the bus', () => requested().length > 0, 30_000);
      const requestId = String(requested()[0]?.detail.requestId);
      assert.match(requestId, /^gcp:node-gcp:maintenance-event:/);
      metadata.setMaintenanceEvent('NONE');
      await waitUntil('Maintenance Ended on the bus', () => onBus('Maintenance Ended', requestId).length > 0, 30_000);
      await stopsCleanly(agent);
    } finally {
      await metadata.server.stop();
    }
  });
});

/** What a drain by drainbridge leaves for `requestId`: the Evacuation record at NodeDrained, the node's phase and hold. */
function markDrained(cluster: TestCluster, nodeName: string, requestId: string): void {
  const name = evacuationName(requestId);
  const evacuations = { group: 'drainbridge.io', resource: 'evacuations' };
  cluster.sim.store.create(evacuations, {
    apiVersion: 'drainbridge.io/v1alpha1',
    kind: 'Evacuation',
    metadata: { name },
    spec: { requestId, nodeName },
  } as KubeObject);
  cluster.sim.store.mutate(evacuations, { name }, (record: KubeObject) => {
    (record as { status?: unknown }).status = { phase: 'NodeDrained', branches: {} };
    return undefined;
  });
  cluster.sim.store.mutate({ group: '', resource: 'nodes' }, { name: nodeName }, (node: KubeObject) => {
    node.metadata.annotations = {
      ...node.metadata.annotations,
      [LEDGER_ANNOTATION]: JSON.stringify({
        holds: { [requestId]: { requester: 'test', origin: 'azure', since: new Date().toISOString() } },
        released: {},
      }),
      [PHASE_ANNOTATION]: 'NodeDrained',
    };
    (node as { spec?: Record<string, unknown> }).spec = { ...(node as { spec?: object }).spec, unschedulable: true };
    return undefined;
  });
}
