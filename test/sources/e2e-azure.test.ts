/**
 * Azure end to end, embedded: the node agent reads the fake Scheduled Events service, publishes on the
 * in-process bus, the packaged Evacuate state machine drains the node in the simulator, the agent
 * approves the event (StartRequests), the event goes away, and Restore uncordons the node. An event
 * listing two nodes is approved only after both are drained. The harness runs Wait states at once
 * (waitMs 0), so the evacuation does not wait for the notice's NotBefore 15 minutes ahead; when to
 * start before a notBefore is the workflow's business (issue 10, section 3), not the agent's.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { InProcessPublisher } from '../../lib/bus/in-process-publisher.ts';
import { KubeClient } from '../../lib/kube/client.ts';
import { readPhase } from '../../lib/node/phase.ts';
import { formatRfc1123 } from '../../lib/sources/dates.ts';
import { noticeRequestId } from '../../lib/sources/ids.ts';
import { type AzureScheduledEvent, FakeAzureMetadata } from '../../sim/metadata/index.ts';
import { readNodeAsAdmin, startWorkflowSim, type WorkflowSim } from '../workflow/harness.ts';
import { AGENT_RBAC, AZURE_VMSS, type RunningAgent, runAgent, testConfig, waitUntil } from './harness.ts';

const SCENARIO = {
  name: 'azure-notices',
  speed: 200,
  podStartupDelaySeconds: 1,
  nodes: [
    { name: 'node-1', providerID: `${AZURE_VMSS}/0` },
    { name: 'node-2', providerID: `${AZURE_VMSS}/1` },
    { name: 'node-3', providerID: `${AZURE_VMSS}/2` },
  ],
  namespaces: ['shop'],
  workloads: [
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: 'shop', labels: { app: 'web' } },
      spec: {
        replicas: 6,
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: { containers: [{ name: 'nginx', image: 'nginx:1.27' }] },
        },
      },
    },
  ],
};

let w: WorkflowSim;
let fake: FakeAzureMetadata;
let agentKube: KubeClient;
const outcomes: { detailType: string; requestId: unknown; at: number }[] = [];

before(async () => {
  w = await startWorkflowSim(SCENARIO, {
    env: { DRAINBRIDGE_MAX_HELD_NODES: '2' },
    runtime: {
      onBusEvent: (detailType, detail) =>
        outcomes.push({ detailType, requestId: (detail as { requestId?: unknown }).requestId, at: Date.now() }),
    },
  });
  w.sim.apply(AGENT_RBAC, 'node agent RBAC');
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromString(w.sim.kubeconfig(await w.sim.tokenFor('drainbridge/node-agent')));
  agentKube = new KubeClient(kubeConfig, { retry: { baseDelayMs: 5, maxDelayMs: 20 } });
  fake = await FakeAzureMetadata.start({ onApproval: 'start' });
});
after(async () => {
  await fake.server.stop();
  await w.stop();
});

function agentFor(node: string): RunningAgent {
  const config = testConfig({
    DRAINBRIDGE_NODE_NAME: node,
    DRAINBRIDGE_AGENT_PROVIDER: 'azure',
    DRAINBRIDGE_AGENT_AZURE_URL: fake.url,
  });
  return runAgent(config, agentKube, { publisher: new InProcessPublisher(w.runtime.bus) });
}

function reboot(id: string, resources: string[]): AzureScheduledEvent {
  return {
    EventId: id,
    EventStatus: 'Scheduled',
    EventType: 'Reboot',
    ResourceType: 'VirtualMachine',
    Resources: resources,
    NotBefore: formatRfc1123(new Date(Date.now() + 15 * 60_000)),
    Description: 'Host server is undergoing maintenance.',
    EventSource: 'Platform',
    DurationInSeconds: 9,
  };
}

const phaseOf = async (node: string) => readPhase(await readNodeAsAdmin(w, node));
const succeededAt = (requestId: string) =>
  outcomes.find((o) => o.detailType === 'Evacuation Succeeded' && o.requestId === requestId)?.at;

describe('Azure Scheduled Events, end to end through the packaged state machines', () => {
  it('Reboot on node-2 → evacuated → approved → event gone → restored', async () => {
    const event = reboot('5DD55B64-45AD-49D3-BBC9-F57D4EA97BD7', ['aks-pool-12345678-vmss_1']);
    fake.putEvent(event);
    const requestId = noticeRequestId('azure-scheduled-events', 'node-2', event.EventId);
    const agent = agentFor('node-2');
    try {
      await waitUntil('node-2 is drained', async () => (await phaseOf('node-2')) === 'NodeDrained', 30_000);
      await waitUntil('the event is approved', () => fake.approved(event.EventId), 10_000);
      const approvedAt = fake.startRequests[0]?.at.getTime() ?? 0;
      assert.ok(
        approvedAt >= (succeededAt(requestId) ?? Number.POSITIVE_INFINITY),
        'approved after the evacuation succeeded',
      );
      assert.equal(fake.document().Events[0]?.EventStatus, 'Started', 'Azure starts the approved event');

      fake.removeEvent(event.EventId);
      await waitUntil('node-2 is restored', async () => (await phaseOf('node-2')) === 'NodeUncordoned', 30_000);
      assert.notEqual((await readNodeAsAdmin(w, 'node-2')).spec?.unschedulable, true, 'uncordoned');
      await w.runtime.settle();
      assert.ok(outcomes.some((o) => o.detailType === 'Node Restored' && o.requestId === requestId));
    } finally {
      await agent.agent.stop();
    }
  });

  it('an event listing node-1 and node-3 is approved only after both are drained', async () => {
    const event = reboot('F020BA2E-3BC0-4C40-A10B-86575A9EABD5', [
      'aks-pool-12345678-vmss_0',
      'aks-pool-12345678-vmss_2',
    ]);
    fake.putEvent(event);
    const agents = [agentFor('node-1'), agentFor('node-3')];
    try {
      await waitUntil('the event is approved', () => fake.approved(event.EventId), 60_000);
      const approvedAt = fake.startRequests.find((r) => r.eventId === event.EventId)?.at.getTime() ?? 0;
      for (const node of ['node-1', 'node-3']) {
        const drainedAt = succeededAt(noticeRequestId('azure-scheduled-events', node, event.EventId));
        assert.ok(drainedAt !== undefined && drainedAt <= approvedAt, `${node} was drained before the approval`);
      }
      fake.removeEvent(event.EventId);
      await waitUntil(
        'both restored',
        async () => (await phaseOf('node-1')) === 'NodeUncordoned' && (await phaseOf('node-3')) === 'NodeUncordoned',
        30_000,
      );
    } finally {
      await Promise.all(agents.map((a) => a.agent.stop()));
    }
  });
});
