/**
 * kubectl's clock in one pods pass (lib/branches/pods/wake.ts): a pass waiting on a PodDisruptionBudget ends at the
 * drain's --timeout, not at the end of its wait; a pass whose wait ends just before the limit asks to be
 * called again at once (callAgainNow), so that no retry backoff carries the drain past it; and one whose
 * limit is further away does not. Real time (speed 1), as drainbridge's ServiceAccount.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createEvictionPass } from '../../lib/branches/pods/eviction-pass.ts';
import { acquireHold } from '../../lib/node/hold.ts';
import { MemoryProgressStore } from '../../lib/progress/memory-store.ts';
import { type DrainSim, requestFor, startDrainSim } from './harness.ts';

const CONTAINERS = [{ name: 'app', image: 'busybox:1.37' }];
const WAIT_MS = 1_500;

const SCENARIO = {
  name: 'pass-limits',
  podStartupDelaySeconds: 1,
  nodes: [{ name: 'node-1' }, { name: 'node-2' }],
  namespaces: ['shop'],
  workloads: [
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'db', namespace: 'shop' },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'db' } },
        template: {
          metadata: { labels: { app: 'db' } },
          spec: { nodeSelector: { 'kubernetes.io/hostname': 'node-1' }, containers: CONTAINERS },
        },
      },
    },
  ],
  pdbs: [
    {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: 'db', namespace: 'shop' },
      spec: { minAvailable: 1, selector: { matchLabels: { app: 'db' } } },
    },
  ],
};

describe('a pods pass keeps kubectl’s clock', () => {
  let env: DrainSim;
  before(async () => {
    env = await startDrainSim(SCENARIO, { speed: 1 });
  });
  after(async () => {
    await env.stop();
  });

  function passFor(requestId: string, timeoutSeconds: number) {
    const request = requestFor('node-1', { timeoutSeconds }, requestId);
    const pass = createEvictionPass(env.client, new MemoryProgressStore(), {
      branch: 'pods',
      infraPodSelector: '',
      waitMs: WAIT_MS,
    });
    return { request, pass };
  }

  test('a limit after this wait but within the next: called again at once, then ends at the limit', async () => {
    const { request, pass } = passFor('req-soon', 2);
    await acquireHold(env.client, 'node-1', request);
    const startedAt = new Date(env.sim.clock.now()).toISOString();
    const first = await pass.run({ request, now: new Date(env.sim.clock.now()), startedAt });
    assert.equal(first.done, false);
    assert.ok(
      first.blockers.some((b) => b.code === 'DisruptionBudget'),
      'held by the budget',
    );
    assert.equal(first.callAgainNow, true, 'the limit comes due within the next wait');
    const second = pass.run({ request, now: new Date(env.sim.clock.now()), startedAt });
    await assert.rejects(second, { name: 'DeadlineExceeded', message: /--timeout=2s/ });
    const late = env.sim.clock.now() - Date.parse(startedAt) - 2_000;
    assert.ok(late >= 0 && late < 500, `ends at the limit (${late} ms after it)`);
  });

  test('a limit beyond the next wait: the workflow retries as before', async () => {
    const { request, pass } = passFor('req-later', 60);
    await acquireHold(env.client, 'node-1', request);
    const now = new Date(env.sim.clock.now());
    const result = await pass.run({ request, now, startedAt: now.toISOString() });
    assert.equal(result.done, false);
    assert.equal(result.callAgainNow, undefined);
  });
});
