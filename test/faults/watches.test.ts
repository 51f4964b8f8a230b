/**
 * Fault injection: the pods pass's watches. A pass evicts what the budget allows, then waits on watches
 * of the node's pods, the PodDisruptionBudgets and the node (lib/branches/pods/node-view.ts) for the next pod to
 * leave or the budget to free up. WORKFLOW_SCENARIO's web budget lets one of four pods go at a time, so
 * every pass waits. A watch that is dropped, answered 410 Expired or never opens ends the wait: the pass
 * returns, the state machine calls it again, and the next pass lists afresh — polling, with nothing
 * evicted twice and the drain finishing.
 */
import assert from 'node:assert/strict';
import { describe } from 'node:test';
import { WATCH_OPEN_TIMEOUT_MS } from '../../lib/clients/kube/watched-list.ts';
import { DRAINBRIDGE_SA } from '../support/request-log.ts';
import { waitUntil } from '../support/wait.ts';
import {
  evacuate,
  evictions,
  expectSucceeded,
  type FaultWorld,
  openSpareNodes,
  scenario,
  WORKFLOW_SCENARIO,
} from './harness.ts';

const PODS = { group: '', resource: 'pods' };
const OURS = { user: DRAINBRIDGE_SA, verbs: ['watch'] };

/** The web pods on node-1 now (the ones the drain must evict). */
function webPodsOnNode1(w: FaultWorld): string[] {
  return w.sim.store
    .list(PODS, { namespace: 'shop', labelSelector: 'app=web', fieldSelector: 'spec.nodeName=node-1' })
    .items.map((pod) => `${pod.metadata.namespace}/${pod.metadata.name}`)
    .sort();
}

/** Each of `pods` was evicted exactly once by a successful eviction, and nothing else was evicted. */
function eachEvictedOnce(w: FaultWorld, pods: readonly string[]): void {
  const seen = evictions(w);
  assert.equal(new Set(seen).size, seen.length, `a pod was evicted twice: ${seen.join(', ')}`);
  assert.deepEqual([...seen].sort(), [...pods], 'every web pod of node-1 was evicted, once');
}

/** drainbridge's requests of `verb` on `resource` since `mark` (the simulator's log). */
function requestsOf(w: FaultWorld, verb: string, resource: string, mark = 0) {
  return w.sim.requestLog.all({ since: mark, user: DRAINBRIDGE_SA, verb, resource });
}

/** Drops every watch of drainbridge's as soon as it is seen open, until the returned stop is called. */
function dropWatchesAllAlong(w: FaultWorld): { stop: () => Promise<number> } {
  let stopped = false;
  let dropped = 0;
  const dropper = (async () => {
    while (!stopped) {
      dropped += w.sim.faults.dropWatches(OURS);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await dropper;
      return dropped;
    },
  };
}

describe('fault injection: the pods pass waits on watches that fail', () => {
  scenario(
    'every watch of the pods pass dropped as it opens: each pass returns, lists again; each pod evicted once',
    { cluster: WORKFLOW_SCENARIO },
    async (w) => {
      await openSpareNodes(w);
      const pods = webPodsOnNode1(w);
      const dropper = dropWatchesAllAlong(w);
      await expectSucceeded(w, await evacuate(w, 'node-1'));
      const dropped = await dropper.stop();
      assert.ok(dropped >= 1, 'a watch of the pods pass was dropped');
      eachEvictedOnce(w, pods);
    },
  );

  scenario(
    'every watch of the pods pass answered 410 Expired: the pass polls instead, each pod evicted once',
    { cluster: WORKFLOW_SCENARIO },
    async (w) => {
      await openSpareNodes(w);
      const pods = webPodsOnNode1(w);
      w.sim.faults.expireWatches(OURS, 1000);
      const before = w.sim.faults.injected;
      await expectSucceeded(w, await evacuate(w, 'node-1'));
      const watches = requestsOf(w, 'watch', 'pods').length;
      assert.ok(watches >= 1, 'the pods pass tried to wait on its watch');
      assert.ok(w.sim.faults.injected - before >= watches, 'every watch it opened was answered 410 Expired');
      eachEvictedOnce(w, pods);
    },
  );

  scenario(
    'the pods pass opens watches that never answer: it gives up within its bound, lists again, finishes',
    { cluster: WORKFLOW_SCENARIO, throughProxy: true },
    async (w) => {
      await openSpareNodes(w);
      const pods = webPodsOnNode1(w);
      // A pass waits on three watches (pods, budgets, node), opened together: all three hang.
      const hang = w.proxy?.add({ method: 'GET', path: /[?&]watch=true(&|$)/, action: 'hang', times: 3 });
      const execution = await evacuate(w, 'node-1');
      await waitUntil('the pass opened its watches, which hang', () => (hang?.hits ?? 0) === 3, 20_000);
      const hungAt = Date.now();
      const mark = w.sim.requestLog.mark();
      await waitUntil(
        'the pass gave up on them and listed the pods afresh',
        () => requestsOf(w, 'list', 'pods', mark).some((r) => r.status === 200),
        WATCH_OPEN_TIMEOUT_MS * 3,
      );
      const waited = Date.now() - hungAt;
      assert.ok(waited < WATCH_OPEN_TIMEOUT_MS * 2, `the hung opens held the pass ${waited} ms`);
      await expectSucceeded(w, execution);
      eachEvictedOnce(w, pods);
    },
  );

  scenario(
    'watches answered 429, then 500, then 410 Expired, then dropped all along: the drain polls, each pod evicted once',
    { cluster: WORKFLOW_SCENARIO },
    async (w) => {
      await openSpareNodes(w);
      const pods = webPodsOnNode1(w);
      // A pass opens its three watches together: the first pass's three get 429, the next pass's 500,
      // the next one's 410 Expired; every later watch is dropped as soon as it is open.
      w.sim.faults.failRequests(OURS, 429, 'injected: too many requests', 3);
      w.sim.faults.failRequests(OURS, 500, 'injected: internal error', 3);
      w.sim.faults.expireWatches(OURS, 3);
      const dropper = dropWatchesAllAlong(w);
      await expectSucceeded(w, await evacuate(w, 'node-1'));
      const dropped = await dropper.stop();
      const answered = (status: number) =>
        w.sim.requestLog.all({ user: DRAINBRIDGE_SA, verb: 'watch' }).filter((r) => r.status === status).length;
      assert.deepEqual([answered(429), answered(500)], [3, 3], 'the watches were answered 429, then 500');
      assert.ok(dropped >= 1, 'watches opened after that were dropped');
      eachEvictedOnce(w, pods);
    },
  );
});
