/**
 * Fault injection: what arrives on the bus — every event delivered twice (EventBridge is at-least-once),
 * events out of order, a Restore during an Evacuate, an operator's abort, a late duplicate after the
 * maintenance ended, two requests for one node.
 */
import assert from 'node:assert/strict';
import { describe } from 'node:test';
import { readLedger } from '../../lib/node/ledger.ts';
import {
  BLOCKED_SCENARIO,
  evacuate,
  eventsOf,
  evictions,
  expectEndedWith,
  expectFailed,
  expectSucceeded,
  type FaultWorld,
  failureOf,
  IDLE_NODES_SCENARIO,
  openSpareNodes,
  restore,
  scenario,
  untilBlockedByPdb,
  WORKFLOW_SCENARIO,
} from './harness.ts';

const NODES = { group: '', resource: 'nodes' };
const ledgerOf = (w: FaultWorld, node: string) => readLedger(w.sim.store.get(NODES, undefined, node) as never);
const unschedulable = (w: FaultWorld, node: string) =>
  (w.sim.store.get(NODES, undefined, node)?.spec as { unschedulable?: boolean } | undefined)?.unschedulable === true;

describe('fault injection: duplicate, out-of-order and competing events', () => {
  scenario(
    'every event delivered twice at once: one hold, one outcome, each pod evicted once',
    { cluster: WORKFLOW_SCENARIO, runtime: { duplicateDeliveries: 'concurrent' } },
    async (w) => {
      await openSpareNodes(w);
      const [first, second] = await (async () => {
        await evacuate(w, 'node-1');
        return w.runtime.executionsFor('req-node-1');
      })();
      assert.ok(first && second, 'two executions for one request');
      const outcomes = await Promise.all([first.outcome, second.outcome]);
      assert.ok(
        outcomes.some((o) => o.ok),
        'one of them evacuated',
      );
      assert.equal(eventsOf(w, 'Evacuation Succeeded', 'req-node-1').length, 1, 'one outcome event');
      assert.deepEqual(Object.keys(ledgerOf(w, 'node-1').holds), ['req-node-1']);
      const seen = evictions(w);
      assert.equal(new Set(seen).size, seen.length, 'no pod evicted twice');
      const restored = await restore(w, 'node-1');
      assert.equal((await restored.outcome).ok, true);
      await w.runtime.settle();
      assert.equal(eventsOf(w, 'Node Restored', 'req-node-1').filter((e) => e.lastHold).length >= 1, true);
      assert.equal(unschedulable(w, 'node-1'), false, 'uncordoned once');
    },
  );

  scenario(
    'Maintenance Ended before its Maintenance Requested: a tombstone; the late request is dropped and never cordons',
    { cluster: IDLE_NODES_SCENARIO },
    async (w) => {
      const early = await restore(w, 'node-1');
      assert.equal((await early.outcome).ok, true);
      const [restored] = eventsOf(w, 'Node Restored', 'req-node-1');
      assert.equal(restored?.uncordoned, false, 'an End for a request that holds nothing uncordons nothing');
      assert.ok(Object.hasOwn(ledgerOf(w, 'node-1').released, 'req-node-1'), 'the End left a tombstone');
      // The maintenance is over before its request came: cordoning now would hold a node nobody will restore.
      const late = await evacuate(w, 'node-1');
      assert.equal((await late.outcome).ok, true, `dropped as Skipped: ${failureOf(await late.outcome).name}`);
      assert.ok(
        w.taskCalls.some((c) => c.error?.name === 'SkipEvent'),
        'the step said why (SkipEvent)',
      );
      assert.equal(unschedulable(w, 'node-1'), false, 'never cordoned');
      assert.deepEqual(ledgerOf(w, 'node-1').holds, {});
    },
  );

  scenario(
    'Maintenance Ended delivered twice: one uncordon, the second release changes nothing',
    { cluster: IDLE_NODES_SCENARIO },
    async (w) => {
      await expectSucceeded(w, await evacuate(w, 'node-1'));
      const first = await restore(w, 'node-1');
      const second = await restore(w, 'node-1');
      assert.equal((await first.outcome).ok, true);
      assert.equal((await second.outcome).ok, true);
      // Which of the two releases first is a race; either way one acted and the other says it changed nothing.
      const restored = eventsOf(w, 'Node Restored', 'req-node-1');
      assert.equal(restored.length, 2, 'each Maintenance Ended is answered');
      const repeated = (e: Record<string, unknown>) =>
        ((e.leftAlone ?? []) as string[]).some((note) => note.includes('this one changed nothing'));
      const acting = restored.filter((e) => !repeated(e));
      assert.equal(acting.length, 1, 'one Restore acted');
      assert.equal(acting[0]?.uncordoned, true, 'and it uncordoned the node');
      assert.equal(unschedulable(w, 'node-1'), false);
    },
  );

  scenario(
    'a late duplicate Maintenance Requested after the Restore: dropped by the tombstone, never cordons again',
    { cluster: IDLE_NODES_SCENARIO },
    async (w) => {
      await expectSucceeded(w, await evacuate(w, 'node-1'));
      assert.equal((await (await restore(w, 'node-1')).outcome).ok, true);
      const late = await evacuate(w, 'node-1');
      assert.equal((await late.outcome).ok, true, `dropped as Skipped: ${failureOf(await late.outcome).name}`);
      assert.equal(unschedulable(w, 'node-1'), false, 'not cordoned again');
      assert.deepEqual(ledgerOf(w, 'node-1').holds, {});
      assert.ok(
        w.taskCalls.some((c) => c.error?.name === 'SkipEvent'),
        'the step said why (SkipEvent)',
      );
    },
  );

  scenario(
    'two requests for one node: one slot, two holds; the node stays cordoned until the second Restore',
    { cluster: IDLE_NODES_SCENARIO },
    async (w) => {
      await Promise.all([evacuate(w, 'node-1', { requestId: 'req-a' }), evacuate(w, 'node-1', { requestId: 'req-b' })]);
      for (const id of ['req-a', 'req-b']) {
        const [execution] = w.runtime.executionsFor(id);
        assert.ok(execution);
        assert.equal((await execution.outcome).ok, true, id);
      }
      assert.deepEqual(Object.keys(ledgerOf(w, 'node-1').holds).sort(), ['req-a', 'req-b']);
      assert.equal((await (await restore(w, 'node-1', 'req-a')).outcome).ok, true);
      assert.equal(unschedulable(w, 'node-1'), true, 'req-b still holds it');
      assert.equal((await (await restore(w, 'node-1', 'req-b')).outcome).ok, true);
      assert.equal(unschedulable(w, 'node-1'), false);
    },
  );

  scenario(
    'Restore during an Evacuate: cancelled (not a failure), uncordoned, nothing evicted afterwards',
    { cluster: WORKFLOW_SCENARIO },
    async (w) => {
      const execution = await evacuate(w, 'node-1');
      await untilBlockedByPdb(w);
      const restored = await restore(w, 'node-1');
      assert.equal((await restored.outcome).ok, true);
      const mark = w.sim.requestLog.mark();
      await expectEndedWith(execution, 'EvacuationCancelled');
      await execution.settled;
      assert.deepEqual(evictions(w, mark), [], 'nothing evicted after the Restore');
      assert.deepEqual(eventsOf(w, 'Evacuation Failed', 'req-node-1'), [], 'a cancel is not a failure');
      assert.equal(unschedulable(w, 'node-1'), false);
    },
  );

  scenario(
    "an operator's abort mid-drain: fails as aborted, the node stays cordoned and held",
    { cluster: BLOCKED_SCENARIO },
    async (w) => {
      const execution = await evacuate(w, 'node-1');
      await untilBlockedByPdb(w);
      await w.runtime.deps.progress.requestAbort('req-node-1', 'oncall@example.com', new Date(w.sim.clock.now()));
      await expectFailed(w, execution, 'EvacuationAborted', /aborted by oncall@example\.com/);
      assert.equal(unschedulable(w, 'node-1'), true);
      assert.deepEqual(Object.keys(ledgerOf(w, 'node-1').holds), ['req-node-1']);
    },
  );
});
