/**
 * GCE preemption end to end, through the node agent and the packaged state machines (issue 21 point 5):
 * the fake GCE metadata server's `instance/preempted` turns `TRUE` (Spot and preemptible VMs: "Create and
 * use preemptible VMs", https://cloud.google.com/compute/docs/instances/create-use-preemptible — the VM
 * stops 30 s after the notice). The agent reads it (opt-in, DRAINBRIDGE_AGENT_GCP_PREEMPTED) with a
 * hanging read; the request starts at once with the stop as its deadline, and the pods, which ask for 60 s
 * of grace, are evicted with what is left: node-1 is drained before the stop, and a GracePeriodCut
 * Warning Event names the cut. The simulator runs at real speed here: 30 s are too few at 200×.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { DetailType } from '../../lib/bus/contracts/contracts.ts';
import { InProcessPublisher } from '../../lib/bus/in-process-publisher.ts';
import type { KubeClient } from '../../lib/clients/kube/client.ts';
import { readPhase } from '../../lib/node/phase.ts';
import { FakeGceMetadata } from '../../sim/metadata/index.ts';
import { waitUntil } from '../support/wait.ts';
import { readNodeAsAdmin, startWorkflowSim, type WorkflowSim } from '../workflow/harness.ts';
import { agentKubeOn, GCP_THREE, runAgent, testConfig, webScenario } from './harness.ts';
import { type BusLog, recordBus } from './timing.ts';

const PREEMPTED = '/computeMetadata/v1/instance/preempted';

const SCENARIO = webScenario('gcp-preempted', GCP_THREE, 3, { terminationGracePeriodSeconds: 60 });

let w: WorkflowSim;
let fake: FakeGceMetadata;
let agentKube: KubeClient;
const bus: BusLog = [];
const simNow = () => w.sim.clock.now();

before(async () => {
  w = await startWorkflowSim(SCENARIO, { speed: 1, runtime: { onBusEvent: recordBus(bus, simNow) } });
  agentKube = await agentKubeOn(w.sim);
  fake = await FakeGceMetadata.start();
});
after(async () => {
  await fake.server.stop();
  await w.stop();
});

function nodeEvents(node: string, reason: string): { type?: string; message?: string }[] {
  return w.sim.store
    .list({ group: '', resource: 'events' }, { namespace: 'default' })
    .items.filter((e) => (e as { involvedObject?: { name?: string } }).involvedObject?.name === node)
    .filter((e) => (e as { reason?: string }).reason === reason) as { type?: string; message?: string }[];
}

describe('GCE preemption, end to end through the packaged state machines', () => {
  it('preempted TRUE → evacuated at once, grace periods cut to fit the 30 s, drained before the stop; FALSE → restored', async () => {
    const config = testConfig({
      DRAINBRIDGE_NODE_NAME: 'node-1',
      DRAINBRIDGE_AGENT_PROVIDER: 'gcp',
      DRAINBRIDGE_AGENT_GCP_URL: fake.url,
      DRAINBRIDGE_AGENT_GCP_UPCOMING: 'false',
      DRAINBRIDGE_AGENT_GCP_PREEMPTED: 'true',
    });
    // What the agent puts on the bus, on the simulator's clock (the runtime's onBusEvent sees only its own).
    const onBus = new InProcessPublisher(w.runtime.bus);
    const publisher = {
      publish: async <T extends DetailType>(detailType: T, detail: Parameters<typeof onBus.publish<T>>[1]) => {
        recordBus(bus, simNow)(detailType, detail);
        await onBus.publish(detailType, detail);
      },
    };
    const { agent } = runAgent(config, agentKube, { publisher, now: () => new Date(simNow()) });
    try {
      await waitUntil('the agent waits on preempted', () =>
        fake.server.requestsTo(PREEMPTED).some((r) => r.query.wait_for_change === 'true'),
      );
      const noticedAfter = simNow();
      fake.setPreempted('TRUE');
      await waitUntil('requested', () => bus.some((e) => e.detailType === 'Maintenance Requested'));
      const requested = bus.find((e) => e.detailType === 'Maintenance Requested');
      const requestId = String(requested?.requestId);
      assert.match(requestId, /^gcp:node-1:preempted:preempted-/);
      const stopsAt = Date.parse(String(requested?.detail.deadline));
      assert.ok(
        stopsAt - noticedAfter >= 29_000 && stopsAt - noticedAfter <= 31_000,
        'the deadline is the stop, 30 s on',
      );
      assert.equal(requested?.detail.notBefore, undefined, 'nothing to wait for');

      await waitUntil(
        'node-1 is drained',
        () => bus.some((e) => e.requestId === requestId && /^Evacuation (Succeeded|Failed)$/.test(e.detailType)),
        45_000,
      );
      const drained = bus.find((e) => e.detailType === 'Evacuation Succeeded' && e.requestId === requestId);
      assert.ok(
        drained,
        `drained, not failed: ${JSON.stringify(bus.find((e) => e.detailType === 'Evacuation Failed')?.detail)}`,
      );
      assert.ok(drained.at < stopsAt, `drained before the stop (${(drained.at - stopsAt) / 1000} s late)`);
      const [cut] = nodeEvents('node-1', 'GracePeriodCut');
      assert.equal(cut?.type, 'Warning');
      assert.match(cut?.message ?? '', /grace periods cut to fit the instance's deadline .*: shop\/web-[^ ]+ 60→\d+ s/);

      fake.setPreempted('FALSE');
      await waitUntil(
        'node-1 is restored',
        async () => readPhase(await readNodeAsAdmin(w, 'node-1')) === 'NodeUncordoned',
        30_000,
      );
    } finally {
      await agent.stop();
    }
  });
});
