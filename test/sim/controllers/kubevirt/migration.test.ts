/**
 * The simulated migration controller and virt-handler: the phase sequence, the VMI's migrationState,
 * target pods, PDB expansion, the cluster and per-node limits, aborts by deletion, and the fault
 * hooks — against KubeVirt's migration.go, migration-create-admitter.go and live-migration-source.go.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import {
  cordon,
  eventsFor,
  finished,
  getVmi,
  type KvSim,
  launchers,
  PDBS,
  phasesOf,
  postMigration,
  running,
  startKubeVirtSim,
  statusOf,
  until,
  VMIMS,
  VMIS,
  vmi,
} from './harness.ts';

const FULL = ['Pending', 'Scheduling', 'Scheduled', 'PreparingTarget', 'TargetReady', 'Running'];

describe('KubeVirt: live migration', () => {
  let kv: KvSim;
  afterEach(async () => {
    await kv.stop();
  });

  it('moves a VMI through every phase to another node; the source launcher completes', async () => {
    kv = await startKubeVirtSim();
    kv.store.create(VMIS, vmi('mover', { strategy: 'LiveMigrate', memory: '2Gi' }));
    const before = await running(kv.store, 'mover');
    const source = statusOf(before).nodeName;
    const sourcePod = launchers(kv.store, before)[0];
    const answer = await postMigration(kv, 'mover', 'move-1');
    assert.equal(answer.status, 201, JSON.stringify(answer.body));
    const created = answer.body as { metadata: { labels: Record<string, string>; finalizers: string[] } };
    assert.equal(created.metadata.labels['kubevirt.io/vmi-name'], 'mover', "virt-api's mutator labels it");
    assert.deepEqual(created.metadata.finalizers, ['kubevirt.io/migrationJobFinalize']);
    assert.deepEqual(await finished(kv, 'move-1'), [...FULL, 'Succeeded']);
    const after = await until(kv.store, 'VMI moved', () => {
      const found = getVmi(kv.store, 'mover');
      return statusOf(found).nodeName !== source ? found : undefined;
    });
    const state = statusOf(after).migrationState as Record<string, unknown>;
    const migration = kv.store.get(VMIMS, 'vms', 'move-1');
    assert.equal(state.migrationUid, migration?.metadata.uid);
    assert.equal(state.sourceNode, source);
    assert.equal(state.targetNode, statusOf(after).nodeName);
    assert.equal(state.sourcePod, sourcePod?.metadata.name);
    assert.equal(state.completed, true);
    assert.equal(state.failed, undefined);
    assert.ok(state.startTimestamp && state.endTimestamp);
    assert.equal(after.metadata.labels?.['kubevirt.io/nodeName'], statusOf(after).nodeName);
    assert.deepEqual(statusOf(migration).migrationState, state, 'the final state is kept on the migration');
    await until(
      kv.store,
      'a final migration loses its finalizer',
      () => (kv.store.get(VMIMS, 'vms', 'move-1')?.metadata.finalizers ?? []).length === 0,
    );
    const pods = launchers(kv.store, after);
    await until(kv.store, 'the source launcher completed', () => {
      const formerSource = launchers(kv.store, after).find((p) => p.metadata.uid === sourcePod?.metadata.uid);
      return statusOf(formerSource).phase === 'Succeeded';
    });
    const target = pods.find((p) => p.metadata.labels?.['kubevirt.io/migrationJobUID'] === migration?.metadata.uid);
    assert.equal((target!.spec as { nodeName?: string }).nodeName, statusOf(after).nodeName);
    const reasons = eventsFor(kv.store, migration!).map((e) => e.reason);
    for (const reason of ['SuccessfulCreate', 'SuccessfulHandOver', 'SuccessfulMigration'])
      assert.ok(reasons.includes(reason), reason);
    assert.ok(
      eventsFor(kv.store, after).some(
        (e) =>
          e.reason === 'Migrated' &&
          e.message === `The VirtualMachineInstance migrated to node ${statusOf(after).nodeName}.`,
      ),
    );
  });

  it('while it runs, the VMI carries the migration state (the migration none); the source launcher exits a little after the move', async () => {
    kv = await startKubeVirtSim({ kubevirt: { sourceLauncherExitMs: 5000 } });
    kv.store.create(VMIS, vmi('mover', { strategy: 'LiveMigrate', migrationSeconds: 10 }));
    const before = await running(kv.store, 'mover');
    const source = statusOf(before).nodeName;
    const sourcePod = launchers(kv.store, before)[0];
    await postMigration(kv, 'mover', 'move-1');
    const migration = await until(kv.store, 'the migration runs', () => {
      const found = kv.store.get(VMIMS, 'vms', 'move-1');
      return statusOf(found).phase === 'Running' ? found : undefined;
    });
    assert.equal(
      statusOf(migration).migrationState,
      undefined,
      'KubeVirt copies the state onto the migration only when final',
    );
    const state = statusOf(getVmi(kv.store, 'mover')).migrationState as Record<string, unknown>;
    assert.equal(state.migrationUid, migration.metadata.uid);
    assert.equal(state.sourceNode, source);
    assert.match(String(state.targetNode), /^node-[123]$/);
    assert.notEqual(state.targetNode, source);
    assert.ok(state.startTimestamp, 'the transfer started');
    assert.equal(state.completed, undefined);

    await until(kv.store, 'the VMI moved', () => statusOf(getVmi(kv.store, 'mover')).nodeName !== source);
    const movedAtMs = kv.store.clock.now();
    const sourceNow = () => launchers(kv.store, before).find((p) => p.metadata.uid === sourcePod?.metadata.uid);
    assert.equal(statusOf(sourceNow()).phase, 'Running', 'the source launcher still runs as the VMI moves');
    await until(kv.store, 'the source launcher completed', () => statusOf(sourceNow()).phase === 'Succeeded');
    const exitedAfterMs = kv.store.clock.now() - movedAtMs;
    assert.ok(exitedAfterMs >= 4000 && exitedAfterMs < 8000, `it exited ${exitedAfterMs} ms after the move`);
  });

  it('expands the PDB to 2 during the migration and shrinks it back afterwards', async () => {
    kv = await startKubeVirtSim();
    kv.store.create(VMIS, vmi('guarded', { strategy: 'LiveMigrate', migrationSeconds: 60 }));
    const started = await running(kv.store, 'guarded');
    const budget = () =>
      kv.store
        .list(PDBS, { namespace: 'vms' })
        .items.find((p) => p.metadata.ownerReferences?.[0]?.uid === started.metadata.uid);
    await until(kv.store, 'budget', () => budget());
    await postMigration(kv, 'guarded', 'guard-1');
    const expanded = await until(kv.store, 'expanded', () =>
      (budget()!.spec as { minAvailable?: number }).minAvailable === 2 ? budget() : undefined,
    );
    assert.equal(expanded?.metadata.labels?.['kubevirt.io/migrationName'], 'guard-1');
    await finished(kv, 'guard-1');
    const shrunk = await until(kv.store, 'shrunk', () =>
      (budget()!.spec as { minAvailable?: number }).minAvailable === 1 ? budget() : undefined,
    );
    assert.equal(shrunk?.metadata.labels?.['kubevirt.io/migrationName'], undefined);
  });

  it('scales the transfer time with guest memory', async () => {
    kv = await startKubeVirtSim({ kubevirt: { transferBaseMs: 1000, transferMsPerGiB: 10_000 } });
    kv.store.create(VMIS, vmi('small', { memory: '1Gi' }));
    kv.store.create(VMIS, vmi('large', { memory: '4Gi' }));
    await running(kv.store, 'small');
    await running(kv.store, 'large');
    await postMigration(kv, 'small', 'small-1');
    await postMigration(kv, 'large', 'large-1');
    await finished(kv, 'small-1');
    await finished(kv, 'large-1');
    const runningMs = (name: string): number => {
      const [record] = kv.kubevirt.history.migrations((r) => r.name === name);
      const phase = (p: string) => record?.phases.find((x) => x.phase === p)?.atMs ?? Number.NaN;
      return phase('Succeeded') - phase('Running');
    };
    assert.ok(Math.abs(runningMs('small-1') - 11_000) < 1500, `small: ${runningMs('small-1')}`);
    assert.ok(Math.abs(runningMs('large-1') - 41_000) < 1500, `large: ${runningMs('large-1')}`);
  });

  it('refuses migrations virt-api refuses: missing or non-migratable VMI, one already in flight', async () => {
    kv = await startKubeVirtSim();
    kv.store.create(VMIS, vmi('stuck', { notMigratable: 'DisksNotLiveMigratable' }));
    kv.store.create(VMIS, vmi('busy', { migrationSeconds: 600 }));
    await running(kv.store, 'stuck');
    await running(kv.store, 'busy');
    const missing = await postMigration(kv, 'nobody');
    assert.equal(missing.status, 400);
    assert.equal(
      missing.body.message,
      'admission webhook "migration-create-validator.kubevirt.io" denied the request: the VMI "vms/nobody" does not exist',
    );
    assert.equal(missing.body.reason, undefined, 'a webhook denial carries no reason');
    const stuck = await postMigration(kv, 'stuck');
    assert.equal(stuck.status, 400);
    assert.match(
      String(stuck.body.message),
      /denied the request: Cannot migrate VMI, Reason: DisksNotLiveMigratable, Message: cannot migrate VMI: PVC/,
    );
    const first = await postMigration(kv, 'busy', 'busy-1');
    assert.equal(first.status, 201);
    const second = await postMigration(kv, 'busy', 'busy-2');
    assert.equal(second.status, 400);
    const uid = (first.body.metadata as { uid: string }).uid;
    assert.equal(
      second.body.message,
      `admission webhook "migration-create-validator.kubevirt.io" denied the request: in-flight migration detected. Active migration job (${uid}) is currently already in progress for VMI busy.`,
    );
  });

  it('keeps the target off cordoned and drain-tainted nodes; with none left the target stays unschedulable and the migration fails', async () => {
    kv = await startKubeVirtSim({ nodes: ['node-1', 'node-2', 'node-3'], speed: 1000 });
    kv.store.create(VMIS, vmi('pinned', { memory: '1Gi' }));
    const started = await running(kv.store, 'pinned');
    const source = statusOf(started).nodeName ?? '';
    const others = ['node-1', 'node-2', 'node-3'].filter((n) => n !== source);
    cordon(kv.store, others[0] ?? '');
    kv.store.mutate({ group: '', resource: 'nodes' }, { name: others[1] ?? '' }, (copy) => {
      (copy.spec as Record<string, unknown>).taints = [{ key: 'kubevirt.io/drain', effect: 'NoSchedule' }];
      return copy;
    });
    await postMigration(kv, 'pinned', 'nowhere');
    const target = await until(kv.store, 'unschedulable target pod', () =>
      launchers(kv.store, started).find((p) =>
        (statusOf(p).conditions ?? []).some((c) => c.type === 'PodScheduled' && c.reason === 'Unschedulable'),
      ),
    );
    assert.equal((target.spec as { nodeName?: string }).nodeName, undefined);
    assert.deepEqual(await finished(kv, 'nowhere'), ['Pending', 'Scheduling', 'Failed']);
    const migration = kv.store.get(VMIMS, 'vms', 'nowhere');
    const events = eventsFor(kv.store, migration!);
    assert.ok(events.some((e) => e.reason === 'migrationTargetPodUnschedulable'));
    assert.ok(events.some((e) => e.message === 'Migration target pod was removed during active migration.'));
    assert.equal(statusOf(getVmi(kv.store, 'pinned')).nodeName, source, 'the VMI stays on its node');
  });
});

describe('KubeVirt: migration limits', () => {
  let kv: KvSim;
  afterEach(async () => {
    await kv.stop();
  });

  it('runs at most parallelOutboundMigrationsPerNode from one node; the rest stay Pending until a slot frees', async () => {
    kv = await startKubeVirtSim({
      nodes: ['node-1', 'node-2', 'node-3'],
      configuration: { migrations: { parallelMigrationsPerCluster: 10, parallelOutboundMigrationsPerNode: 2 } },
    });
    const names = ['a', 'b', 'c', 'd', 'e'];
    for (const name of names) kv.store.create(VMIS, vmi(name, { node: 'node-1', migrationSeconds: 30 }));
    for (const name of names) await running(kv.store, name);
    // The VMIs may only leave node-1: unpin them so the targets can go elsewhere.
    for (const name of names) {
      kv.store.mutate(VMIS, { namespace: 'vms', name }, (copy) => {
        delete (copy.spec as { nodeSelector?: unknown }).nodeSelector;
        return copy;
      });
    }
    for (const name of names) assert.equal((await postMigration(kv, name, `m-${name}`)).status, 201);
    await until(kv.store, 'two past Pending, three Pending', () => {
      const phases = kv.store.list(VMIMS, { namespace: 'vms' }).items.map((m) => statusOf(m).phase);
      return (
        phases.filter((p) => p === 'Pending').length === 3 && phases.filter((p) => p && p !== 'Pending').length === 2
      );
    });
    for (const name of names) await finished(kv, `m-${name}`);
    assert.equal(kv.kubevirt.history.maxInFlight(), 5, 'all five existed unfinished at once');
    assert.equal(
      kv.kubevirt.history.maxInFlight(undefined, { from: 'Scheduling' }),
      2,
      'never more than two past Pending at once',
    );
  });

  it('runs at most parallelMigrationsPerCluster across the cluster, and follows a raised limit', async () => {
    kv = await startKubeVirtSim({
      nodes: ['node-1', 'node-2', 'node-3', 'node-4'],
      configuration: { migrations: { parallelMigrationsPerCluster: 1, parallelOutboundMigrationsPerNode: 5 } },
    });
    for (const name of ['x', 'y', 'z']) kv.store.create(VMIS, vmi(name, { migrationSeconds: 600 }));
    for (const name of ['x', 'y', 'z']) await running(kv.store, name);
    for (const name of ['x', 'y', 'z']) await postMigration(kv, name, `m-${name}`);
    await until(kv.store, 'one running, two Pending', () => {
      const phases = kv.store.list(VMIMS, { namespace: 'vms' }).items.map((m) => statusOf(m).phase);
      return phases.filter((p) => p === 'Pending').length === 2 && phases.filter((p) => p !== 'Pending').length === 1;
    });
    kv.kubevirt.setMigrationSettings({ parallelMigrationsPerCluster: 3 });
    await until(kv.store, 'all three past Pending', () =>
      kv.store.list(VMIMS, { namespace: 'vms' }).items.every((m) => statusOf(m).phase !== 'Pending'),
    );
    assert.equal(kv.kubevirt.config().parallelMigrationsPerCluster, 3);
  });
});

describe('KubeVirt: aborting by deletion', () => {
  let kv: KvSim;
  afterEach(async () => {
    await kv.stop();
  });

  it('a running migration that is deleted is aborted; the VMI stays on its source', async () => {
    kv = await startKubeVirtSim();
    kv.store.create(VMIS, vmi('stay', { migrationSeconds: 600 }));
    const started = await running(kv.store, 'stay');
    const source = statusOf(started).nodeName;
    await postMigration(kv, 'stay', 'abort-me');
    await until(kv.store, 'Running', () => statusOf(kv.store.get(VMIMS, 'vms', 'abort-me')).phase === 'Running');
    kv.store.delete(VMIMS, { namespace: 'vms', name: 'abort-me' });
    await until(kv.store, 'migration removed', () => kv.store.get(VMIMS, 'vms', 'abort-me') === undefined);
    assert.deepEqual(phasesOf(kv, 'abort-me'), [...FULL, 'Failed']);
    const after = getVmi(kv.store, 'stay');
    const state = statusOf(after).migrationState as Record<string, unknown>;
    assert.equal(statusOf(after).nodeName, source);
    assert.equal(state.abortRequested, true);
    assert.equal(state.abortStatus, 'Succeeded');
    assert.equal(state.failed, true);
    assert.equal(state.failureReason, 'Live migration aborted ');
    const [record] = kv.kubevirt.history.migrations((r) => r.name === 'abort-me');
    assert.equal(record?.migrationState?.abortStatus, 'Succeeded');
    const targets = launchers(kv.store, started).filter((p) => p.metadata.labels?.['kubevirt.io/migrationJobUID']);
    assert.ok(
      targets.every((p) => statusOf(p).phase === 'Failed'),
      'the target launcher exited',
    );
    assert.equal(statusOf(after).phase, 'Running');
  });

  it('a migration deleted while Pending is cancelled with the abort condition and never runs', async () => {
    kv = await startKubeVirtSim({ configuration: { migrations: { parallelMigrationsPerCluster: 1 } } });
    kv.store.create(VMIS, vmi('first', { migrationSeconds: 600 }));
    kv.store.create(VMIS, vmi('second'));
    await running(kv.store, 'first');
    await running(kv.store, 'second');
    await postMigration(kv, 'first', 'holds-slot');
    await until(
      kv.store,
      'slot taken',
      () =>
        statusOf(kv.store.get(VMIMS, 'vms', 'holds-slot')).phase === 'Scheduling' ||
        statusOf(kv.store.get(VMIMS, 'vms', 'holds-slot')).phase === 'Scheduled' ||
        statusOf(kv.store.get(VMIMS, 'vms', 'holds-slot')).phase === 'Running',
    );
    await postMigration(kv, 'second', 'waits');
    await until(kv.store, 'waits Pending', () => statusOf(kv.store.get(VMIMS, 'vms', 'waits')).phase === 'Pending');
    kv.store.delete(VMIMS, { namespace: 'vms', name: 'waits' });
    await until(kv.store, 'cancelled', () => kv.store.get(VMIMS, 'vms', 'waits') === undefined);
    assert.deepEqual(phasesOf(kv, 'waits'), ['Pending', 'Failed']);
    assert.equal(statusOf(getVmi(kv.store, 'second')).migrationState, undefined, 'virt-handler never saw it');
  });
});

describe('KubeVirt: fault hooks', () => {
  let kv: KvSim;
  afterEach(async () => {
    await kv.stop();
  });

  it('fails a VMI’s next N migrations with the given reason, then lets the next one succeed', async () => {
    kv = await startKubeVirtSim();
    kv.store.create(VMIS, vmi('flaky'));
    const started = await running(kv.store, 'flaky');
    const source = statusOf(started).nodeName;
    kv.kubevirt.faults.failNextMigrations('vms/flaky', 2, 'Live migration failed: unexpected EOF');
    for (const attempt of [1, 2]) {
      await postMigration(kv, 'flaky', `try-${attempt}`);
      assert.deepEqual(await finished(kv, `try-${attempt}`), [...FULL, 'Failed']);
      const state = statusOf(kv.store.get(VMIMS, 'vms', `try-${attempt}`)).migrationState as Record<string, unknown>;
      assert.equal(state.failureReason, 'Live migration failed: unexpected EOF');
      assert.equal(state.failed, true);
      assert.equal(statusOf(getVmi(kv.store, 'flaky')).nodeName, source);
    }
    await postMigration(kv, 'flaky', 'try-3');
    assert.deepEqual(await finished(kv, 'try-3'), [...FULL, 'Succeeded']);
    assert.deepEqual(kv.kubevirt.faults.pendingMigrationFaults('vms/flaky'), []);
  });

  it('a hung migration is aborted by the progress timeout of the KubeVirt CR', async () => {
    kv = await startKubeVirtSim({ configuration: { migrations: { progressTimeout: 30 } } });
    kv.store.create(VMIS, vmi('hung'));
    await running(kv.store, 'hung');
    kv.kubevirt.faults.hangNextMigrations('vms/hung');
    await postMigration(kv, 'hung', 'hang-1');
    assert.deepEqual(await finished(kv, 'hang-1'), [...FULL, 'Failed']);
    const [record] = kv.kubevirt.history.migrations((r) => r.name === 'hang-1');
    const runningAt = record?.phases.find((p) => p.phase === 'Running')?.atMs ?? 0;
    const failedAt = record?.phases.find((p) => p.phase === 'Failed')?.atMs ?? 0;
    assert.ok(failedAt - runningAt >= 31_000, `hung for ${failedAt - runningAt} ms`);
    const state = statusOf(kv.store.get(VMIMS, 'vms', 'hang-1')).migrationState as Record<string, unknown>;
    assert.equal(state.failureReason, 'Live migration stuck for 31 seconds and has been aborted');
    assert.equal(state.abortStatus, 'Succeeded');
  });

  it('a migration slower than completionTimeoutPerGiB allows is aborted', async () => {
    kv = await startKubeVirtSim({ configuration: { migrations: { completionTimeoutPerGiB: 10 } } });
    kv.store.create(VMIS, vmi('slow', { memory: '2Gi', migrationSeconds: 3600 }));
    await running(kv.store, 'slow');
    await postMigration(kv, 'slow', 'slow-1');
    assert.deepEqual(await finished(kv, 'slow-1'), [...FULL, 'Failed']);
    const state = statusOf(kv.store.get(VMIMS, 'vms', 'slow-1')).migrationState as Record<string, unknown>;
    assert.equal(state.failureReason, 'Live migration is not completed after 20 seconds and has been aborted');
  });

  it('names the VMI as namespace/name and counts as positive integers', () => {
    return startKubeVirtSim().then((started) => {
      kv = started;
      assert.throws(() => kv.kubevirt.faults.failNextMigrations('flaky', 1), /vmi: expected "namespace\/name"/);
      assert.throws(() => kv.kubevirt.faults.hangNextMigrations('vms/x', 0), /count: must be a positive integer/);
    });
  });

  it('garbage-collects all but the newest five finished migrations of a VMI', async () => {
    kv = await startKubeVirtSim({ kubevirt: { transferBaseMs: 100, transferMsPerGiB: 0 } });
    kv.store.create(VMIS, vmi('often'));
    await running(kv.store, 'often');
    for (let i = 1; i <= 7; i++) {
      await postMigration(kv, 'often', `often-${i}`);
      await finished(kv, `often-${i}`);
      await until(
        kv.store,
        'one active launcher',
        () =>
          launchers(kv.store, getVmi(kv.store, 'often')!).filter((p) => statusOf(p).phase === 'Running').length === 1,
      );
    }
    const left = await until(kv.store, 'five kept', () => {
      const names = kv.store.list(VMIMS, { namespace: 'vms' }).items.map((m) => m.metadata.name);
      return names.length === 5 ? names : undefined;
    });
    assert.deepEqual(left.sort(), ['often-3', 'often-4', 'often-5', 'often-6', 'often-7']);
    assert.equal(kv.kubevirt.history.forVmi('vms/often').length, 7, 'the history keeps them all');
  });
});
