/**
 * The failure path leaves the safe state: a request whose deadline passes while a PodDisruptionBudget at
 * 0 blocks the drain, and an operator's abort, both end the execution failed with the node still
 * cordoned, the hold kept, the phase `Failed` on the node and the record, and `Evacuation Failed` published.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { readLedger } from '../../lib/node/ledger.ts';
import { PHASE_ANNOTATION } from '../../lib/node/phase.ts';
import { waitUntil } from '../support/wait.ts';
import {
  eventsOf,
  failureOf,
  maintenanceRequested,
  readNodeAsAdmin,
  readRecord,
  simInstant,
  startWorkflowSim,
  type WorkflowSim,
} from './harness.ts';
import { BLOCKED_SCENARIO } from './scenario.ts';

const REQUEST = 'req-node-1';

/** Asserts the safe state on node-1 and the Failed records after an evacuation failed with `errorName`. */
async function assertSafeState(w: WorkflowSim, errorName: string): Promise<Record<string, unknown>> {
  const node = await readNodeAsAdmin(w, 'node-1');
  assert.equal(node.spec?.unschedulable, true, 'node-1 stays cordoned');
  assert.ok(readLedger(node).holds[REQUEST], 'the hold is kept until a Restore');
  assert.equal(node.metadata?.annotations?.[PHASE_ANNOTATION], 'Failed');
  const record = await readRecord(w, REQUEST);
  assert.equal(record.status?.phase, 'Failed');
  const failed = eventsOf(w, 'Evacuation Failed', REQUEST);
  assert.equal(failed.length, 1, 'one Evacuation Failed event');
  const event = failed[0] as { error: { name: string; message: string }; blockers: { reason: string }[] };
  assert.equal(event.error.name, errorName);
  return failed[0] as Record<string, unknown>;
}

describe('the failure path leaves the safe state', () => {
  let w: WorkflowSim | undefined;
  afterEach(async () => {
    await w?.stop();
    w = undefined;
  });

  it('a passed deadline fails the evacuation with DeadlineExceeded, naming the PDB that blocked it', async () => {
    w = await startWorkflowSim(BLOCKED_SCENARIO);
    const deadline = simInstant(w, 180);
    await w.runtime.put('Maintenance Requested', maintenanceRequested('node-1', { deadline }));
    const [execution] = w.runtime.executionsFor(REQUEST);
    assert.ok(execution);
    const outcome = await execution.outcome;
    assert.equal(failureOf(outcome).name, 'EvacuationFailed', 'the execution failed');
    const failed = (await assertSafeState(w, 'DeadlineExceeded')) as {
      error: { message: string };
      blockers: { reason: string }[];
    };
    assert.match(failed.error.message, new RegExp(`deadline ${deadline.replace(/[.]/g, '\\.')}`));
    assert.ok(
      failed.blockers.some((b) => /PodDisruptionBudget web/.test(b.reason)),
      `the failure names the PDB: ${JSON.stringify(failed.blockers)}`,
    );
    // With the deadline within a pass's wait, a pass that returns is called again at once (no backoff
    // that could carry it past the deadline): it goes round, pass after pass, until the deadline.
    const passes = w.taskCalls.filter((call) => call.stateName === 'PodsPass').length;
    assert.ok(passes >= 2, `the pods pass went round until the deadline (${passes} passes)`);
    await w.runtime.settle();
  });

  it('an abort fails the evacuation with EvacuationAborted and keeps the node cordoned and held', async () => {
    const sim = await startWorkflowSim(BLOCKED_SCENARIO);
    w = sim;
    await sim.runtime.put('Maintenance Requested', maintenanceRequested('node-1'));
    const [execution] = sim.runtime.executionsFor(REQUEST);
    assert.ok(execution);
    await waitUntil('the pod branch waits on the PDB', () =>
      sim.taskCalls.some((call) => call.error?.name === 'NotYetDone'),
    );
    await sim.runtime.deps.progress.requestAbort(REQUEST, 'operator@example.com', new Date(sim.sim.clock.now()));
    const outcome = await execution.outcome;
    assert.equal(failureOf(outcome).name, 'EvacuationFailed', 'the execution failed');
    const failed = (await assertSafeState(sim, 'EvacuationAborted')) as { error: { message: string } };
    assert.match(failed.error.message, /aborted by operator@example\.com/);
    await sim.runtime.settle();
  });
});
