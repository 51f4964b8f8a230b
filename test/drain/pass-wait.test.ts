/**
 * A pass that waits on its watches (`waitMs`): behind a `maxUnavailable: 1` budget it evicts one pod,
 * waits for the budget to allow the next and evicts it within the same pass — from one listing, with no
 * 429 — and stops at once when the request's hold goes while it waits.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createEvictionPass } from '../../lib/branches/pods/eviction-pass.ts';
import { EvacuationAborted } from '../../lib/errors/index.ts';
import { acquireHold, releaseHold } from '../../lib/node/hold.ts';
import { MemoryProgressStore } from '../../lib/progress/memory-store.ts';
import { waitUntil } from '../support/wait.ts';
import { type DrainSim, requestFor, SA_USER, startDrainSim } from './harness.ts';

const CONTAINERS = [{ name: 'app', image: 'busybox:1.37' }];

function scenario(name: string) {
  return {
    name,
    podStartupDelaySeconds: 1,
    nodes: [{ name: 'node-1' }, { name: 'node-2', unschedulable: true }],
    namespaces: ['shop'],
    workloads: [
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'api', namespace: 'shop' },
        spec: {
          replicas: 3,
          selector: { matchLabels: { app: 'api' } },
          template: { metadata: { labels: { app: 'api' } }, spec: { containers: CONTAINERS } },
        },
      },
    ],
    pdbs: [
      {
        apiVersion: 'policy/v1',
        kind: 'PodDisruptionBudget',
        metadata: { name: 'api', namespace: 'shop' },
        spec: { maxUnavailable: 1, selector: { matchLabels: { app: 'api' } } },
      },
    ],
  };
}

async function startWithSpareNode(name: string, speed: number): Promise<DrainSim> {
  const env = await startDrainSim(scenario(name), { speed });
  env.sim.store.mutate({ group: '', resource: 'nodes' }, { name: 'node-2' }, (copy) => {
    (copy.spec as { unschedulable?: boolean }).unschedulable = false;
    return copy;
  });
  return env;
}

function requestsOf(env: DrainSim, since: number) {
  return env.sim.requestLog.all({ since, user: SA_USER });
}

describe('a pass that waits on its watches', () => {
  let env: DrainSim;
  before(async () => {
    env = await startWithSpareNode('pass-wait', 20);
  });
  after(async () => {
    await env.stop();
  });

  test('drains a maxUnavailable: 1 chain in one pass, from one listing, with no 429', async () => {
    const request = requestFor('node-1', {}, 'req-wait');
    await acquireHold(env.client, 'node-1', request);
    const pass = createEvictionPass(env.client, new MemoryProgressStore(), {
      branch: 'pods',
      infraPodSelector: '',
      waitMs: 60_000,
    });
    const mark = env.sim.requestLog.mark();
    const now = new Date(env.sim.clock.now());
    const result = await pass.run({ request, now, startedAt: now.toISOString() });
    assert.equal(result.done, true, JSON.stringify(result));
    assert.equal(result.progressed, true);
    assert.deepEqual(result.progress, { total: 3, moved: 3, inFlight: 0, skipped: 0 });
    const requests = requestsOf(env, mark);
    const evictions = requests.filter((r) => r.subresource === 'eviction');
    assert.deepEqual(
      evictions.map((r) => r.status),
      [201, 201, 201],
      'each pod asked once, when the budget allowed it',
    );
    const podLists = requests.filter((r) => r.resource === 'pods' && r.verb === 'list');
    assert.equal(podLists.length, 1, 'listed once; the watch kept the view current');
    assert.ok(
      requests.some((r) => r.resource === 'pods' && r.verb === 'watch'),
      'the pods were watched',
    );
  });

  test('stops with EvacuationCancelled when the hold goes while it waits', async () => {
    const stopped = await startWithSpareNode('pass-wait-cancel', 1);
    try {
      const request = requestFor('node-1', {}, 'req-cancel');
      await acquireHold(stopped.client, 'node-1', request);
      const pass = createEvictionPass(stopped.client, new MemoryProgressStore(), {
        branch: 'pods',
        infraPodSelector: '',
        waitMs: 60_000,
      });
      const now = new Date(stopped.sim.clock.now());
      // Its rejection is awaited below; asserted from the start so that it is never an unhandled one.
      const cancelled = assert.rejects(pass.run({ request, now, startedAt: now.toISOString() }), {
        name: 'EvacuationCancelled',
      });
      // At speed 1 the first pod takes its 30 s grace period to go: the pass is waiting when the hold goes.
      await waitUntil('the pass watches nodes', () =>
        requestsOf(stopped, 0).some((r) => r.verb === 'watch' && r.resource === 'nodes'),
      );
      const mark = stopped.sim.requestLog.mark();
      await releaseHold(stopped.client, 'node-1', 'req-cancel');
      await cancelled;
      const evictions = requestsOf(stopped, mark).filter((r) => r.subresource === 'eviction');
      assert.deepEqual(evictions, [], 'no eviction after the hold went');
    } finally {
      await stopped.stop();
    }
  });

  test('asks whether the request is still wanted while nothing changes: an abort ends the wait within seconds', async () => {
    const world = await startWithSpareNode('pass-wait-abort', 1);
    try {
      const request = requestFor('node-1', {}, 'req-abort');
      await acquireHold(world.client, 'node-1', request);
      const pass = createEvictionPass(world.client, new MemoryProgressStore(), {
        branch: 'pods',
        infraPodSelector: '',
        waitMs: 60_000,
      });
      let aborted = false;
      let asked = 0;
      const now = new Date(world.sim.clock.now());
      const started = performance.now();
      const run = pass.run({
        request,
        now,
        startedAt: now.toISOString(),
        stillWanted: async () => {
          asked++;
          if (aborted) throw new EvacuationAborted('request req-abort was aborted by a person');
        },
      });
      const stopped = assert.rejects(run, { name: 'EvacuationAborted' });
      // At speed 1 the first pod takes its 30 s grace period to go: nothing changes while the pass waits.
      await waitUntil('the pass watches nodes', () =>
        requestsOf(world, 0).some((r) => r.verb === 'watch' && r.resource === 'nodes'),
      );
      aborted = true;
      const abortedAt = performance.now();
      await stopped;
      const seconds = (performance.now() - abortedAt) / 1000;
      // It asks at most every 5 s: well before the end of its 60 s wait (load allowing some slack).
      assert.ok(seconds < 12, `stopped ${seconds.toFixed(1)} s after the abort, not at the end of its 60 s wait`);
      assert.ok(asked >= 1, 'the pass asked');
      assert.ok((performance.now() - started) / 1000 < 40, 'long before its wait was over');
    } finally {
      await world.stop();
    }
  });

  test('returns when someone uncordons the held node while it waits (the next pass records it)', async () => {
    const world = await startWithSpareNode('pass-wait-uncordon', 1);
    try {
      const request = requestFor('node-1', {}, 'req-uncordon');
      await acquireHold(world.client, 'node-1', request);
      const store = new MemoryProgressStore();
      const settings = { branch: 'pods' as const, infraPodSelector: '', waitMs: 60_000 };
      const now = () => new Date(world.sim.clock.now());
      const first = createEvictionPass(world.client, store, settings).run({
        request,
        now: now(),
        startedAt: now().toISOString(),
      });
      // At speed 1 the first pod takes its 30 s grace period to go: the pass is waiting when the uncordon comes.
      await waitUntil('the pass watches nodes', () =>
        requestsOf(world, 0).some((r) => r.verb === 'watch' && r.resource === 'nodes'),
      );
      await world.admin.patchNode('node-1', { spec: { unschedulable: false } });
      const result = await first;
      assert.equal(result.done, false);
      const next = await createEvictionPass(world.client, store, { ...settings, waitMs: 0 }).run({
        request,
        now: now(),
        startedAt: now().toISOString(),
      });
      assert.ok(
        next.blockers.some((b) => b.code === 'OutOfBandUncordon'),
        `the next pass reports the uncordon: ${JSON.stringify(next.blockers)}`,
      );
    } finally {
      await world.stop();
    }
  });
});
