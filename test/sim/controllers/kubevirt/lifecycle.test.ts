/**
 * The simulated KubeVirt's VMI lifecycle, VirtualMachine run strategies and per-VMI PDBs, against
 * what KubeVirt does (template.go, the VMI and VM controllers, disruptionbudget.go).
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import {
  currentLauncher,
  eventsFor,
  getVmi,
  type KvSim,
  launchers,
  PDBS,
  PODS,
  running,
  startKubeVirtSim,
  statusOf,
  until,
  VMIS,
  VMS,
  vm,
  vmi,
} from './harness.ts';

describe('KubeVirt: VMIs and their launcher pods', () => {
  let kv: KvSim;
  beforeEach(async () => {
    kv = await startKubeVirtSim();
  });
  afterEach(async () => {
    await kv.stop();
  });

  it('runs a VMI in a virt-launcher pod labelled, annotated and owned as KubeVirt renders it', async () => {
    kv.store.create(VMIS, vmi('alpha', { strategy: 'LiveMigrate', memory: '2Gi' }));
    const started = await running(kv.store, 'alpha');
    const status = statusOf(started);
    const [pod] = launchers(kv.store, started);
    assert.ok(pod);
    assert.match(pod.metadata.name ?? '', /^virt-launcher-alpha-[a-z0-9]{5}$/);
    assert.equal(pod.metadata.labels?.['kubevirt.io'], 'virt-launcher');
    assert.equal(pod.metadata.labels?.['kubevirt.io/created-by'], started.metadata.uid);
    assert.equal(pod.metadata.labels?.['vm.kubevirt.io/name'], 'alpha');
    assert.equal(pod.metadata.labels?.['kubevirt.io/vm'], 'alpha', "the VMI's own labels are copied");
    assert.equal(pod.metadata.annotations?.['kubevirt.io/domain'], 'alpha');
    assert.deepEqual(pod.metadata.ownerReferences?.[0], {
      apiVersion: 'kubevirt.io/v1',
      kind: 'VirtualMachineInstance',
      name: 'alpha',
      uid: started.metadata.uid,
      controller: true,
      blockOwnerDeletion: true,
    });
    assert.equal((pod.spec as { terminationGracePeriodSeconds?: number }).terminationGracePeriodSeconds, 60);
    assert.equal(status.nodeName, (pod.spec as { nodeName?: string }).nodeName);
    assert.equal(started.metadata.labels?.['kubevirt.io/nodeName'], status.nodeName);
    assert.deepEqual(
      (status.phaseTransitionTimestamps as { phase: string }[]).map((t) => t.phase),
      ['Pending', 'Scheduling', 'Scheduled', 'Running'],
    );
    const conditions = Object.fromEntries((status.conditions ?? []).map((c) => [c.type, c.status]));
    assert.deepEqual(conditions, { Ready: 'True', LiveMigratable: 'True' });
    assert.equal((status.interfaces as { ipAddress?: string }[])[0]?.ipAddress, statusOf(pod).podIP);
    assert.ok(started.metadata.finalizers?.includes('kubevirt.io/foregroundDeleteVirtualMachine'));
  });

  it('reports LiveMigratable=False with the reason of the not-migratable annotation or fault', async () => {
    kv.store.create(VMIS, vmi('disky', { notMigratable: 'DisksNotLiveMigratable' }));
    kv.store.create(VMIS, vmi('faulty'));
    const disky = await running(kv.store, 'disky');
    const condition = statusOf(disky).conditions?.find((c) => c.type === 'LiveMigratable');
    assert.equal(condition?.status, 'False');
    assert.equal(condition?.reason, 'DisksNotLiveMigratable');
    assert.match(condition?.message ?? '', /live migration requires that all PVCs must be shared/);
    await running(kv.store, 'faulty');
    kv.kubevirt.faults.setNotMigratable('vms/faulty', 'HostDeviceNotLiveMigratable');
    const faulty = await until(kv.store, 'faulty not migratable', () => {
      const found = getVmi(kv.store, 'faulty');
      const c = statusOf(found).conditions?.find((x) => x.type === 'LiveMigratable');
      return c?.status === 'False' ? c : undefined;
    });
    assert.equal(faulty.reason, 'HostDeviceNotLiveMigratable');
    assert.equal(faulty.message, 'VMI uses a PCI host devices');
  });

  it('ends a VMI Succeeded when its launcher pod is deleted, and releases it once the pod is gone', async () => {
    kv.store.create(VMIS, vmi('short'));
    const started = await running(kv.store, 'short');
    const pod = currentLauncher(kv.store, started);
    assert.ok(pod);
    kv.store.delete(PODS, { namespace: 'vms', name: pod.metadata.name ?? '' });
    await until(kv.store, 'Ready=False PodTerminating', () =>
      statusOf(getVmi(kv.store, 'short')).conditions?.some((c) => c.type === 'Ready' && c.reason === 'PodTerminating'),
    );
    const ended = await until(kv.store, 'short Succeeded', () => {
      const found = getVmi(kv.store, 'short');
      return statusOf(found).phase === 'Succeeded' ? found : undefined;
    });
    await until(kv.store, 'finalizer released', () => !getVmi(kv.store, 'short')?.metadata.finalizers?.length);
    assert.ok(eventsFor(kv.store, ended).some((e) => e.reason === 'Stopped'));
  });

  it('deletes a deleted VMI’s launcher pod and removes the VMI once the pod is gone', async () => {
    kv.store.create(VMIS, vmi('gone'));
    const started = await running(kv.store, 'gone');
    kv.store.delete(VMIS, { namespace: 'vms', name: 'gone' });
    await until(kv.store, 'VMI removed', () => getVmi(kv.store, 'gone') === undefined);
    assert.deepEqual(
      launchers(kv.store, started).filter((p) => !p.metadata.deletionTimestamp),
      [],
      'no launcher pod is left running',
    );
  });
});

describe('KubeVirt: VirtualMachine run strategies', () => {
  let kv: KvSim;
  beforeEach(async () => {
    kv = await startKubeVirtSim();
  });
  afterEach(async () => {
    await kv.stop();
  });

  it('Always: a VM whose launcher pod is evicted restarts on another node when its node is cordoned', async () => {
    kv.store.create(VMS, vm('always', 'Always', { strategy: 'None' }));
    const first = await running(kv.store, 'always');
    const node = statusOf(first).nodeName ?? '';
    kv.store.mutate({ group: '', resource: 'nodes' }, { name: node }, (copy) => {
      (copy.spec as Record<string, unknown>).unschedulable = true;
      return copy;
    });
    const pod = currentLauncher(kv.store, first);
    kv.store.delete(PODS, { namespace: 'vms', name: pod?.metadata.name ?? '' });
    const second = await until(kv.store, 'a new VMI running elsewhere', () => {
      const found = getVmi(kv.store, 'always');
      return found && found.metadata.uid !== first.metadata.uid && statusOf(found).phase === 'Running'
        ? found
        : undefined;
    });
    assert.notEqual(statusOf(second).nodeName, node);
    assert.equal(second.metadata.ownerReferences?.[0]?.kind, 'VirtualMachine');
    const machine = await until(
      kv.store,
      'VM Running again',
      () => {
        const found = kv.store.get(VMS, 'vms', 'always');
        return statusOf(found).printableStatus === 'Running' ? found : undefined;
      },
      { refs: [VMS] },
    );
    const reasons = eventsFor(kv.store, machine).map((e) => e.reason);
    assert.deepEqual(
      reasons.filter((r) => r.startsWith('Successful')),
      ['SuccessfulCreate', 'SuccessfulDelete', 'SuccessfulCreate'],
    );
  });

  it('RerunOnFailure: a VM shut down by an eviction stays stopped (the guest stopped gracefully)', async () => {
    kv.store.create(VMS, vm('rerun', 'RerunOnFailure'));
    const first = await running(kv.store, 'rerun');
    const pod = currentLauncher(kv.store, first);
    kv.store.delete(PODS, { namespace: 'vms', name: pod?.metadata.name ?? '' });
    const stopped = await until(
      kv.store,
      'VM Stopped',
      () => {
        const machine = kv.store.get(VMS, 'vms', 'rerun');
        return statusOf(machine).printableStatus === 'Stopped' ? machine : undefined;
      },
      { refs: [VMS] },
    );
    assert.equal(statusOf(getVmi(kv.store, 'rerun')).phase, 'Succeeded');
    assert.equal(getVmi(kv.store, 'rerun')?.metadata.uid, first.metadata.uid, 'no new VMI was created');
    assert.equal(statusOf(stopped).ready, undefined);
  });

  it('Halted: no VMI; switching to Always starts one', async () => {
    kv.store.create(VMS, vm('halted', 'Halted'));
    await until(
      kv.store,
      'VM Stopped',
      () => statusOf(kv.store.get(VMS, 'vms', 'halted')).printableStatus === 'Stopped',
      {
        refs: [VMS],
      },
    );
    assert.equal(getVmi(kv.store, 'halted'), undefined);
    kv.store.mutate(VMS, { namespace: 'vms', name: 'halted' }, (copy) => {
      (copy.spec as Record<string, unknown>).runStrategy = 'Always';
      return copy;
    });
    await running(kv.store, 'halted');
  });
});

describe('KubeVirt: per-VMI PodDisruptionBudgets', () => {
  let kv: KvSim;
  beforeEach(async () => {
    kv = await startKubeVirtSim({ configuration: { evictionStrategy: 'None' } });
  });
  afterEach(async () => {
    await kv.stop();
  });

  const budgetOf = (name: string) => {
    const found = getVmi(kv.store, name);
    return kv.store
      .list(PDBS, { namespace: 'vms' })
      .items.find((pdb) => pdb.metadata.ownerReferences?.some((ref) => ref.uid === found?.metadata.uid));
  };

  it('protects LiveMigrate, External and migratable LiveMigrateIfPossible VMIs, not None or non-migratable ones', async () => {
    const cases: [string, Parameters<typeof vmi>[1], boolean][] = [
      ['live', { strategy: 'LiveMigrate' }, true],
      ['live-stuck', { strategy: 'LiveMigrate', notMigratable: 'DisksNotLiveMigratable' }, true],
      ['external', { strategy: 'External' }, true],
      ['possible', { strategy: 'LiveMigrateIfPossible' }, true],
      ['impossible', { strategy: 'LiveMigrateIfPossible', notMigratable: 'DisksNotLiveMigratable' }, false],
      ['none', { strategy: 'None' }, false],
      ['inherits-none', {}, false],
    ];
    for (const [name, options] of cases) kv.store.create(VMIS, vmi(name, options));
    for (const [name] of cases) await running(kv.store, name);
    await until(kv.store, 'the protected VMIs have budgets', () =>
      cases.every(([name, , protectedVmi]) => protectedVmi === (budgetOf(name) !== undefined)),
    );
    const pdb = budgetOf('live');
    const live = getVmi(kv.store, 'live');
    assert.match(pdb?.metadata.name ?? '', /^kubevirt-disruption-budget-[a-z0-9]{5}$/);
    assert.deepEqual(pdb?.spec, {
      minAvailable: 1,
      selector: { matchLabels: { 'kubevirt.io/created-by': live?.metadata.uid } },
    });
    assert.equal(pdb?.metadata.ownerReferences?.[0]?.controller, true);
    assert.ok(
      eventsFor(kv.store, live!).some(
        (e) => e.reason === 'SuccessfulCreate' && e.message.startsWith('Created PodDisruptionBudget'),
      ),
    );
    const budgetStatus = await until(kv.store, 'budget observed', () => {
      const s = statusOf(budgetOf('live'));
      return s.observedGeneration ? s : undefined;
    });
    assert.equal(budgetStatus.disruptionsAllowed, 0, 'the one launcher pod may not be disrupted');
  });

  it('follows migratability and the cluster-wide strategy', async () => {
    kv.store.create(VMIS, vmi('possible', { strategy: 'LiveMigrateIfPossible' }));
    kv.store.create(VMIS, vmi('default'));
    await running(kv.store, 'possible');
    await running(kv.store, 'default');
    await until(kv.store, 'possible protected', () => budgetOf('possible') !== undefined);
    kv.kubevirt.faults.setNotMigratable('vms/possible');
    await until(kv.store, 'budget dropped when not migratable', () => budgetOf('possible') === undefined);
    assert.equal(budgetOf('default'), undefined);
    kv.kubevirt.setEvictionStrategy('LiveMigrate');
    await until(kv.store, 'cluster default LiveMigrate protects it', () => budgetOf('default') !== undefined);
  });
});
