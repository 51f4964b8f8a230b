/**
 * `drainbridge run` lives for weeks: its runtime keeps the executions running and only the newest ended
 * ones (ENDED_EXECUTIONS_KEPT; here 2), not every execution it ever ran.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { maintenanceEnded, startWorkflowSim, type WorkflowSim } from './harness.ts';
import { IDLE_NODES_SCENARIO } from './scenario.ts';

describe('ended executions are forgotten beyond the newest few', () => {
  let w: WorkflowSim;
  before(async () => {
    w = await startWorkflowSim(IDLE_NODES_SCENARIO, { runtime: { endedExecutionsKept: 2 } });
  });
  after(async () => {
    await w?.stop();
  });

  it('five Restores of requests that never held their node: the last two are kept', async () => {
    for (let n = 1; n <= 5; n++) {
      await w.runtime.put('Maintenance Ended', maintenanceEnded('node-1', `gone-${n}`));
      await w.runtime.settle();
    }
    // The last one's forgetting runs after its outcome: one more turn of the event loop.
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(
      w.runtime.executions.map((e) => e.requestId),
      ['gone-4', 'gone-5'],
    );
    assert.ok(w.runtime.executions.every((e) => e.machine === 'restore'));
  });
});
