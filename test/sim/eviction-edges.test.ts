/**
 * Edge cases of eviction and pod deletion that drainbridge's suites lean on, against the apiserver's
 * rules: budgets whose selector matches nothing (or everything), dry runs on every path, grace period
 * 0 (the pod goes at once), a negative grace period (1 s, as BeforeDelete makes it) and a pod deleted
 * or evicted again while it terminates (a grace period may only be shortened, measured from the first
 * deletion).
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { Simulator } from '../../sim/index.ts';
import { createStore } from '../../sim/store/index.ts';
import type { KubeObject } from '../../sim/store/types.ts';
import { steppedClock } from '../support/clock.ts';
import { api, budget, eviction, PDBS, PODS, runningPod, startBare } from './helpers.ts';

const EVICT = (name: string): string => `/api/v1/namespaces/default/pods/${name}/eviction`;
const POD_URL = (name: string): string => `/api/v1/namespaces/default/pods/${name}`;

const allowed = (pdb: KubeObject): number => (pdb.status as { disruptionsAllowed: number }).disruptionsAllowed;
const stampMs = (pod: KubeObject | undefined): number => Date.parse(pod?.metadata.deletionTimestamp ?? '');

describe('eviction and deletion edge cases', () => {
  let sim: Simulator;
  beforeEach(async () => {
    sim = await startBare();
  });
  afterEach(async () => {
    await sim.stop();
  });

  const pod = (name = 'web-1') => sim.store.get(PODS, 'default', name);
  const pdb = (name = 'web-pdb') => sim.store.mustGet(PDBS, 'default', name);

  describe('budgets that match no pods', () => {
    it('a budget whose selector matches no pods does not guard the pod: evicted, budget untouched', async () => {
      sim.store.create(PODS, runningPod('web-1'));
      const spec = { selector: { matchLabels: { app: 'nothing' } } };
      sim.store.create(PDBS, budget('web-pdb', { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 1 }, spec));
      const before = structuredClone(pdb());
      const answer = await api(sim, 'POST', EVICT('web-1'), { body: eviction('web-1') });
      assert.equal(answer.status, 201);
      assert.ok(pod()?.metadata.deletionTimestamp);
      assert.deepEqual(pdb(), before);
    });

    it('a budget without a selector matches nothing; an empty selector matches every pod', async () => {
      sim.store.create(PODS, runningPod('web-1'));
      sim.store.create(PODS, runningPod('web-2'));
      const none = budget('no-selector', { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 1 });
      delete (none.spec as { selector?: unknown }).selector;
      sim.store.create(PDBS, none);
      assert.equal((await api(sim, 'POST', EVICT('web-1'), { body: eviction('web-1') })).status, 201);
      sim.store.create(
        PDBS,
        budget('everything', { disruptionsAllowed: 0, currentHealthy: 1, desiredHealthy: 1 }, { selector: {} }),
      );
      const refused = await api(sim, 'POST', EVICT('web-2'), { body: eviction('web-2') });
      assert.equal(refused.status, 429);
      assert.match(String(refused.body.message), /would violate the pod's disruption budget/);
      assert.equal(pod('web-2')?.metadata.deletionTimestamp, undefined);
    });
  });

  describe('dryRun=All', () => {
    it('changes nothing on the path that skips budgets (a Pending pod)', async () => {
      sim.store.create(PODS, runningPod('web-1', { phase: 'Pending', ready: false }));
      const before = sim.store.currentResourceVersion();
      const answer = await api(sim, 'POST', `${EVICT('web-1')}?dryRun=All`, { body: eviction('web-1') });
      assert.equal(answer.status, 201);
      assert.equal(sim.store.currentResourceVersion(), before);
      const conditions = (sim.store.mustGet(PODS, 'default', 'web-1').status as { conditions: { type: string }[] })
        .conditions;
      assert.equal(
        conditions.some((c) => c.type === 'DisruptionTarget'),
        false,
      );
    });

    it('is still refused with 429 when the budget allows nothing', async () => {
      sim.store.create(PODS, runningPod('web-1'));
      sim.store.create(PDBS, budget('web-pdb', { disruptionsAllowed: 0, currentHealthy: 1, desiredHealthy: 1 }));
      const answer = await api(sim, 'POST', `${EVICT('web-1')}?dryRun=All`, { body: eviction('web-1') });
      assert.equal(answer.status, 429);
    });

    it('with gracePeriodSeconds=0 keeps the pod', async () => {
      sim.store.create(PODS, runningPod('web-1'));
      const before = sim.store.currentResourceVersion();
      const answer = await api(sim, 'POST', `${EVICT('web-1')}?dryRun=All`, {
        body: eviction('web-1', { gracePeriodSeconds: 0 }),
      });
      assert.equal(answer.status, 201);
      assert.ok(pod());
      assert.equal(sim.store.currentResourceVersion(), before);
    });
  });

  describe('gracePeriodSeconds', () => {
    it('0 on an eviction removes a running pod at once and still spends the budget', async () => {
      sim.store.create(PODS, runningPod('web-1'));
      sim.store.create(PDBS, budget('web-pdb', { disruptionsAllowed: 1 }));
      const answer = await api(sim, 'POST', EVICT('web-1'), { body: eviction('web-1', { gracePeriodSeconds: 0 }) });
      assert.equal(answer.status, 201);
      assert.equal(pod(), undefined);
      assert.equal(allowed(pdb()), 0);
    });

    it('0 on a DELETE removes a running pod at once', async () => {
      sim.store.create(PODS, runningPod('web-1'));
      const answer = await api(sim, 'DELETE', `${POD_URL('web-1')}?gracePeriodSeconds=0`);
      assert.equal(answer.status, 200);
      assert.equal(pod(), undefined);
    });

    it('a negative value becomes 1 second, as the apiserver makes it (not the pod own period)', async () => {
      sim.store.create(PODS, runningPod('web-1'));
      const answer = await api(sim, 'DELETE', POD_URL('web-1'), { body: { gracePeriodSeconds: -1 } });
      assert.equal(answer.status, 200);
      assert.equal(pod()?.metadata.deletionGracePeriodSeconds, 1);
    });
  });

  describe('a pod deleted while it terminates', () => {
    const startTerminating = (grace: number): KubeObject => {
      sim.store.create(PODS, runningPod('web-1'));
      sim.store.delete(PODS, { namespace: 'default', name: 'web-1' }, { gracePeriodSeconds: grace });
      return sim.store.mustGet(PODS, 'default', 'web-1');
    };

    it('a second DELETE without a grace period changes nothing and answers with the pod', async () => {
      const first = startTerminating(30);
      const answer = await api(sim, 'DELETE', POD_URL('web-1'));
      assert.equal(answer.status, 200);
      assert.equal(answer.body.kind, 'Pod');
      assert.equal(pod()?.metadata.resourceVersion, first.metadata.resourceVersion);
    });

    it('a longer grace period is ignored', async () => {
      const first = startTerminating(30);
      await api(sim, 'DELETE', POD_URL('web-1'), { body: { gracePeriodSeconds: 300 } });
      assert.equal(pod()?.metadata.deletionTimestamp, first.metadata.deletionTimestamp);
      assert.equal(pod()?.metadata.deletionGracePeriodSeconds, 30);
    });

    it('a shorter grace period moves the deadline, counted from the first deletion', async () => {
      // A clock the test moves: 50 s pass between the two deletes, so "from the first deletion" and "from
      // now" give different deadlines.
      const clock = steppedClock();
      const store = createStore({ clock });
      try {
        store.create(PODS, runningPod('web-1'));
        const key = { namespace: 'default', name: 'web-1' };
        const first = store.delete(PODS, key, { gracePeriodSeconds: 300 }).object;
        clock.advance(50_000);
        const second = store.delete(PODS, key, { gracePeriodSeconds: 100 }).object;
        assert.equal(second.metadata.deletionGracePeriodSeconds, 100);
        assert.equal(stampMs(second), stampMs(first) - 200_000);
      } finally {
        store.close();
      }
    });

    it('grace period 0 removes it at once', async () => {
      startTerminating(30);
      await api(sim, 'DELETE', `${POD_URL('web-1')}?gracePeriodSeconds=0`);
      assert.equal(pod(), undefined);
    });

    it('an eviction skips the budget, adds DisruptionTarget and leaves the deadline as it is', async () => {
      const first = startTerminating(30);
      sim.store.create(PDBS, budget('web-pdb', { disruptionsAllowed: 0, currentHealthy: 1, desiredHealthy: 1 }));
      const answer = await api(sim, 'POST', EVICT('web-1'), { body: eviction('web-1') });
      assert.equal(answer.status, 201);
      const after = sim.store.mustGet(PODS, 'default', 'web-1');
      assert.equal(after.metadata.deletionTimestamp, first.metadata.deletionTimestamp);
      const conditions = (after.status as { conditions: { type: string }[] }).conditions;
      assert.ok(conditions.some((c) => c.type === 'DisruptionTarget'));
      assert.equal(allowed(pdb()), 0);
    });

    it('an eviction with grace period 0 removes it at once', async () => {
      startTerminating(30);
      const answer = await api(sim, 'POST', EVICT('web-1'), { body: eviction('web-1', { gracePeriodSeconds: 0 }) });
      assert.equal(answer.status, 201);
      assert.equal(pod(), undefined);
    });
  });
});
