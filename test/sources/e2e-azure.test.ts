/**
 * Azure end to end, embedded (issue 10's acceptance): the node agent reads the fake Scheduled Events
 * service, publishes on the in-process bus, the packaged Evacuate state machine waits until the start it
 * computed (NotBefore − estimated evacuation time − margin), drains the node in the simulator, the agent
 * approves the event (StartRequests), the event goes away, and Restore uncordons the node. An event
 * listing two nodes is approved only after both are drained. Time is the simulator's (200× real time):
 * the notice's NotBefore is 15 simulated minutes ahead, the agent and the tasks read the simulator's
 * clock, and the machine's Wait state waits on it (test/workflow/harness.ts, `waitClock`).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { InProcessPublisher } from '../../lib/bus/in-process-publisher.ts';
import type { KubeClient } from '../../lib/clients/kube/client.ts';
import { readPhase } from '../../lib/node/phase.ts';
import { formatRfc1123 } from '../../lib/sources/clouds/dates.ts';
import { noticeRequestId } from '../../lib/sources/clouds/ids.ts';
import { type AzureScheduledEvent, FakeAzureMetadata } from '../../sim/metadata/index.ts';
import { waitUntil } from '../support/wait.ts';
import { readNodeAsAdmin, readRecord, startWorkflowSim, type WorkflowSim } from '../workflow/harness.ts';
import { AZURE_VMSS, agentKubeOn, type RunningAgent, runAgent, testConfig, webScenario } from './harness.ts';
import { assertStartedInTime, type BusLog, progressOf, recordBus } from './timing.ts';

const SCENARIO = {
  ...webScenario(
    'azure-notices',
    [1, 2, 3].map((n) => ({ name: `node-${n}`, providerID: `${AZURE_VMSS}/${n - 1}` })),
    6,
  ),
  speed: 200,
};

let w: WorkflowSim;
let fake: FakeAzureMetadata;
let agentKube: KubeClient;
const outcomes: BusLog = [];
/** Real time at which each request's node was found empty. */
const emptiedAt = new Map<string, number>();
/** The simulator's clock, which the agent, the tasks and the Wait states read. */
const simNow = () => w.sim.clock.now();

before(async () => {
  w = await startWorkflowSim(SCENARIO, {
    env: { DRAINBRIDGE_MAX_HELD_NODES: '2' },
    runtime: {
      onBusEvent: recordBus(outcomes, () => simNow()),
      // The node is empty when the last branch's pass says done (FinishEvacuation then records NodeDrained).
      onTask: (call) => {
        const done = (call.output as { done?: unknown } | undefined)?.done === true;
        if (call.stateName !== 'InfraPodsPass' || !done) return;
        const requestId = w.runtime.executions.find((e) => e.id === call.executionId)?.requestId;
        emptiedAt.set(requestId ?? '', Date.now());
      },
    },
  });
  agentKube = await agentKubeOn(w.sim);
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
  return runAgent(config, agentKube, {
    publisher: new InProcessPublisher(w.runtime.bus),
    now: () => new Date(simNow()),
  });
}

function reboot(id: string, resources: string[]): AzureScheduledEvent {
  return {
    EventId: id,
    EventStatus: 'Scheduled',
    EventType: 'Reboot',
    ResourceType: 'VirtualMachine',
    Resources: resources,
    NotBefore: formatRfc1123(new Date(simNow() + 15 * 60_000)),
    Description: 'Host server is undergoing maintenance.',
    EventSource: 'Platform',
    DurationInSeconds: 9,
  };
}

const phaseOf = async (node: string) => readPhase(await readNodeAsAdmin(w, node));
describe('Azure Scheduled Events, end to end through the packaged state machines', () => {
  it('Reboot on node-2 → evacuated → approved → event gone → restored', async () => {
    const event = reboot('5DD55B64-45AD-49D3-BBC9-F57D4EA97BD7', ['aks-pool-12345678-vmss_1']);
    fake.putEvent(event);
    const requestId = noticeRequestId('azure-scheduled-events', 'node-2', event.EventId);
    const agent = agentFor('node-2');
    try {
      await waitUntil('node-2 is drained', async () => (await phaseOf('node-2')) === 'NodeDrained', 30_000);
      assertStartedInTime(outcomes, requestId, new Date(Date.parse(event.NotBefore)).toISOString());
      const record = await readRecord(w, requestId);
      const timing = progressOf(outcomes, requestId, 'MaintenanceScheduled')?.detail.timing as { startAt: string };
      assert.equal(record.status?.start?.startAt, timing.startAt, 'the Evacuation record keeps the start');
      await waitUntil('the event is approved', () => fake.approved(event.EventId), 10_000);
      const approvedAt = fake.startRequests[0]?.at.getTime() ?? 0;
      assert.ok(
        approvedAt >= (emptiedAt.get(requestId) ?? Number.POSITIVE_INFINITY),
        'approved after node-2 was empty',
      );
      assert.deepEqual(
        fake.startRequests.map((r) => r.eventId),
        [event.EventId],
        'the fake recorded one StartRequests for this EventId',
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
        const nodeRequest = noticeRequestId('azure-scheduled-events', node, event.EventId);
        const drainedAt = emptiedAt.get(nodeRequest);
        assert.ok(drainedAt !== undefined && drainedAt <= approvedAt, `${node} was drained before the approval`);
        assertStartedInTime(outcomes, nodeRequest, new Date(Date.parse(event.NotBefore)).toISOString());
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
