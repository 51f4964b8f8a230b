/**
 * The writes the migration controller and the simulated virt-handler make: a migration's phase (with
 * its transition timestamp, as `SetVMIMigrationPhaseTransitionTimestamp` keeps them), a failure with
 * its event, the VMI's `status.migrationState`, and the expansion of the VMI's PDB to protect both
 * pods while they run (`expandPDB` in `pkg/virt-controller/watch/migration/migration.go`).
 */
import { isDeleting } from '../meta.ts';
import { tolerateRace } from '../runtime.ts';
import { type Pod, REFS } from '../types.ts';
import { KV_REFS, LABELS, type MigrationPhase, type MigrationState, type Vmi, type Vmim } from './api.ts';
import { recorders } from './context.ts';
import { budgetsOf } from './disruption-budget.ts';
import type { MigrationPass } from './migration-pass.ts';
import { mutateObject, writePodStatus } from './objects.ts';

/** Writes the migration's phase (and whatever else `change` sets); returns it as stored. */
export function setPhase(
  pass: MigrationPass,
  vmim: Vmim,
  phase: MigrationPhase,
  change: (copy: Vmim) => void = () => {},
): Vmim | undefined {
  const now = pass.nowIso;
  const written = mutateObject(pass.kv.context.store, KV_REFS.vmims, vmim, (copy) => {
    const status = { ...copy.status };
    if (status.phase !== phase) {
      status.phaseTransitionTimestamps = [
        ...(status.phaseTransitionTimestamps ?? []),
        { phase, phaseTransitionTimestamp: now },
      ];
      status.phase = phase;
    }
    copy.status = status;
    change(copy);
  });
  if (written) pass.clocks.entered(written, phase, pass.nowMs);
  return written;
}

/** The `migrationAbortRequested` condition KubeVirt adds to a deleted migration. */
export function withAbortRequested(copy: Vmim, nowIso: string): void {
  const conditions = (copy.status?.conditions ?? []).filter((c) => c.type !== 'migrationAbortRequested');
  conditions.push({ type: 'migrationAbortRequested', status: 'True', lastProbeTime: nowIso });
  copy.status = { ...copy.status, conditions };
}

/** Fails the migration with a Warning `FailedMigration` event worded by the caller. */
export function failMigration(
  pass: MigrationPass,
  vmim: Vmim,
  message: string,
  change: (copy: Vmim) => void = () => {},
): void {
  recorders(pass.kv).migration.record(vmim, 'Warning', 'FailedMigration', message);
  setPhase(pass, vmim, 'Failed', change);
}

/** Changes the VMI's `status.migrationState` (created empty when missing). */
export function updateMigrationState(
  pass: MigrationPass,
  vmi: Vmi,
  change: (state: MigrationState, copy: Vmi) => void,
): Vmi | undefined {
  return mutateObject(pass.kv.context.store, KV_REFS.vmis, vmi, (copy) => {
    const state: MigrationState = { ...copy.status?.migrationState };
    change(state, copy);
    copy.status = { ...copy.status, migrationState: state };
  });
}

/** The migration state the VMI holds for this migration, if it is this migration's. */
export function stateFor(vmi: Vmi, vmim: Vmim): MigrationState | undefined {
  const state = vmi.status?.migrationState;
  return state && state.migrationUid === vmim.metadata.uid ? state : undefined;
}

/** Expands the VMI's PDB to protect source and target pod during the migration. */
export function expandBudget(pass: MigrationPass, vmi: Vmi, vmim: Vmim): void {
  const budgets = budgetsOf(pass.kv, vmi.metadata.namespace, vmi.metadata.uid).filter((b) => !isDeleting(b));
  for (const pdb of budgets) {
    const spec = pdb.spec as { minAvailable?: number };
    if (spec.minAvailable === 2 && pdb.metadata.labels?.[LABELS.migrationName] === vmim.metadata.name) continue;
    mutateObject(pass.kv.context.store, REFS.pdbs, pdb, (copy) => {
      (copy.spec as { minAvailable?: number }).minAvailable = 2;
      copy.metadata.labels = { ...copy.metadata.labels, [LABELS.migrationName]: vmim.metadata.name };
    });
    const message = `Expanded PodDisruptionBudget ${pdb.metadata.name}`;
    recorders(pass.kv).migration.record(vmi, 'Normal', 'SuccessfulUpdate', message);
  }
}

/** Deletes the migration's target pod (cancel before hand-off, timed-out Pending pod). */
export function deleteTargetPod(pass: MigrationPass, vmim: Vmim, pod: Pod, message: string): void {
  const key = { namespace: pod.metadata.namespace, name: pod.metadata.name ?? '' };
  tolerateRace(() => pass.kv.context.store.delete(REFS.pods, key));
  recorders(pass.kv).migration.record(vmim, 'Normal', 'SuccessfulDelete', message);
}

/** A launcher that exited (the source after a successful migration, a target after a failed one). */
export function exitLauncher(pass: MigrationPass, pod: Pod, phase: 'Succeeded' | 'Failed'): void {
  const now = pass.nowIso;
  const containerStatuses = (pod.status?.containerStatuses ?? []).map((status) => ({
    ...status,
    ready: false,
    started: false,
    state: {
      terminated: {
        exitCode: phase === 'Succeeded' ? 0 : 1,
        reason: phase === 'Succeeded' ? 'Completed' : 'Error',
        startedAt: (status.state.running as { startedAt?: string } | undefined)?.startedAt ?? now,
        finishedAt: now,
      },
    },
  }));
  const conditions = (pod.status?.conditions ?? []).map((c) =>
    c.type === 'Ready' || c.type === 'ContainersReady'
      ? { ...c, status: 'False', reason: 'PodCompleted', lastTransitionTime: now }
      : c,
  );
  writePodStatus(pass.kv.context.store, pod, { ...pod.status, phase, conditions, containerStatuses });
}
