/**
 * Fault injection: contention — the admission Lease lost mid-admission, a Lease left by a holder that
 * died, conflict storms on the node (injected 409s and a real competing writer). The pods pass's watches
 * failing: watches.test.ts.
 */
import assert from 'node:assert/strict';
import { describe } from 'node:test';
import { INTENTS_ANNOTATION } from '../../lib/admission/records.ts';
import { isSlotWait } from '../../lib/errors/registry.ts';
import { readLedger } from '../../lib/node/ledger.ts';
import { DRAINBRIDGE_SA } from '../support/request-log.ts';
import { waitUntil } from '../support/wait.ts';
import {
  delayWrites,
  evacuate,
  expectSucceeded,
  type FaultWorld,
  failReads,
  failWrites,
  IDLE_NODES_SCENARIO,
  openSpareNodes,
  realMs,
  scenario,
  WORKFLOW_SCENARIO,
} from './harness.ts';

const NODES = { group: '', resource: 'nodes' };
/**
 * The competing writer's period: 50 writes a second, far above what kubelets and controllers write to a
 * node. (A writer faster than drainbridge's read-to-write round trip — every 2 ms here — wins every race:
 * node writes are conditional on the resourceVersion read, so the evacuation then ends in ConflictError,
 * in the safe state. Seen while writing this suite; see docs/safety.md.)
 */
const WRITER_PERIOD_MS = 20;
const LEASES = { group: 'coordination.k8s.io', resource: 'leases' };
const holdsOf = (w: FaultWorld, node: string) =>
  Object.keys(readLedger(w.sim.store.get(NODES, undefined, node) as never).holds);
const admitCalls = (w: FaultWorld, requestId: string) =>
  w.taskCalls.filter(
    (c) => c.functionKey === 'admit' && w.runtime.executionsFor(requestId).some((e) => e.id === c.executionId),
  );

/** The admission Lease as a holder's lock leaves it, taken now for `seconds` of simulated time. */
function admissionLockHeldBy(w: FaultWorld, holder: string, seconds: number): void {
  const now = new Date(w.sim.clock.now()).toISOString();
  w.sim.store.create(LEASES, {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: 'drainbridge-admission', namespace: 'drainbridge' },
    spec: { holderIdentity: holder, leaseDurationSeconds: seconds, acquireTime: now, renewTime: now },
  });
}

describe('fault injection: contention on the Lease and the node', () => {
  scenario(
    'the admission Lease is lost mid-admission (the hold write stalls past the mutex): never two nodes held',
    { cluster: IDLE_NODES_SCENARIO },
    async (w) => {
      // node-1's hold write stalls at the server; meanwhile the mutex expires and node-2's request takes it.
      let second: Awaited<ReturnType<typeof evacuate>> | undefined;
      delayWrites(
        w,
        { verb: 'patch', resource: 'nodes', name: 'node-1', body: (b) => JSON.stringify(b).includes('ledger') },
        async () => {
          second = await evacuate(w, 'node-2');
          await waitUntil('node-2 took the lost mutex and decided', () => {
            const calls = admitCalls(w, 'req-node-2');
            return calls.some((c) => !c.error) || calls.filter((c) => isSlotWait(c.error?.name)).length >= 5;
          });
        },
      );
      const first = await evacuate(w, 'node-1');
      await waitUntil(
        'both requests ran admission',
        () => second !== undefined && admitCalls(w, 'req-node-1').length > 0,
      );
      // Whoever got the slot finishes; the other waits for it. Never both at once (the invariants watch).
      const held = ['node-1', 'node-2'].filter((node) => holdsOf(w, node).length > 0);
      assert.equal(held.length, 1, `held now: ${held.join(', ')}`);
      first.abort();
      second?.abort();
    },
  );

  scenario(
    'admission fails after it took the mutex and before its hold write (node lists answer 500): no slot kept for it',
    { cluster: IDLE_NODES_SCENARIO },
    async (w) => {
      // No Lease yet: the first request takes the mutex at once, then cannot list the nodes that may be held.
      const stop = failReads(w, ['nodes'], 500, ['list']);
      const execution = await evacuate(w, 'node-1');
      await waitUntil('an admission attempt failed under the mutex', () =>
        admitCalls(w, 'req-node-1').some((c) => c.error?.name === 'TransientError'),
      );
      const lease = w.sim.store.get(LEASES, 'drainbridge', 'drainbridge-admission') as {
        metadata?: { annotations?: Record<string, string> };
      };
      const intents = JSON.parse(lease?.metadata?.annotations?.[INTENTS_ANNOTATION] ?? '{}') as Record<string, unknown>;
      // An intent left behind would count node-1 as held for two minutes: a slot lost to a failed attempt.
      assert.deepEqual(Object.keys(intents), [], 'the failed attempt left no admission in flight');
      stop();
      await expectSucceeded(w, execution);
      assert.deepEqual(holdsOf(w, 'node-1'), ['req-node-1']);
    },
  );

  scenario(
    'a Lease left by a holder that died: admission waits for it to expire, then proceeds',
    {
      cluster: IDLE_NODES_SCENARIO,
    },
    async (w) => {
      // 60 s of simulated time is 200 ms here: long enough that the first Admit always finds it held.
      admissionLockHeldBy(w, 'crashed-request', 60);
      const execution = await evacuate(w, 'node-1');
      await expectSucceeded(w, execution);
      assert.ok(
        admitCalls(w, 'req-node-1').some(
          (c) => c.error !== undefined && isSlotWait(c.error.name) && /crashed-request/.test(c.error.message),
        ),
        'it waited, naming the holder',
      );
    },
  );

  scenario(
    "a Lease held by this request itself (its lock's answer lost, or its attempt died before unlocking): taken again at once, nobody waits for it to expire",
    {
      cluster: IDLE_NODES_SCENARIO,
    },
    async (w) => {
      // An hour of simulated time: the request would still be waiting on it when the case times out.
      admissionLockHeldBy(w, 'req-node-1', 3600);
      const execution = await evacuate(w, 'node-1');
      await expectSucceeded(w, execution);
      const heldBySelf = admitCalls(w, 'req-node-1').filter((c) => /held by req-node-1/.test(c.error?.message ?? ''));
      assert.deepEqual(heldBySelf, [], 'never told to wait for its own lock');
      const lease = w.sim.store.get(LEASES, 'drainbridge', 'drainbridge-admission') as {
        spec?: { holderIdentity?: string };
      };
      assert.equal(lease.spec?.holderIdentity, undefined, 'the lock was released after the admission');
      assert.deepEqual(holdsOf(w, 'node-1'), ['req-node-1']);
    },
  );

  scenario(
    'every node write answered 409 eight times (a conflict storm): re-read and replanned, one hold',
    {
      cluster: WORKFLOW_SCENARIO,
    },
    async (w) => {
      await openSpareNodes(w);
      const storm = failWrites(w, { verb: 'patch', resource: 'nodes' }, 409, 8);
      const execution = await evacuate(w, 'node-1');
      await expectSucceeded(w, execution);
      assert.equal(storm.hits(), 8);
      assert.deepEqual(holdsOf(w, 'node-1'), ['req-node-1']);
    },
  );

  scenario(
    'a competing writer changes node-1 fifty times a second: every write conditional, the evacuation finishes',
    {
      cluster: WORKFLOW_SCENARIO,
    },
    async (w) => {
      await openSpareNodes(w);
      // drainbridge's first three node writes stall at the server for over two of the writer's ticks, so
      // they lose their race for certain (409) and are re-read and replanned; later ones race as they come.
      delayWrites(w, { verb: 'patch', resource: 'nodes', name: 'node-1' }, () => realMs(WRITER_PERIOD_MS * 3), 3);
      let stop = false;
      const writer = (async () => {
        for (let i = 0; !stop; i++) {
          w.sim.store.mutate(NODES, { name: 'node-1' }, (copy) => {
            copy.metadata.labels = { ...copy.metadata.labels, 'example.com/heartbeat': String(i) };
            return copy;
          });
          await new Promise((resolve) => setTimeout(resolve, WRITER_PERIOD_MS));
        }
      })();
      try {
        const execution = await evacuate(w, 'node-1');
        await execution.outcome;
        await expectSucceeded(w, execution);
      } finally {
        stop = true;
        await writer;
      }
      assert.deepEqual(holdsOf(w, 'node-1'), ['req-node-1']);
      const conflicts = w.sim.requestLog
        .all({ user: DRAINBRIDGE_SA, resource: 'nodes' })
        .filter((r) => r.status === 409);
      assert.ok(conflicts.length >= 3, `the writer made drainbridge re-read (${conflicts.length} conflicts)`);
    },
  );
});
