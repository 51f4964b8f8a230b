/**
 * GCP end to end, embedded (issue 10's acceptance), through the packaged state machines on the
 * simulator: the node agent waits on the fake GCE metadata server's maintenance-event with
 * `wait_for_change`; MIGRATE_ON_HOST_MAINTENANCE appears → the evacuation starts at once (a 60-second
 * notice) → node-1 drained; back to NONE → Restore.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { InProcessPublisher } from '../../lib/bus/in-process-publisher.ts';
import type { KubeClient } from '../../lib/clients/kube/client.ts';
import { readPhase } from '../../lib/node/phase.ts';
import { FakeGceMetadata } from '../../sim/metadata/index.ts';
import { waitUntil } from '../support/wait.ts';
import { readNodeAsAdmin, startWorkflowSim, type WorkflowSim } from '../workflow/harness.ts';
import { agentKubeOn, GCP_THREE, runAgent, testConfig, webScenario } from './harness.ts';
import { type BusLog, progressOf, recordBus } from './timing.ts';

const EVENT = '/computeMetadata/v1/instance/maintenance-event';

const SCENARIO = webScenario('gcp-notices', GCP_THREE, 6);

let w: WorkflowSim;
let fake: FakeGceMetadata;
let agentKube: KubeClient;
const bus: BusLog = [];

before(async () => {
  w = await startWorkflowSim(SCENARIO, { runtime: { onBusEvent: recordBus(bus, () => w.sim.clock.now()) } });
  agentKube = await agentKubeOn(w.sim);
  fake = await FakeGceMetadata.start();
});
after(async () => {
  await fake.server.stop();
  await w.stop();
});

const phaseOf = async (node: string) => readPhase(await readNodeAsAdmin(w, node));

describe('GCE maintenance events, end to end through the packaged state machines', () => {
  it('MIGRATE_ON_HOST_MAINTENANCE (wait_for_change) → evacuated at once; NONE → restored', async () => {
    const config = testConfig({
      DRAINBRIDGE_NODE_NAME: 'node-1',
      DRAINBRIDGE_AGENT_PROVIDER: 'gcp',
      DRAINBRIDGE_AGENT_GCP_URL: fake.url,
      DRAINBRIDGE_AGENT_GCP_UPCOMING: 'false',
    });
    const { agent } = runAgent(config, agentKube, {
      publisher: new InProcessPublisher(w.runtime.bus),
      now: () => new Date(w.sim.clock.now()),
    });
    try {
      await waitUntil('the agent waits for a change', () => fake.waiting === 1);
      assert.equal(fake.server.requestsTo(EVENT).at(-1)?.query.wait_for_change, 'true');
      fake.setMaintenanceEvent('MIGRATE_ON_HOST_MAINTENANCE');
      const requestId = `gcp:node-1:maintenance-event:maintenance-event-${fake.etag}-1`;
      await waitUntil(
        'node-1 is drained',
        () => bus.some((e) => e.detailType === 'Evacuation Succeeded' && e.requestId === requestId),
        30_000,
      );
      assert.equal(await phaseOf('node-1'), 'NodeDrained');
      const requested = bus.find((e) => e.detailType === 'Maintenance Requested' && e.requestId === requestId);
      assert.equal(requested?.detail.notBefore, undefined, 'a 60-second notice has no start to wait for');
      assert.equal(progressOf(bus, requestId, 'MaintenanceScheduled'), undefined, 'no waiting');

      fake.setMaintenanceEvent('NONE');
      await waitUntil('node-1 is restored', async () => (await phaseOf('node-1')) === 'NodeUncordoned', 30_000);
      assert.notEqual((await readNodeAsAdmin(w, 'node-1')).spec?.unschedulable, true, 'uncordoned');
      await w.runtime.settle();
      assert.ok(bus.some((e) => e.detailType === 'Node Restored' && e.requestId === requestId));
    } finally {
      await agent.stop();
    }
  });
});
