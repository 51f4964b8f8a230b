/**
 * virt-api's pod eviction admitter and KubeVirt's evacuation controller through the simulator's API:
 * the answer per eviction strategy (pod-eviction-admitter.go, docs/handling-eviction-requests.md), the
 * evacuation mark, the migration the evacuation controller creates, and the drain taint.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import {
  currentLauncher,
  eventsFor,
  evict,
  getVmi,
  type KvSim,
  launchers,
  running,
  startKubeVirtSim,
  statusOf,
  until,
  VMIMS,
  VMIS,
  VMS,
  vm,
  vmi,
} from './harness.ts';

const INTERCEPTOR = 'admission webhook "virt-launcher-eviction-interceptor.kubevirt.io" denied the request';

describe('KubeVirt: evicting virt-launcher pods', () => {
  let kv: KvSim;
  beforeEach(async () => {
    kv = await startKubeVirtSim({ configuration: { evictionStrategy: 'None' } });
  });
  afterEach(async () => {
    await kv.stop();
  });

  const launcherOf = async (name: string) => {
    const started = await running(kv.store, name);
    const pod = currentLauncher(kv.store, started);
    assert.ok(pod, `${name} has a launcher`);
    return { vmi: started, pod };
  };

  it('LiveMigrate: 429 "Eviction triggered evacuation", the VMI marked, then migrated by the evacuation controller', async () => {
    kv.store.create(VMIS, vmi('lm', { strategy: 'LiveMigrate' }));
    const { vmi: started, pod } = await launcherOf('lm');
    const source = statusOf(started).nodeName;
    const first = await evict(kv, pod);
    assert.equal(first.status, 429);
    assert.equal(first.body.message, `${INTERCEPTOR}: Eviction triggered evacuation of VMI "vms/lm"`);
    assert.equal(first.body.reason, undefined);
    assert.equal(statusOf(getVmi(kv.store, 'lm')).evacuationNodeName, source);
    const again = await evict(kv, pod);
    assert.equal(again.status, 429);
    assert.equal(
      again.body.message,
      `${INTERCEPTOR}: Evacuation in progress: Eviction triggered evacuation of VMI "vms/lm"`,
    );
    const migration = await until(kv.store, 'an evacuation migration', () =>
      kv.store.list(VMIMS, { namespace: 'vms' }).items.find((m) => (m.spec as { vmiName?: string }).vmiName === 'lm'),
    );
    assert.match(migration.metadata.name ?? '', /^kubevirt-evacuation-[a-z0-9]{5}$/);
    assert.equal(migration.metadata.annotations?.['kubevirt.io/evacuationMigration'], source);
    const moved = await until(kv.store, 'migrated off the node', () => {
      const found = getVmi(kv.store, 'lm');
      return statusOf(found).nodeName !== source && statusOf(found).phase === 'Running' ? found : undefined;
    });
    assert.equal(statusOf(moved).evacuationNodeName, undefined, 'the mark is cleared once migrated');
    assert.ok(
      eventsFor(kv.store, moved).some(
        (e) => e.reason === 'SuccessfulCreate' && e.message === `Created Migration ${migration.metadata.name}`,
      ),
    );
    await until(
      kv.store,
      'the source launcher completed',
      () =>
        statusOf(kv.store.get({ group: '', resource: 'pods' }, 'vms', pod.metadata.name ?? '')).phase === 'Succeeded',
    );
    const last = await evict(kv, pod);
    assert.equal(last.status, 201, 'a completed launcher is evicted like any finished pod');
  });

  it('LiveMigrate but not migratable: 429 naming the VMI; nothing is marked', async () => {
    kv.store.create(VMIS, vmi('stuck', { strategy: 'LiveMigrate', notMigratable: 'DisksNotLiveMigratable' }));
    const { pod } = await launcherOf('stuck');
    const answer = await evict(kv, pod);
    assert.equal(answer.status, 429);
    assert.equal(
      answer.body.message,
      `${INTERCEPTOR}: VMI stuck is configured with an eviction strategy but is not live-migratable`,
    );
    assert.equal(statusOf(getVmi(kv.store, 'stuck')).evacuationNodeName, undefined);
  });

  it('External: marked and refused, but no migration is created (the external controller acts)', async () => {
    // Both on one node: the evacuation controller syncs per node, so the witness's migration shows a
    // pass over the node happened after the External VMI was marked.
    kv.store.create(VMIS, vmi('ext', { strategy: 'External', node: 'node-2' }));
    kv.store.create(VMIS, vmi('witness', { strategy: 'LiveMigrate', node: 'node-2' }));
    const { pod } = await launcherOf('ext');
    const { pod: witnessPod } = await launcherOf('witness');
    const answer = await evict(kv, pod);
    assert.equal(answer.status, 429);
    assert.equal(answer.body.message, `${INTERCEPTOR}: Eviction triggered evacuation of VMI "vms/ext"`);
    assert.ok(statusOf(getVmi(kv.store, 'ext')).evacuationNodeName);
    await evict(kv, witnessPod);
    await until(kv.store, 'the witness migration', () =>
      kv.store
        .list(VMIMS, { namespace: 'vms' })
        .items.some((m) => (m.spec as { vmiName?: string }).vmiName === 'witness'),
    );
    assert.equal(
      kv.store.list(VMIMS, { namespace: 'vms' }).items.filter((m) => (m.spec as { vmiName?: string }).vmiName === 'ext')
        .length,
      0,
    );
  });

  it('None: the eviction goes through and the VM is restarted elsewhere by its Always run strategy', async () => {
    kv.store.create(VMS, vm('plain', 'Always', { strategy: 'None' }));
    const { vmi: started, pod } = await launcherOf('plain');
    const node = statusOf(started).nodeName ?? '';
    kv.store.mutate({ group: '', resource: 'nodes' }, { name: node }, (copy) => {
      (copy.spec as Record<string, unknown>).unschedulable = true;
      return copy;
    });
    const answer = await evict(kv, pod);
    assert.equal(answer.status, 201);
    const again = await until(kv.store, 'restarted elsewhere', () => {
      const found = getVmi(kv.store, 'plain');
      return found?.metadata.uid !== started.metadata.uid && statusOf(found).phase === 'Running' ? found : undefined;
    });
    assert.notEqual(statusOf(again).nodeName, node);
  });

  it('LiveMigrateIfPossible: migratable ones are evacuated, non-migratable ones evicted', async () => {
    kv.store.create(VMIS, vmi('can', { strategy: 'LiveMigrateIfPossible' }));
    kv.store.create(
      VMIS,
      vmi('cannot', { strategy: 'LiveMigrateIfPossible', notMigratable: 'HostDeviceNotLiveMigratable' }),
    );
    const can = await launcherOf('can');
    const cannot = await launcherOf('cannot');
    assert.equal(
      (await evict(kv, can.pod)).body.message,
      `${INTERCEPTOR}: Eviction triggered evacuation of VMI "vms/can"`,
    );
    assert.equal((await evict(kv, cannot.pod)).status, 201);
    await until(kv.store, 'cannot shut down', () => statusOf(getVmi(kv.store, 'cannot')).phase === 'Succeeded');
  });

  it('a dry-run eviction is answered the same but marks nothing', async () => {
    kv.store.create(VMIS, vmi('dry', { strategy: 'LiveMigrate' }));
    const { pod } = await launcherOf('dry');
    const answer = await evict(kv, pod, true);
    assert.equal(answer.status, 429);
    assert.equal(answer.body.message, `${INTERCEPTOR}: Eviction triggered evacuation of VMI "vms/dry"`);
    assert.equal(statusOf(getVmi(kv.store, 'dry')).evacuationNodeName, undefined);
  });

  it('evicting a migration target pod is refused', async () => {
    kv.store.create(VMIS, vmi('tgt', { strategy: 'LiveMigrate', migrationSeconds: 600 }));
    const { vmi: started, pod } = await launcherOf('tgt');
    await evict(kv, pod);
    const target = await until(kv.store, 'target pod running', () =>
      launchers(kv.store, started).find(
        (p) => p.metadata.labels?.['kubevirt.io/migrationJobUID'] && statusOf(p).phase === 'Running',
      ),
    );
    kv.store.mutate(VMIS, { namespace: 'vms', name: 'tgt' }, (copy) => {
      const status = copy.status as Record<string, unknown>;
      delete status.evacuationNodeName;
      return copy;
    });
    const answer = await evict(kv, target);
    assert.equal(answer.body.message, `${INTERCEPTOR}: Eviction request for target Pod`);
  });
});

describe('KubeVirt: the evacuation controller', () => {
  let kv: KvSim;
  afterEach(async () => {
    await kv.stop();
  });

  it('migrates every LiveMigrate VMI off a node tainted kubevirt.io/drain, within the per-node limit', async () => {
    kv = await startKubeVirtSim({
      configuration: { migrations: { parallelOutboundMigrationsPerNode: 2, parallelMigrationsPerCluster: 5 } },
    });
    const names = ['t1', 't2', 't3', 't4'];
    for (const name of names)
      kv.store.create(VMIS, vmi(name, { strategy: 'LiveMigrate', node: 'node-1', migrationSeconds: 20 }));
    kv.store.create(VMIS, vmi('t-none', { strategy: 'None', node: 'node-1' }));
    for (const name of [...names, 't-none']) await running(kv.store, name);
    for (const name of names) {
      kv.store.mutate(VMIS, { namespace: 'vms', name }, (copy) => {
        delete (copy.spec as { nodeSelector?: unknown }).nodeSelector;
        return copy;
      });
    }
    kv.store.mutate({ group: '', resource: 'nodes' }, { name: 'node-1' }, (copy) => {
      (copy.spec as Record<string, unknown>).taints = [{ key: 'kubevirt.io/drain', effect: 'NoSchedule' }];
      return copy;
    });
    await until(kv.store, 'all four off node-1', () =>
      names.every((name) => statusOf(getVmi(kv.store, name)).nodeName !== 'node-1'),
    );
    const evacuations = kv.kubevirt.history.migrations(
      (r) => r.annotations['kubevirt.io/evacuationMigration'] === 'node-1',
    );
    assert.equal(evacuations.length, 4);
    // KubeVirt's evacuation controller counts only migrations past Pending, so it may create more
    // than the limit; the migration controller then holds the excess Pending.
    assert.equal(kv.kubevirt.history.maxInFlight(undefined, { from: 'Scheduling' }), 2);
    assert.equal(statusOf(getVmi(kv.store, 't-none')).nodeName, 'node-1', 'a None VMI is not migrated');
  });

  it('retries a failed evacuation after KubeVirt’s backoff until it succeeds', async () => {
    kv = await startKubeVirtSim();
    kv.store.create(VMIS, vmi('retry', { strategy: 'LiveMigrate' }));
    const started = await running(kv.store, 'retry');
    kv.kubevirt.faults.failNextMigrations('vms/retry', 2);
    const pod = currentLauncher(kv.store, started);
    assert.ok(pod);
    await evict(kv, pod);
    await kv.kubevirt.history.when(
      (h) => h.forVmi('vms/retry').some((r) => r.phases.some((p) => p.phase === 'Succeeded')),
      600_000,
    );
    assert.notEqual(statusOf(getVmi(kv.store, 'retry')).nodeName, statusOf(started).nodeName);
    const tries = kv.kubevirt.history.forVmi('vms/retry');
    assert.deepEqual(
      tries.map((t) => t.phases.at(-1)?.phase),
      ['Failed', 'Failed', 'Succeeded'],
    );
    const failedAt = (i: number) => tries[i]?.phases.find((p) => p.phase === 'Failed')?.atMs ?? 0;
    const createdAt = (i: number) => tries[i]?.createdAtMs ?? 0;
    const startedAt = (i: number) => tries[i]?.phases.find((p) => p.phase === 'Scheduling')?.atMs ?? 0;
    assert.ok(startedAt(1) - failedAt(0) >= 19_000, 'the second waits out the 20 s backoff');
    assert.ok(startedAt(2) - failedAt(1) >= 39_000, 'the third waits 40 s');
    assert.ok(createdAt(1) >= failedAt(0));
    assert.ok(eventsFor(kv.store, getVmi(kv.store, 'retry')!).some((e) => e.reason === 'MigrationBackoff'));
  });
});
