/**
 * Fault injection: the records drainbridge keeps in the cluster damaged while it runs (issue 12 item 1) —
 * the node's ledger, the owner claim and a branch state on the Evacuation record, the admission queue on
 * the Lease — and a ledger written by a newer drainbridge or grown to 3,000 holds. Each is a blocker:
 * the request stops with RecordUnreadable naming the record, the node stays cordoned and counted as held,
 * and nothing is written to the node.
 */
import assert from 'node:assert/strict';
import { describe } from 'node:test';
import { isSlotWait } from '../../lib/errors/registry.ts';
import { LEDGER_ANNOTATION } from '../../lib/node/ledger.ts';
import { DRAINBRIDGE_SA } from '../support/request-log.ts';
import { waitUntil } from '../support/wait.ts';
import {
  evacuate,
  expectEndedWith,
  expectFailed,
  expectSucceeded,
  type FaultWorld,
  IDLE_NODES_SCENARIO,
  restore,
  scenario,
  untilBlockedByPdb,
  WORKFLOW_SCENARIO,
} from './harness.ts';

const NODES = { group: '', resource: 'nodes' };
const LEASES = { group: 'coordination.k8s.io', resource: 'leases' };
const EVACUATIONS = { group: 'drainbridge.io', resource: 'evacuations' };

function annotate(
  w: FaultWorld,
  ref: typeof NODES,
  key: { namespace?: string; name: string },
  annotations: Record<string, string>,
) {
  w.sim.store.mutate(ref, key, (copy) => {
    copy.metadata.annotations = { ...copy.metadata.annotations, ...annotations };
    return copy;
  });
}

function nodeWritesSince(w: FaultWorld, mark: number): string[] {
  return w.sim.requestLog.writes({ since: mark, user: DRAINBRIDGE_SA, resource: 'nodes' }).map((r) => r.name);
}

const unschedulable = (w: FaultWorld, node: string) =>
  (w.sim.store.get(NODES, undefined, node)?.spec as { unschedulable?: boolean } | undefined)?.unschedulable === true;

describe('fault injection: damaged records (issue 12 item 1)', () => {
  scenario(
    'the ledger damaged mid-drain: RecordUnreadable names it, no node write, a second node is not admitted',
    {
      cluster: WORKFLOW_SCENARIO,
    },
    async (w) => {
      const execution = await evacuate(w, 'node-1');
      await untilBlockedByPdb(w);
      annotate(w, NODES, { name: 'node-1' }, { [LEDGER_ANNOTATION]: '{"holds":{"req-node-1":null},"released":{}}' });
      const mark = w.sim.requestLog.mark();
      await expectFailed(
        w,
        execution,
        'RecordUnreadable',
        /ledger \(node annotation drainbridge\.io\/ledger\): holds\.req-node-1/,
      );
      const second = await evacuate(w, 'node-3');
      await waitUntil('node-3 waits behind node-1', () =>
        w.taskCalls.some((c) => c.functionKey === 'admit' && isSlotWait(c.error?.name)),
      );
      assert.deepEqual(nodeWritesSince(w, mark), [], 'no node was written after the damage');
      assert.equal(unschedulable(w, 'node-1'), true);
      second.abort();
    },
  );

  scenario(
    'the owner claim damaged mid-drain: RecordUnreadable names it; the node stays cordoned and held',
    {
      cluster: WORKFLOW_SCENARIO,
    },
    async (w) => {
      const execution = await evacuate(w, 'node-1');
      await untilBlockedByPdb(w);
      annotate(w, EVACUATIONS, { name: 'req-node-1' }, { 'drainbridge.io/owner': '{"executionId":"x","seen":"soon"}' });
      await expectFailed(
        w,
        execution,
        'RecordUnreadable',
        /owner claim \(Evacuation annotation drainbridge\.io\/owner\): seen/,
      );
      assert.equal(unschedulable(w, 'node-1'), true);
    },
  );

  scenario(
    'the pod branch state damaged mid-drain: RecordUnreadable names it; nothing more is evicted',
    {
      cluster: WORKFLOW_SCENARIO,
    },
    async (w) => {
      const execution = await evacuate(w, 'node-1');
      await untilBlockedByPdb(w);
      w.sim.store.mutate(EVACUATIONS, { name: 'req-node-1' }, (copy) => {
        const status = copy.status as { branches: Record<string, { state: unknown }> };
        status.branches.pods = { ...status.branches.pods, state: { pods: [], moved: 'all' } };
        return copy;
      });
      const mark = w.sim.requestLog.mark();
      await expectFailed(w, execution, 'RecordUnreadable', /pod branch state/);
      const evicted = w.sim.requestLog.writes({ since: mark, user: DRAINBRIDGE_SA, resource: 'pods' });
      assert.deepEqual(evicted, [], 'no eviction after the damage');
    },
  );

  scenario(
    'the admission queue damaged while a request waits: that request fails naming it; the held node is untouched',
    {
      cluster: IDLE_NODES_SCENARIO,
    },
    async (w) => {
      await expectSucceeded(w, await evacuate(w, 'node-1'));
      const waiting = await evacuate(w, 'node-2');
      await waitUntil('node-2 waits', () =>
        w.taskCalls.some((c) => c.functionKey === 'admit' && isSlotWait(c.error?.name)),
      );
      annotate(
        w,
        LEASES,
        { namespace: 'drainbridge', name: 'drainbridge-admission' },
        {
          'drainbridge.io/admission-queue': '{"req-node-2": "next"}',
        },
      );
      await expectFailed(
        w,
        waiting,
        'RecordUnreadable',
        /admission queue \(Lease annotation drainbridge\.io\/admission-queue\)/,
      );
      assert.equal(unschedulable(w, 'node-1'), true, 'node-1 stays held and cordoned');
      assert.equal(unschedulable(w, 'node-2'), false, 'node-2 was never cordoned');
    },
  );

  scenario(
    'a ledger written by a newer drainbridge: not guessed at; the request fails naming the version',
    {
      cluster: IDLE_NODES_SCENARIO,
    },
    async (w) => {
      annotate(w, NODES, { name: 'node-1' }, { [LEDGER_ANNOTATION]: JSON.stringify({ $version: 2, holds: {} }) });
      const mark = w.sim.requestLog.mark();
      await expectFailed(
        w,
        await evacuate(w, 'node-1'),
        'RecordUnreadable',
        /written in format version 2; this drainbridge reads up to 1/,
      );
      assert.deepEqual(nodeWritesSince(w, mark), []);
    },
  );

  scenario(
    'a ledger of 3,000 holds: a new hold is refused naming the limit; releasing one works; nothing crashes',
    {
      cluster: IDLE_NODES_SCENARIO,
    },
    async (w) => {
      const hold = { requester: 'a', origin: 'manual', since: new Date(w.sim.clock.now()).toISOString() };
      const holds = Object.fromEntries(Array.from({ length: 3000 }, (_, i) => [`r${i}`, hold]));
      const changes = { priorUnschedulable: false, cordoned: true, annotations: {}, taints: [] };
      w.sim.store.mutate(NODES, { name: 'node-1' }, (copy) => {
        copy.metadata.annotations = {
          ...copy.metadata.annotations,
          [LEDGER_ANNOTATION]: JSON.stringify({ holds, released: {}, changes }),
        };
        (copy.spec as Record<string, unknown>).unschedulable = true;
        return copy;
      });
      await expectFailed(
        w,
        await evacuate(w, 'node-1', { requestId: 'one-more' }),
        'EvacuationFailed',
        /already has 3000 maintenance holds/,
      );
      const released = await restore(w, 'node-1', 'r17');
      assert.equal((await released.outcome).ok, true);
      const ledger = JSON.parse(
        w.sim.store.get(NODES, undefined, 'node-1')?.metadata.annotations?.[LEDGER_ANNOTATION] ?? '{}',
      );
      assert.equal(Object.keys(ledger.holds).length, 2999);
      assert.equal(unschedulable(w, 'node-1'), true, 'other holds remain: still cordoned');
      await expectEndedWith(await restore(w, 'node-1', 'r17'), '(succeeded)');
    },
  );
});
