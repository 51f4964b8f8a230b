/**
 * A duplicated `Maintenance Requested` (same requestId) starts no second evacuation: delivered twice by
 * the bus (EventBridge is at-least-once), and put again after the first evacuation finished.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import type { TrackedExecution } from '../../embedded/runtime.ts';
import { readLedger } from '../../lib/node/ledger.ts';
import {
  eventsOf,
  evictionsSince,
  failureOf,
  maintenanceRequested,
  openSpareNodes,
  readNodeAsAdmin,
  startWorkflowSim,
  type WorkflowSim,
  writesSince,
} from './harness.ts';
import { WORKFLOW_SCENARIO } from './scenario.ts';

const REQUEST = 'req-node-1';

/** Each pod key at most once: the node was evacuated once. */
function assertEvictedOnce(w: WorkflowSim): void {
  const evictions = evictionsSince(w);
  assert.ok(evictions.length >= 4, `the web pods were evicted (${evictions.join(', ')})`);
  assert.deepEqual(
    evictions.filter((key, index) => evictions.indexOf(key) !== index),
    [],
    'no pod was evicted twice',
  );
}

async function assertEvacuatedOnce(w: WorkflowSim): Promise<void> {
  const node = await readNodeAsAdmin(w, 'node-1');
  assert.equal(node.spec?.unschedulable, true);
  assert.deepEqual(Object.keys(readLedger(node).holds), [REQUEST], 'one hold');
  assertEvictedOnce(w);
  assert.equal(eventsOf(w, 'Evacuation Succeeded', REQUEST).length, 1, 'one Evacuation Succeeded');
}

describe('a duplicated Maintenance Requested', () => {
  let w: WorkflowSim | undefined;
  afterEach(async () => {
    await w?.stop();
    w = undefined;
  });

  it('put again after the evacuation finished: the second execution writes nothing and ends as a no-op', async () => {
    const sim = await startWorkflowSim(WORKFLOW_SCENARIO);
    w = sim;
    await openSpareNodes(sim);
    await sim.runtime.put('Maintenance Requested', maintenanceRequested('node-1'));
    const [first] = sim.runtime.executionsFor(REQUEST);
    assert.ok(first);
    const firstOutcome = await first.outcome;
    assert.equal(firstOutcome.ok, true, `${failureOf(firstOutcome).name}: ${failureOf(firstOutcome).message}`);

    const mark = sim.sim.requestLog.mark();
    await sim.runtime.put('Maintenance Requested', maintenanceRequested('node-1'));
    const [, second] = sim.runtime.executionsFor(REQUEST);
    assert.ok(second, 'the bus started a second execution');
    const secondOutcome = await second.outcome;
    assert.equal(secondOutcome.ok, true, `${failureOf(secondOutcome).name}: ${failureOf(secondOutcome).message}`);
    assert.deepEqual(writesSince(sim, mark), [], 'the duplicate made zero writes');
    await assertEvacuatedOnce(sim);
  });

  it('delivered twice by the bus: the node is evacuated once', async () => {
    const sim = await startWorkflowSim(WORKFLOW_SCENARIO, { runtime: { duplicateDeliveries: true } });
    w = sim;
    await openSpareNodes(sim);
    await sim.runtime.put('Maintenance Requested', maintenanceRequested('node-1'));
    const executions = sim.runtime.executionsFor(REQUEST);
    assert.equal(executions.length, 2, 'the bus delivered the request twice');
    const outcomes = await Promise.all(executions.map((execution) => execution.outcome));
    for (const outcome of outcomes) {
      assert.equal(outcome.ok, true, `${failureOf(outcome).name}: ${failureOf(outcome).message}`);
    }
    const callsOf = (execution: TrackedExecution) => sim.taskCalls.filter((call) => call.executionId === execution.id);
    const passes = executions.map((execution) => callsOf(execution).filter((c) => c.functionKey === 'pass').length);
    console.log(`duplicate delivery: pass calls per execution ${passes.join(' / ')}`);
    const duplicate = executions.find((execution) => !callsOf(execution).some((c) => c.functionKey === 'pass'));
    assert.ok(duplicate, 'one of the two executions never ran a pass');
    const admits = callsOf(duplicate).filter((call) => call.functionKey === 'admit');
    assert.ok(
      admits.every((call) => call.error),
      'the duplicate was never admitted',
    );
    assert.equal(admits.at(-1)?.error?.name, 'SkipEvent', 'it ended as a no-op once the evacuation finished');
    await assertEvacuatedOnce(sim);
  });
});
