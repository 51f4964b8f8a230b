/**
 * Issue 24: a 30 s API outage (every connection reset) fails no request that merely waits — one waiting
 * in line for the slot, one draining (its pass waiting on a PodDisruptionBudget). The budget under test is
 * the state machines' transient Retry (state-machines/evacuate.asl.yml, `&transient`), so this scenario runs
 * with Step Functions' own retry intervals and jitter (no shortened intervals) and a simulator clock near
 * real time (an owner's mark and the deadlines count in it). Six attempts ended within 35 s about one time
 * in four; twelve, under 35 s about once in 200,000.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { waitUntil } from '../support/wait.ts';
import {
  evacuate,
  expectSucceeded,
  type FaultWorld,
  openSpareNodes,
  realMs,
  restore,
  startFaultWorld,
  untilBlockedByPdb,
  WORKFLOW_SCENARIO,
} from './harness.ts';

const OUTAGE_MS = 30_000;

/** Task calls of `stateName` that failed with TransientError, after `since` calls. */
const transientIn = (w: FaultWorld, stateName: string, since: number) =>
  w.taskCalls.slice(since).filter((c) => c.stateName === stateName && c.error?.name === 'TransientError');

async function restored(w: FaultWorld, node: string): Promise<void> {
  const execution = await restore(w, node);
  const outcome = await execution.outcome;
  assert.equal(outcome.ok, true, `the restore of ${node} succeeded`);
}

describe('issue 24: a 30 s API outage fails no request that waits', () => {
  it('a request waiting in line and one draining both ride it out and end normally', { timeout: 300_000 }, async () => {
    const w = await startFaultWorld(WORKFLOW_SCENARIO, {
      throughProxy: true,
      speed: 2,
      runtime: { retryIntervalMs: undefined },
    });
    try {
      const proxy = w.proxy;
      assert.ok(proxy, 'the fault proxy is in front of the simulator');
      const draining = await evacuate(w, 'node-1');
      await untilBlockedByPdb(w);
      const waiting = await evacuate(w, 'node-3');
      await waitUntil(
        'node-3 waits in line',
        () =>
          w.taskCalls.some((c) => c.stateName === 'Admit' && /SlotUnavailable|WaitingInLine/.test(c.error?.name ?? '')),
        30_000,
      );

      const before = w.taskCalls.length;
      const outage = proxy.add({ path: /./, action: 'reset' });
      await realMs(OUTAGE_MS);
      outage.times = 0;
      assert.ok(outage.hits > 0, 'the outage cut calls');
      // A request in line meets it in Admit or in its wait's own call (parking its wake-up token on the Lease).
      const inLine = ['Admit', 'WaitForSlot', 'WaitInLine'].flatMap((state) => transientIn(w, state, before));
      assert.ok(inLine.length > 0, 'the waiting request met the outage');
      assert.ok(transientIn(w, 'PodsPass', before).length > 0, 'the draining request met the outage');

      await openSpareNodes(w);
      await expectSucceeded(w, draining);
      await restored(w, 'node-1');
      await expectSucceeded(w, waiting);
      await restored(w, 'node-3');
      await w.runtime.settle();
      w.invariants.assertHeld({ touchedByPeople: ['node-2', 'node-3'] });
    } finally {
      await w.stop();
    }
  });
});
