/**
 * The migration controller (`pkg/virt-controller/watch/migration/migration.go`) with the simulated
 * virt-handler steps folded in. One pass looks at every migration, oldest first, so the cluster and
 * per-node limits count the migrations started earlier in the same pass — KubeVirt serialises target
 * pod creation with a lock for the same reason. Phases: Pending → Scheduling → Scheduled →
 * PreparingTarget → TargetReady → Running → Succeeded / Failed (see the step modules).
 *
 * Final migrations lose their finalizer (a deleted one is then removed by the store) and keep the
 * VMI's final `migrationState`; per VMI only the 5 newest finalized migrations are kept
 * (garbageCollectFinalizedMigrations). A migration whose VMI is gone is deleted; one whose VMI shut
 * down fails ("Migration failed vmi shutdown during migration.").
 */
import { isDeleting } from '../meta.ts';
import { WorkQueue } from '../queue.ts';
import type { Controller } from '../runtime.ts';
import { type Pod, REFS } from '../types.ts';
import {
  FINALIZERS,
  isFinalMigration,
  isFinalVmi,
  isRunningMigration,
  KV_REFS,
  LABELS,
  type Vmi,
  type Vmim,
} from './api.ts';
import { clusterConfig } from './config.ts';
import type { KubeVirtContext } from './context.ts';
import { exitDueSourceLaunchers, syncPreparingTarget, syncRunning, syncTargetReady } from './migration-handler.ts';
import { MigrationClocks, MigrationPass } from './migration-pass.ts';
import { startNew, syncPending } from './migration-start.ts';
import { syncScheduled, syncScheduling } from './migration-target.ts';
import { failMigration, stateFor } from './migration-writes.ts';
import { dropFinalizer, listMigrations, listVmis, mutateObject } from './objects.ts';

const FINALIZED_KEPT_PER_VMI = 5;

type PhaseStep = (pass: MigrationPass, vmim: Vmim, vmi: Vmi, target: Pod | undefined) => void;

/** What each non-final phase does; Running is the default (a phase this simulator does not know runs as Running). */
const PHASE_STEPS: Readonly<Record<string, PhaseStep>> = {
  '': (pass, vmim, vmi) => startNew(pass, vmim, vmi),
  Pending: syncPending,
  Scheduling: syncScheduling,
  Scheduled: syncScheduled,
  PreparingTarget: syncPreparingTarget,
  TargetReady: syncTargetReady,
  Running: syncRunning,
};
const ALL = 'all';

/** The migration's target pod: `kubevirt.io=virt-launcher`, created by the VMI, labelled with the migration uid. */
function targetPodOf(pass: MigrationPass, vmim: Vmim, vmi: Vmi): Pod | undefined {
  const selector = `${LABELS.app}=virt-launcher,${LABELS.createdBy}=${vmi.metadata.uid},${LABELS.migrationJobUid}=${vmim.metadata.uid}`;
  const pods = pass.kv.context.store.list(REFS.pods, { namespace: vmim.metadata.namespace, labelSelector: selector });
  return pods.items[0] as Pod | undefined;
}

/** A final migration: keep the VMI's final state on it and drop the finalizer. */
function finalize(pass: MigrationPass, vmim: Vmim, vmi: Vmi | undefined): void {
  const state = vmi ? stateFor(vmi, vmim) : undefined;
  const needsState = state !== undefined && state.completed === true && vmim.status?.migrationState === undefined;
  if (!needsState && !vmim.metadata.finalizers?.includes(FINALIZERS.migration)) return;
  mutateObject(pass.kv.context.store, KV_REFS.vmims, vmim, (copy) => {
    if (needsState) copy.status = { ...copy.status, migrationState: structuredClone(state) };
    dropFinalizer(copy.metadata, FINALIZERS.migration);
  });
}

/** A migration whose VMI is gone: deleted (and released, since nothing will finish it). */
function orphaned(pass: MigrationPass, vmim: Vmim): void {
  const { store } = pass.kv.context;
  const key = { namespace: vmim.metadata.namespace, name: vmim.metadata.name };
  if (!isDeleting(vmim)) store.delete(KV_REFS.vmims, key);
  const current = store.get(KV_REFS.vmims, key.namespace, key.name);
  if (current) finalize(pass, current as Vmim, undefined);
}

function step(pass: MigrationPass, vmim: Vmim): void {
  const vmi = pass.vmiOf(vmim);
  if (isFinalMigration(vmim)) {
    finalize(pass, vmim, vmi);
    return;
  }
  if (!vmi) {
    orphaned(pass, vmim);
    return;
  }
  if (isFinalVmi(vmi) && !stateFor(vmi, vmim)?.completed) {
    failMigration(pass, vmim, 'Migration failed vmi shutdown during migration.');
    return;
  }
  const sync = PHASE_STEPS[vmim.status?.phase ?? ''] ?? syncRunning;
  sync(pass, vmim, vmi, targetPodOf(pass, vmim, vmi));
}

/** Deletes the oldest finalized migrations of each VMI beyond the newest five. */
function collectGarbage(pass: MigrationPass): void {
  const byVmi = new Map<string, Vmim[]>();
  const { store } = pass.kv.context;
  for (const vmim of listMigrations(store)) {
    if (!isFinalMigration(vmim) || isDeleting(vmim)) continue;
    const key = `${vmim.metadata.namespace}/${vmim.spec.vmiName}`;
    byVmi.set(key, [...(byVmi.get(key) ?? []), vmim]);
  }
  for (const finalized of byVmi.values()) {
    for (const old of finalized.slice(0, Math.max(0, finalized.length - FINALIZED_KEPT_PER_VMI))) {
      store.delete(KV_REFS.vmims, { namespace: old.metadata.namespace, name: old.metadata.name });
    }
  }
}

function runPass(kv: KubeVirtContext, clocks: MigrationClocks): number | undefined {
  const { store } = kv.context;
  const migrations = listMigrations(store);
  const pass = new MigrationPass(kv, clusterConfig(store), clocks, { vmis: listVmis(store), migrations });
  exitDueSourceLaunchers(pass);
  // Migrations already past Pending count against the limits before any Pending one is looked at.
  for (const vmim of migrations.filter(isRunningMigration)) pass.countRunning(vmim);
  for (const vmim of migrations) {
    const current = store.get(KV_REFS.vmims, vmim.metadata.namespace, vmim.metadata.name) as Vmim | undefined;
    if (current) step(pass, current);
  }
  collectGarbage(pass);
  clocks.retain(
    new Set(
      listMigrations(store)
        .filter((m) => !isFinalMigration(m))
        .map((m) => m.metadata.uid ?? ''),
    ),
  );
  return pass.requeueAfterMs();
}

/** Starts the migration controller: any migration, VMI, pod or KubeVirt CR change triggers a pass. */
export function startMigrationController(kv: KubeVirtContext): Controller {
  const { context } = kv;
  const clocks = new MigrationClocks();
  const queue = new WorkQueue({
    name: 'kubevirt-migration',
    clock: context.store.clock,
    onError: context.options.onError,
    reconcile: () => {
      const after = runPass(kv, clocks);
      return after === undefined ? undefined : { requeueAfterMs: after };
    },
  });
  const trigger = (): void => queue.add(ALL);
  const unsubscribes = [
    context.subscribe(KV_REFS.vmims, trigger),
    context.subscribe(KV_REFS.vmis, trigger),
    context.subscribe(KV_REFS.kubevirts, trigger),
    context.subscribe(REFS.pods, (event) => {
      if (event.object.metadata.labels?.[LABELS.app] === 'virt-launcher') trigger();
    }),
  ];
  return {
    stop() {
      for (const unsubscribe of unsubscribes) unsubscribe();
      queue.stop();
    },
  };
}
