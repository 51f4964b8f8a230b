/**
 * Cloud notices without AWS, as deployed with deploy/overlays/node-agent-run: `drainbridge run` (a real
 * child process) serves its bus endpoint (`--bus-address`, DRAINBRIDGE_BUS_KEY) over TLS with a certificate
 * from files as a TLS Secret mounts them (DRAINBRIDGE_BUS_TLS_CERT/_KEY), and the node agent
 * (`drainbridge forwarder --node-agent --bus-endpoint`, another child process, trusting that certificate
 * through DRAINBRIDGE_BUS_CA) publishes an Azure Reboot notice from the fake Scheduled Events service
 * there, signed with the same key. run evacuates node-2
 * through the packaged state machines, the agent approves the event once node-2 is drained, the event
 * goes away, and run restores node-2. An agent holding another key is refused with an error that says
 * so, and nothing it sent reaches the bus.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { EvacuationObject } from '../../lib/clients/kube/paths.ts';
import { formatRfc1123 } from '../../lib/sources/clouds/dates.ts';
import { noticeRequestId } from '../../lib/sources/clouds/ids.ts';
import { type AzureScheduledEvent, FakeAzureMetadata } from '../../sim/metadata/index.ts';
import {
  DrainbridgeProcess,
  metric,
  NODE_AGENT_USER,
  scrape,
  spreadScenario,
  startTestCluster,
  type TestCluster,
} from '../forwarder/harness.ts';
import { makeTestCertificate } from '../support/tls-cert.ts';
import { waitUntil } from '../support/wait.ts';
import { AZURE_VMSS } from './harness.ts';

const KEY = 'e2e-bus-key-0123456789abcdef0123456789abcdef';
const WRONG_KEY = 'not-the-bus-key-0123456789abcdef0123456789ab';
const CERT = makeTestCertificate();

function scenario() {
  const base = spreadScenario(3);
  return {
    ...base,
    name: 'run-bus',
    nodes: base.nodes.map((node, index) => ({ ...node, providerID: `${AZURE_VMSS}/${index}` })),
  };
}

function reboot(id: string, resource: string): AzureScheduledEvent {
  return {
    EventId: id,
    EventStatus: 'Scheduled',
    EventType: 'Reboot',
    ResourceType: 'VirtualMachine',
    Resources: [resource],
    // Two minutes ahead: less than the estimate and margin, so the evacuation starts at once.
    NotBefore: formatRfc1123(new Date(Date.now() + 120_000)),
    Description: 'Host server is undergoing maintenance.',
    EventSource: 'Platform',
    DurationInSeconds: 9,
  };
}

describe('node agent → drainbridge run bus endpoint (no AWS): Azure notice to evacuation and approval', () => {
  let cluster: TestCluster;
  let run: DrainbridgeProcess;
  let busUrl: string;
  const agents: DrainbridgeProcess[] = [];
  const fakes: FakeAzureMetadata[] = [];

  before(async () => {
    cluster = await startTestCluster(scenario());
    run = new DrainbridgeProcess(
      [
        'run',
        '--kubeconfig',
        await cluster.kubeconfigFor('drainbridge-run'),
        '--metrics-address',
        '127.0.0.1:0',
        '--retry-interval-ms',
        '100',
        '--identity',
        'run-bus',
        '--bus-address',
        '127.0.0.1:0',
      ],
      { DRAINBRIDGE_BUS_KEY: KEY, DRAINBRIDGE_BUS_TLS_CERT: CERT.certFile, DRAINBRIDGE_BUS_TLS_KEY: CERT.keyFile },
    );
    busUrl = String((await run.waitForLog('bus endpoint listening')).url);
    assert.match(busUrl, /^https:/);
    await run.waitForLog('leader election: this replica leads');
  });
  after(async () => {
    for (const agent of agents) agent.kill('SIGKILL');
    await Promise.all(agents.map((agent) => agent.exited));
    run?.kill('SIGTERM');
    await run?.exited;
    await Promise.all(fakes.map((fake) => fake.server.stop()));
    await cluster?.stop();
  });

  async function startAgent(node: string, key: string, event: AzureScheduledEvent): Promise<DrainbridgeProcess> {
    const imds = await FakeAzureMetadata.start({ onApproval: 'start' });
    fakes.push(imds);
    imds.putEvent(event);
    const agent = new DrainbridgeProcess(
      [
        'forwarder',
        '--node-agent',
        '--node',
        node,
        '--provider',
        'azure',
        '--kubeconfig',
        await cluster.kubeconfigFor('drainbridge-node-agent'),
        '--metrics-address',
        '127.0.0.1:0',
        '--bus-endpoint',
        busUrl,
      ],
      {
        DRAINBRIDGE_BUS_KEY: key,
        DRAINBRIDGE_BUS_CA: CERT.certFile,
        DRAINBRIDGE_AGENT_AZURE_URL: imds.url,
        DRAINBRIDGE_AGENT_POLL_SECONDS: '1',
        DRAINBRIDGE_AGENT_AZURE_APPROVAL_CHECK_SECONDS: '1',
      },
    );
    agents.push(agent);
    return agent;
  }

  const recordOf = async (requestId: string): Promise<EvacuationObject | undefined> =>
    (await cluster.admin.listEvacuations()).find((record) => record.spec.requestId === requestId);

  it('a Reboot on node-2 → published to run → evacuated → approved → event gone → restored', async () => {
    const event = reboot('5DD55B64-45AD-49D3-BBC9-F57D4EA97BD7', 'aks-pool-12345678-vmss_1');
    const agent = await startAgent('node-2', KEY, event);
    const imds = fakes.at(-1) as FakeAzureMetadata;
    const requestId = noticeRequestId('azure-scheduled-events', 'node-2', event.EventId);
    const output = () => [...agent.output.slice(-8), ...run.output.slice(-8)].join('\n');
    await waitUntil(
      'node-2 drained',
      async () => (await recordOf(requestId))?.status?.phase === 'NodeDrained',
      90_000,
      { context: output },
    );
    const record = await recordOf(requestId);
    assert.equal(record?.spec.origin, 'azure');
    // At its start the agent looked for requests of a previous run: its node's records, by label, allowed.
    const listed = cluster.sim.requestLog
      .all()
      .filter((r) => r.user === NODE_AGENT_USER && r.resource === 'evacuations' && r.verb === 'list');
    assert.ok(listed.length > 0 && listed.every((r) => r.status === 200), JSON.stringify(listed));
    assert.ok(listed.every((r) => decodeURIComponent(r.query).includes('labelSelector=drainbridge.io/node=node-2')));
    assert.equal(record?.spec.notBefore, new Date(Date.parse(event.NotBefore)).toISOString());
    await waitUntil('the event is approved', () => imds.approved(event.EventId), 30_000, { context: output });
    assert.deepEqual(
      imds.startRequests.map((r) => r.eventId),
      [event.EventId],
    );
    const ops = await agent.opsUrl();
    assert.equal(metric(await scrape(ops), 'drainbridge_notice_approvals_total', { provider: 'azure' }), 1);

    imds.removeEvent(event.EventId);
    await waitUntil(
      'node-2 restored',
      async () => {
        const node = await cluster.admin.getNode('node-2');
        return node.spec?.unschedulable !== true && (await recordOf(requestId))?.status?.restore !== undefined;
      },
      60_000,
      { context: output },
    );
    await waitUntil('Node Restored', () =>
      run.logs('Node Restored').some((line) => (line.detail as { requestId?: string })?.requestId === requestId),
    );
  });

  it('an agent with another key is refused with a clear error; nothing reaches the bus', async () => {
    const event = reboot('F020BA2E-3BC0-4C40-A10B-86575A9EABD5', 'aks-pool-12345678-vmss_0');
    const agent = await startAgent('node-1', WRONG_KEY, event);
    const requestId = noticeRequestId('azure-scheduled-events', 'node-1', event.EventId);
    await run.waitForLog(
      'bus endpoint: call refused, nothing put on the bus',
      { type: 'UnrecognizedClientException' },
      60_000,
    );
    await waitUntil(
      'the agent reports the refusal',
      () =>
        agent.output.some(
          (line) => line.includes('UnrecognizedClientException') && line.includes('DRAINBRIDGE_BUS_KEY'),
        ),
      60_000,
      { context: () => agent.output.slice(-10).join('\n') },
    );
    assert.equal(await recordOf(requestId), undefined, 'no Evacuation record: nothing was published');
    assert.ok(
      !run.logs('Maintenance Requested').some((l) => (l.detail as { requestId?: string })?.requestId === requestId),
    );
    assert.equal((await cluster.admin.getNode('node-1')).spec?.unschedulable, undefined);
    const tlsKeyLine = CERT.keyPem.split('\n')[1] ?? CERT.keyPem;
    for (const text of [...run.output, ...agent.output]) {
      assert.ok(!text.includes(KEY) && !text.includes(WRONG_KEY), `a key in the log: ${text}`);
      assert.ok(!text.includes(tlsKeyLine), `the TLS key in the log: ${text}`);
    }
  });
});
