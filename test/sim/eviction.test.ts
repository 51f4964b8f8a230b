/**
 * The eviction subresource against the apiserver's rules (pkg/registry/core/pod/storage/eviction.go
 * and its tests): budget checks, skips, refusals with the apiserver's codes and messages, dry run.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { Simulator } from '../../sim/index.ts';
import { api, budget, eviction, PDBS, PODS, runningPod, startBare } from './helpers.ts';

const EVICT = (name: string, ns = 'default'): string => `/api/v1/namespaces/${ns}/pods/${name}/eviction`;

describe('pods/eviction', () => {
  let sim: Simulator;
  beforeEach(async () => {
    sim = await startBare();
  });
  afterEach(async () => {
    await sim.stop();
  });

  const pod = (name = 'web-1') => sim.store.get(PODS, 'default', name);
  const pdb = (name = 'web-pdb') => sim.store.mustGet(PDBS, 'default', name);

  it('evicts a pod no budget covers: graceful delete plus the DisruptionTarget condition', async () => {
    sim.store.create(PODS, runningPod('web-1'));
    const answer = await api(sim, 'POST', EVICT('web-1'), { body: eviction('web-1') });
    assert.equal(answer.status, 201);
    assert.deepEqual(answer.body, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 });
    const after = pod();
    assert.ok(after);
    assert.ok(after.metadata.deletionTimestamp, 'the pod is terminating');
    assert.equal(after.metadata.deletionGracePeriodSeconds, 30);
    const conditions = (after.status as { conditions: { type: string; reason?: string }[] }).conditions;
    assert.equal(conditions.find((c) => c.type === 'DisruptionTarget')?.reason, 'EvictionByEvictionAPI');
  });

  it('decrements disruptionsAllowed and records the pod in disruptedPods', async () => {
    sim.store.create(PODS, runningPod('web-1'));
    sim.store.create(PDBS, budget('web-pdb', { disruptionsAllowed: 1 }));
    const answer = await api(sim, 'POST', EVICT('web-1'), { body: eviction('web-1') });
    assert.equal(answer.status, 201);
    const status = pdb().status as {
      disruptionsAllowed: number;
      disruptedPods: Record<string, string>;
      conditions: { type: string; status: string; reason: string }[];
    };
    assert.equal(status.disruptionsAllowed, 0);
    assert.ok(status.disruptedPods['web-1']);
    assert.deepEqual(
      status.conditions.map((c) => [c.type, c.status, c.reason]),
      [['DisruptionAllowed', 'False', 'InsufficientPods']],
    );
  });

  it('refuses with 429 and a DisruptionBudget cause when no disruption is allowed, changing nothing', async () => {
    sim.store.create(PODS, runningPod('web-1'));
    sim.store.create(PDBS, budget('web-pdb', { disruptionsAllowed: 0, currentHealthy: 1, desiredHealthy: 1 }));
    const mark = sim.requestLog.mark();
    const answer = await api(sim, 'POST', EVICT('web-1'), { body: eviction('web-1') });
    assert.equal(answer.status, 429);
    assert.equal(answer.body.reason, 'TooManyRequests');
    assert.equal(answer.body.message, "Cannot evict pod as it would violate the pod's disruption budget.");
    assert.deepEqual((answer.body.details as { causes: unknown[] }).causes, [
      { reason: 'DisruptionBudget', message: 'The disruption budget web-pdb needs 1 healthy pods and has 1 currently' },
    ]);
    assert.equal(pod()?.metadata.deletionTimestamp, undefined);
    assert.deepEqual(sim.requestLog.writes({ since: mark }), []);
  });

  it('answers 429 "still being processed" with Retry-After 10 while observedGeneration < generation', async () => {
    sim.store.create(PODS, runningPod('web-1'));
    sim.store.create(PDBS, budget('web-pdb', { disruptionsAllowed: 1, observedGeneration: 0 }));
    const answer = await api(sim, 'POST', EVICT('web-1'), { body: eviction('web-1') });
    assert.equal(answer.status, 429);
    assert.equal(answer.headers.get('retry-after'), '10');
    const details = answer.body.details as { causes: unknown[]; retryAfterSeconds: number };
    assert.equal(details.retryAfterSeconds, 10);
    assert.deepEqual(details.causes, [
      { reason: 'DisruptionBudget', message: 'The disruption budget web-pdb is still being processed by the server.' },
    ]);
  });

  it('answers 500 when more than one budget matches the pod', async () => {
    sim.store.create(PODS, runningPod('web-1'));
    sim.store.create(PDBS, budget('a', { disruptionsAllowed: 1 }));
    sim.store.create(PDBS, budget('b', { disruptionsAllowed: 1 }));
    const answer = await api(sim, 'POST', EVICT('web-1'), { body: eviction('web-1') });
    assert.equal(answer.status, 500);
    assert.equal(
      answer.body.message,
      'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.',
    );
    assert.equal(pod()?.metadata.deletionTimestamp, undefined);
  });

  it('refuses with 403 when the budget reports negative disruptionsAllowed', async () => {
    sim.store.create(PODS, runningPod('web-1'));
    sim.store.create(PDBS, budget('web-pdb', { disruptionsAllowed: -1 }));
    const answer = await api(sim, 'POST', EVICT('web-1'), { body: eviction('web-1') });
    assert.equal(answer.status, 403);
    assert.equal(
      answer.body.message,
      'poddisruptionbudget.policy "web-pdb" is forbidden: pdb disruptions allowed is negative',
    );
  });

  for (const phase of ['Pending', 'Succeeded', 'Failed']) {
    it(`deletes a ${phase} pod without looking at a budget that allows nothing`, async () => {
      sim.store.create(PODS, runningPod('web-1', { phase, ready: false }));
      sim.store.create(PDBS, budget('web-pdb', { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 1 }));
      const answer = await api(sim, 'POST', EVICT('web-1'), { body: eviction('web-1') });
      assert.equal(answer.status, 201);
      if (phase === 'Pending')
        assert.ok(pod()?.metadata.deletionTimestamp, 'a bound Pending pod terminates gracefully');
      else assert.equal(pod(), undefined, 'a finished pod is removed at once');
      assert.equal((pdb().status as { disruptionsAllowed: number }).disruptionsAllowed, 0);
    });
  }

  it('deletes an already terminating pod without a budget check', async () => {
    sim.store.create(PODS, runningPod('web-1'));
    sim.store.delete(PODS, { namespace: 'default', name: 'web-1' });
    sim.store.create(PDBS, budget('web-pdb', { disruptionsAllowed: 0, currentHealthy: 1, desiredHealthy: 1 }));
    const answer = await api(sim, 'POST', EVICT('web-1'), { body: eviction('web-1') });
    assert.equal(answer.status, 201);
  });

  it('IfHealthyBudget (default): an unready pod goes without decrementing when the budget is healthy', async () => {
    sim.store.create(PODS, runningPod('web-1', { ready: false }));
    sim.store.create(PDBS, budget('web-pdb', { disruptionsAllowed: 0, currentHealthy: 2, desiredHealthy: 2 }));
    const answer = await api(sim, 'POST', EVICT('web-1'), { body: eviction('web-1') });
    assert.equal(answer.status, 201);
    assert.equal((pdb().status as { disruptionsAllowed: number }).disruptionsAllowed, 0);
    assert.ok(pod()?.metadata.deletionTimestamp);
  });

  it('IfHealthyBudget: an unready pod is refused when the budget is not healthy', async () => {
    sim.store.create(PODS, runningPod('web-1', { ready: false }));
    sim.store.create(PDBS, budget('web-pdb', { disruptionsAllowed: 0, currentHealthy: 1, desiredHealthy: 2 }));
    const answer = await api(sim, 'POST', EVICT('web-1'), { body: eviction('web-1') });
    assert.equal(answer.status, 429);
  });

  it('AlwaysAllow: an unready pod goes even when the budget is not healthy', async () => {
    sim.store.create(PODS, runningPod('web-1', { ready: false }));
    const spec = { unhealthyPodEvictionPolicy: 'AlwaysAllow' };
    sim.store.create(PDBS, budget('web-pdb', { disruptionsAllowed: 0, currentHealthy: 1, desiredHealthy: 2 }, spec));
    const answer = await api(sim, 'POST', EVICT('web-1'), { body: eviction('web-1') });
    assert.equal(answer.status, 201);
  });

  it('dryRun=All answers as the real eviction would and changes nothing', async () => {
    sim.store.create(PODS, runningPod('web-1'));
    sim.store.create(PDBS, budget('web-pdb', { disruptionsAllowed: 1 }));
    const before = sim.store.currentResourceVersion();
    const mark = sim.requestLog.mark();
    const answer = await api(sim, 'POST', `${EVICT('web-1')}?dryRun=All`, { body: eviction('web-1') });
    assert.equal(answer.status, 201);
    assert.equal(sim.store.currentResourceVersion(), before);
    assert.equal(pod()?.metadata.deletionTimestamp, undefined);
    assert.deepEqual(sim.requestLog.writes({ since: mark }), []);
    assert.equal(sim.requestLog.all({ since: mark })[0]?.dryRun, true);
  });

  it('dry run in deleteOptions is honoured too', async () => {
    sim.store.create(PODS, runningPod('web-1'));
    const before = sim.store.currentResourceVersion();
    const answer = await api(sim, 'POST', EVICT('web-1'), { body: eviction('web-1', { dryRun: ['All'] }) });
    assert.equal(answer.status, 201);
    assert.equal(sim.store.currentResourceVersion(), before);
  });

  it('a uid precondition that does not match is a 409 Conflict naming both uids', async () => {
    const created = sim.store.create(PODS, runningPod('web-1'));
    const answer = await api(sim, 'POST', EVICT('web-1'), {
      body: eviction('web-1', { preconditions: { uid: 'other-uid' } }),
    });
    assert.equal(answer.status, 409);
    assert.equal(
      answer.body.message,
      `Operation cannot be fulfilled on Pod "web-1": the UID in the precondition (other-uid) does not match the UID in record (${created.metadata.uid}). The object might have been deleted and then recreated`,
    );
    assert.equal(pod()?.metadata.deletionTimestamp, undefined);
  });

  it('a resourceVersion precondition that does not match is a 409 Conflict', async () => {
    sim.store.create(PODS, runningPod('web-1'));
    const answer = await api(sim, 'POST', EVICT('web-1'), {
      body: eviction('web-1', { preconditions: { resourceVersion: '1' } }),
    });
    assert.equal(answer.status, 409);
    assert.match(String(answer.body.message), /the ResourceVersion in the precondition \(1\) does not match/);
  });

  it('a missing pod is 404 NotFound', async () => {
    const answer = await api(sim, 'POST', EVICT('nope'), { body: eviction('nope') });
    assert.equal(answer.status, 404);
    assert.equal(answer.body.message, 'pods "nope" not found');
    assert.deepEqual(answer.body.details, { name: 'nope', kind: 'pods' });
  });

  it('a name that differs from the URL is 400', async () => {
    sim.store.create(PODS, runningPod('web-1'));
    const answer = await api(sim, 'POST', EVICT('web-1'), { body: eviction('other') });
    assert.equal(answer.status, 400);
    assert.equal(answer.body.message, 'name in URL does not match name in Eviction object');
  });

  it('is 403 in a terminating namespace, as the NamespaceLifecycle admission words it', async () => {
    sim.store.create(
      { group: '', resource: 'namespaces' },
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'gone' } },
    );
    sim.store.create(PODS, runningPod('a', { namespace: 'gone' }));
    sim.store.create(PODS, runningPod('b', { namespace: 'gone' }));
    sim.store.delete({ group: '', resource: 'namespaces' }, { name: 'gone' });
    const answer = await api(sim, 'POST', EVICT('a', 'gone'), {
      body: { ...eviction('a'), metadata: { name: 'a', namespace: 'gone' } },
    });
    assert.equal(answer.status, 403);
    assert.equal(
      answer.body.message,
      'pods "a" is forbidden: unable to create new content in namespace gone because it is being terminated',
    );
    assert.deepEqual((answer.body.details as { causes: unknown[] }).causes, [
      { reason: 'NamespaceTerminating', message: 'namespace gone is being terminated', field: 'metadata.namespace' },
    ]);
  });
});
