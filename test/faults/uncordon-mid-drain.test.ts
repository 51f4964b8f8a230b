/**
 * Fault injection: a person uncordons the node while drainbridge drains it (issue 24). drainbridge does
 * not fight them (it never cordons again), and it does not churn their workloads either: the pod drain
 * is paused — no eviction while the node is schedulable, even when a budget would allow one — and says
 * so on the request's record (`drainbridge status`: "paused: …"). A re-cordon resumes the drain, which
 * then finishes; left uncordoned, the request's deadline ends it, naming the uncordon.
 */
import assert from 'node:assert/strict';
import { describe } from 'node:test';
import { evacuationName } from '../../lib/clients/kube/paths.ts';
import { readLedger } from '../../lib/node/ledger.ts';
import { waitUntil } from '../support/wait.ts';
import {
  evacuate,
  evictions,
  expectFailed,
  expectSucceeded,
  type FaultWorld,
  openSpareNodes,
  scenario,
  untilBlockedByPdb,
  WORKFLOW_SCENARIO,
} from './harness.ts';

const NODES = { group: '', resource: 'nodes' };
const PAUSED = /the drain is paused \(no pod is evicted while the node is schedulable\)/;

const deadlineIn = (w: FaultWorld, seconds: number) => new Date(w.sim.clock.now() + seconds * 1000).toISOString();

/** Pod passes that ended waiting on the pause, after `since` task calls. */
const pausedPasses = (w: FaultWorld, since: number) =>
  w.taskCalls.slice(since).filter((call) => call.error?.name === 'NotYetDone' && PAUSED.test(call.error.message));

/** Uncordons node-1 as a person would, and waits until drainbridge has seen it. */
async function uncordonByHand(w: FaultWorld): Promise<void> {
  await w.admin.patchNode('node-1', { spec: { unschedulable: false } });
  await waitUntil('the out-of-band uncordon is recorded', () =>
    Boolean(readLedger(w.sim.store.get(NODES, undefined, 'node-1') as never).outOfBandUncordonAt),
  );
}

/**
 * Opens the spare nodes (the budget could now allow evictions) and waits for three passes that found the
 * drain paused: none of them evicted anything.
 */
async function expectPausedWhileUncordoned(w: FaultWorld): Promise<void> {
  const mark = w.sim.requestLog.mark();
  const calls = w.taskCalls.length;
  await openSpareNodes(w);
  await waitUntil('three passes found the drain paused', () => pausedPasses(w, calls).length >= 3, 30_000);
  assert.deepEqual(evictions(w, mark), [], 'no eviction while the node is uncordoned');
  const record = await w.admin.getEvacuation(evacuationName('req-node-1'));
  assert.match(JSON.stringify(record.status?.branches?.pods?.blockers ?? []), PAUSED, 'the record says why');
}

describe('fault injection: a person uncordons the node mid-drain', () => {
  scenario(
    'paused while uncordoned (no eviction, no churn); re-cordoned, the drain resumes and finishes',
    { cluster: WORKFLOW_SCENARIO, touchedByPeople: ['node-1'] },
    async (w) => {
      const execution = await evacuate(w, 'node-1', { deadline: deadlineIn(w, 3600) });
      await untilBlockedByPdb(w);
      await uncordonByHand(w);
      await expectPausedWhileUncordoned(w);

      const mark = w.sim.requestLog.mark();
      await w.admin.patchNode('node-1', { spec: { unschedulable: true } });
      await expectSucceeded(w, execution);
      assert.ok(evictions(w, mark).length > 0, 'the drain went on once the node was cordoned again');
      const node = w.sim.store.get(NODES, undefined, 'node-1');
      assert.equal(
        (node?.spec as { unschedulable?: boolean } | undefined)?.unschedulable,
        true,
        'the node is cordoned',
      );
    },
  );

  scenario(
    'left uncordoned: still paused when the deadline ends it, naming the uncordon; never re-cordoned by drainbridge',
    { cluster: WORKFLOW_SCENARIO, touchedByPeople: ['node-1'] },
    async (w) => {
      const execution = await evacuate(w, 'node-1', { deadline: deadlineIn(w, 1200) });
      await untilBlockedByPdb(w);
      await uncordonByHand(w);
      const mark = w.sim.requestLog.mark();
      await expectPausedWhileUncordoned(w);
      const failed = await expectFailed(w, execution, 'DeadlineExceeded', /deadline/);
      assert.match(JSON.stringify(failed.blockers), PAUSED);
      assert.deepEqual(evictions(w, mark), [], 'no eviction from the uncordon to the deadline');
      const node = w.sim.store.get(NODES, undefined, 'node-1');
      assert.notEqual(
        (node?.spec as { unschedulable?: boolean } | undefined)?.unschedulable,
        true,
        'drainbridge did not cordon again',
      );
    },
  );
});
