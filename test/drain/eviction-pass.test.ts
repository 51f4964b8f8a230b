/**
 * The eviction pass's own behaviour in the simulator (beyond what kubectl does): per-pod backoff so a
 * PDB refusal is never a tight 429 loop, KubeVirt's "Eviction triggered evacuation" as in-progress,
 * the infra-pods branch, and the Evacuation record as the progress store.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createEvictionPass } from '../../lib/branches/pods/eviction-pass.ts';
import { DRAIN_STATE_FORMAT } from '../../lib/branches/pods/tracking.ts';
import { ConflictError } from '../../lib/errors/index.ts';
import { acquireHold } from '../../lib/node/hold.ts';
import { EvacuationProgressStore, type RecordUpdate } from '../../lib/progress/evacuation-store.ts';
import { StatusError } from '../../sim/index.ts';
import { type DrainSim, requestFor, runUntilSettled, SA_USER, startDrainSim } from './harness.ts';

const CONTAINERS = [{ name: 'app', image: 'busybox:1.37' }];
const LAUNCHER = { 'kubevirt.io': 'virt-launcher' };

function workload(kind: 'Deployment' | 'StatefulSet', name: string, namespace: string, replicas: number) {
  return {
    apiVersion: 'apps/v1',
    kind,
    metadata: { name, namespace },
    spec: {
      replicas,
      serviceName: name,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: CONTAINERS } },
    },
  };
}

const SCENARIO = {
  name: 'eviction-pass',
  podStartupDelaySeconds: 1,
  nodes: [{ name: 'node-1' }, { name: 'node-2', unschedulable: true }],
  namespaces: ['shop', 'openstack'],
  workloads: [workload('Deployment', 'web', 'shop', 2), workload('StatefulSet', 'nova-compute', 'openstack', 1)],
  pdbs: [
    {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: 'web', namespace: 'shop' },
      spec: { minAvailable: 2, selector: { matchLabels: { app: 'web' } } },
    },
  ],
  pods: [
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'virt-launcher-vm1', namespace: 'shop', labels: LAUNCHER },
      spec: { nodeName: 'node-1', containers: CONTAINERS },
    },
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'guarded', namespace: 'shop', labels: { app: 'guarded' } },
      spec: { nodeName: 'node-1', containers: CONTAINERS },
    },
  ],
};

describe('eviction pass in the simulator', () => {
  let env: DrainSim;
  before(async () => {
    env = await startDrainSim(SCENARIO);
    env.sim.store.mutate({ group: '', resource: 'nodes' }, { name: 'node-2' }, (copy) => {
      (copy.spec as { unschedulable?: boolean }).unschedulable = false;
      return copy;
    });
  });
  after(async () => {
    await env.stop();
  });

  test('a PDB at 0 is not asked at all: no 429 loop, the blocker names the PDB, one event per budget', async () => {
    const request = requestFor('node-1', { podSelector: 'app!=guarded' }, 'req-backoff');
    await acquireHold(env.client, 'node-1', request);
    const store = new EvacuationProgressStore(env.client);
    const admittedAt = new Date(env.sim.clock.now());
    await store.ensure(request, admittedAt);
    const pass = createEvictionPass(env.client, store, {
      branch: 'pods',
      infraPodSelector: 'app=nova-compute',
      launcherPodsBlock: true,
      recorder: store,
    });
    // What a watcher in this process sees of each round, between the pass's writes (the live display).
    const rounds: Extract<RecordUpdate, { kind: 'round' }>[] = [];
    const stopWatching = store.watch((update) => {
      if (update.kind === 'round') rounds.push(update);
    });
    const mark = env.sim.requestLog.mark();
    // Twenty passes: the PDB's status allows no disruption, so no eviction is even sent (it would be a 429).
    const now = new Date(env.sim.clock.now());
    let last = await pass.run({ request, now, startedAt: now.toISOString() });
    for (let i = 0; i < 19; i++) last = await pass.run({ request, now, startedAt: now.toISOString() });
    const evictions = env.sim.requestLog
      .all({ since: mark, user: SA_USER })
      .filter((r) => r.subresource === 'eviction');
    assert.equal(evictions.length, 0, 'no eviction request while the budget allows none');
    assert.equal(last.done, false);
    const codes = last.blockers.map((b) => b.code).sort();
    assert.deepEqual(codes, ['DisruptionBudget', 'DisruptionBudget', 'LauncherPod']);
    assert.match(
      last.blockers.find((b) => b.code === 'DisruptionBudget')?.reason ?? '',
      /PodDisruptionBudget web \(disruptionsAllowed=0\)/,
    );
    stopWatching();
    assert.equal(rounds.length, 20, 'each pass tells its round');
    assert.deepEqual(rounds.at(-1)?.progress, last.progress, 'with the counts the pass reports');
    assert.deepEqual(rounds.at(-1)?.blockers, last.blockers, 'and its blockers, before the record has them');
    const events = env.sim.store
      .list({ group: '', resource: 'events' })
      .items.filter((e) => e.reason === 'EvictionBlocked');
    assert.equal(events.length, 1, 'one Warning event for the budget holding both pods, not one per pod or per pass');
    assert.match(String(events[0]?.message ?? ''), /PodDisruptionBudget web/);
    await assert.rejects(
      pass.run({
        request: { ...request, drain: { ...request.drain, timeoutSeconds: 60 } },
        now,
        startedAt: new Date(now.getTime() - 61_000).toISOString(),
      }),
      { name: 'DeadlineExceeded', message: /did not finish within --timeout=60s/ },
    );

    // The record was written by the passes themselves (recorder), and only when it changed.
    const recordWrites = env.sim.requestLog.writes({ since: mark, user: SA_USER, resource: 'evacuations' });
    assert.ok(recordWrites.length <= 3, `record written ${recordWrites.length} times in 20 passes`);
    const record = await env.client.getEvacuation('req-backoff');
    assert.equal(record.spec.nodeName, 'node-1');
    assert.equal(record.status?.requestedAt, admittedAt.toISOString(), "requested: drainbridge's clock");
    assert.equal(record.status?.blockerCount, 3);
    assert.equal(typeof record.status?.firstBlocker, 'string');
    assert.ok(record.status?.branches?.pods?.state, 'per-pod backoff persisted in the record');
  });

  test('a 429 "Eviction triggered evacuation" (KubeVirt-style webhook) is in progress, not a blocker', async () => {
    const remove = env.sim.store.admission.add({
      name: 'evacuating-webhook',
      admit: (request) => {
        if (request.subresource !== 'eviction' || request.name !== 'guarded') return undefined;
        const message =
          'admission webhook "virt-launcher-eviction-interceptor.kubevirt.io" denied the request: Eviction triggered evacuation of VMI "shop/vm1"';
        return { status: new StatusError(429, 'TooManyRequests', message, {}) };
      },
    });
    try {
      const request = requestFor('node-1', { podSelector: 'app=guarded', force: true }, 'req-evacuating');
      const pass = createEvictionPass(env.client, new EvacuationProgressStore(env.client), {
        branch: 'pods',
        infraPodSelector: '',
      });
      const now = new Date(env.sim.clock.now());
      const first = await pass.run({ request, now, startedAt: now.toISOString() });
      const second = await pass.run({ request, now, startedAt: now.toISOString() });
      for (const result of [first, second]) {
        assert.deepEqual(result.blockers, []);
        assert.equal(result.done, false);
      }
      const asked = env.sim.requestLog
        .all({ user: SA_USER })
        .filter((r) => r.name === 'guarded' && r.subresource === 'eviction');
      assert.equal(asked.length, 1, 'asked once, then backed off');
      assert.equal(asked[0]?.status, 429);
    } finally {
      remove();
    }
  });

  test('the infra-pods branch evicts only infra pods and finishes', async () => {
    const request = requestFor('node-1', {}, 'req-backoff');
    const pass = createEvictionPass(env.client, new EvacuationProgressStore(env.client), {
      branch: 'infra-pods',
      infraPodSelector: 'app=nova-compute',
    });
    const { result } = await runUntilSettled(env.sim, pass, request);
    assert.equal(result.done, true);
    assert.deepEqual(result.progress, { total: 1, moved: 1, inFlight: 0, skipped: 0 });
    const evicted = env.sim.requestLog
      .writes({ user: SA_USER, resource: 'pods' })
      .filter((r) => r.subresource === 'eviction');
    assert.deepEqual(
      evicted.map((r) => `${r.namespace}/${r.name}`),
      ['openstack/nova-compute-0'],
    );
  });

  test('the Evacuation store refuses a write from a stale read (ConflictError)', async () => {
    const store = new EvacuationProgressStore(env.client);
    const read = await store.read('req-backoff', 'pods', DRAIN_STATE_FORMAT);
    assert.ok(read);
    await store.write('req-backoff', 'pods', { moved: {}, pods: {} }, read.version);
    await assert.rejects(store.write('req-backoff', 'pods', { moved: {}, pods: {} }, read.version), ConflictError);
    // Another branch writing in between does not disturb this branch's version.
    const fresh = await store.read('req-backoff', 'pods', DRAIN_STATE_FORMAT);
    await store.write('req-backoff', 'nova', { servers: {} }, undefined);
    await store.write('req-backoff', 'pods', { moved: {}, pods: {} }, fresh?.version);
  });
});
