/**
 * Restore while an Evacuate runs cancels it (no failure recorded, nothing evicted afterwards), and a
 * node held by two requests stays cordoned until the second Restore.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { readLedger } from '../../lib/node/ledger.ts';
import { PHASE_ANNOTATION } from '../../lib/node/phase.ts';
import { waitUntil } from '../support/wait.ts';
import {
  eventsOf,
  evictionsSince,
  failureOf,
  maintenanceEnded,
  maintenanceRequested,
  openSpareNodes,
  readNodeAsAdmin,
  readRecord,
  startWorkflowSim,
  type WorkflowSim,
} from './harness.ts';
import { WORKFLOW_SCENARIO } from './scenario.ts';

/** Runs the Restore for `requestId` on node-1 to its end; returns the Node Restored detail. */
async function restore(w: WorkflowSim, requestId: string): Promise<Record<string, unknown>> {
  await w.runtime.put('Maintenance Ended', maintenanceEnded('node-1', requestId));
  const execution = w.runtime.executions.filter((e) => e.machine === 'restore' && e.requestId === requestId).at(-1);
  assert.ok(execution, `a Restore execution started for ${requestId}`);
  const outcome = await execution.outcome;
  assert.equal(outcome.ok, true, `restore of ${requestId}: ${failureOf(outcome).name} ${failureOf(outcome).message}`);
  const [restored] = eventsOf(w, 'Node Restored', requestId);
  assert.ok(restored, `Node Restored published for ${requestId}`);
  return restored;
}

describe('Restore', () => {
  let w: WorkflowSim | undefined;
  afterEach(async () => {
    await w?.stop();
    w = undefined;
  });

  it('during an Evacuate cancels it: uncordoned, EvacuationCancelled, not Failed, nothing evicted after', async () => {
    // Spare nodes cordoned: one web pod goes, then its replacement cannot start and the PDB blocks the rest.
    const sim = await startWorkflowSim(WORKFLOW_SCENARIO);
    w = sim;
    await sim.runtime.put('Maintenance Requested', maintenanceRequested('node-1'));
    const [evacuate] = sim.runtime.executionsFor('req-node-1');
    assert.ok(evacuate);
    await waitUntil('the pod branch is blocked by the PDB', () =>
      sim.taskCalls.some((call) => call.error?.name === 'NotYetDone' && /PodDisruptionBudget/.test(call.error.message)),
    );
    assert.ok(evictionsSince(sim).length >= 1, 'the evacuation had evicted a pod before the restore');

    const restored = await restore(sim, 'req-node-1');
    const afterRestore = sim.sim.requestLog.mark();
    assert.equal(restored.lastHold, true);
    assert.equal(restored.uncordoned, true);

    const outcome = await evacuate.outcome;
    assert.equal(failureOf(outcome).name, 'EvacuationCancelled');
    // Observable end, not a sleep (issue 12 item 7): the execution has ended and none of its task handlers
    // is still running, so nothing of it can evict any more; whatever it evicted after the restore is in
    // the request log already.
    await evacuate.settled;
    assert.deepEqual(evictionsSince(sim, afterRestore), [], 'no pod evicted after the restore');

    const node = await readNodeAsAdmin(sim, 'node-1');
    assert.notEqual(node.spec?.unschedulable, true);
    assert.equal(node.metadata?.annotations?.[PHASE_ANNOTATION], 'NodeUncordoned');
    assert.deepEqual(eventsOf(sim, 'Evacuation Failed', 'req-node-1'), [], 'a cancel is not a failure');
    assert.notEqual((await readRecord(sim, 'req-node-1')).status?.phase, 'Failed');
  });

  it('of one of two holds leaves the node cordoned; the second Restore uncordons it', async () => {
    const sim = await startWorkflowSim(WORKFLOW_SCENARIO);
    w = sim;
    await openSpareNodes(sim);
    for (const requestId of ['req-a', 'req-b']) {
      await sim.runtime.put('Maintenance Requested', maintenanceRequested('node-1', { requestId }));
      const [execution] = sim.runtime.executionsFor(requestId);
      assert.ok(execution);
      const outcome = await execution.outcome;
      assert.equal(outcome.ok, true, `${requestId}: ${failureOf(outcome).name} ${failureOf(outcome).message}`);
    }
    assert.deepEqual(Object.keys(readLedger(await readNodeAsAdmin(sim, 'node-1')).holds).sort(), ['req-a', 'req-b']);

    const first = await restore(sim, 'req-a');
    assert.equal(first.lastHold, false, 'req-b still holds node-1');
    assert.equal(first.uncordoned, false);
    const held = await readNodeAsAdmin(sim, 'node-1');
    assert.equal(held.spec?.unschedulable, true, 'node-1 stays cordoned after the first Restore');
    assert.deepEqual(Object.keys(readLedger(held).holds), ['req-b']);

    const second = await restore(sim, 'req-b');
    assert.equal(second.lastHold, true);
    assert.equal(second.uncordoned, true);
    const released = await readNodeAsAdmin(sim, 'node-1');
    assert.notEqual(released.spec?.unschedulable, true, 'the last Restore uncordons node-1');
    assert.deepEqual(readLedger(released).holds, {});
  });
});
