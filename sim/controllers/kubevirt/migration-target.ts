/**
 * The target-pod phases of a migration (`pkg/virt-controller/watch/migration/migration.go`):
 *
 * - `Scheduling` → `Scheduled` once the target pod is Running and Ready. A target pod that stays
 *   unschedulable for 5 minutes, or Pending for 15, is deleted (handlePendingPodTimeout); a target
 *   pod that disappears or goes down fails the migration.
 * - `Scheduled`: hand-off — the VMI gets `status.migrationState` (migration uid, source and target
 *   node and pod, the migration configuration) and the `kubevirt.io/migrationTargetNodeName` label,
 *   then `PreparingTarget` (handleTargetPodHandoff).
 * - A migration deleted before hand-off is cancelled: its target pod is deleted and it fails with the
 *   `migrationAbortRequested` condition (handlePreHandoffMigrationCancel).
 */
import { isDeleting, isTerminal } from '../meta.ts';
import type { Pod } from '../types.ts';
import { LABELS, type Vmi, type Vmim } from './api.ts';
import { recorders } from './context.ts';
import type { MigrationPass } from './migration-pass.ts';
import {
  deleteTargetPod,
  failMigration,
  setPhase,
  updateMigrationState,
  withAbortRequested,
} from './migration-writes.ts';
import { currentPodOf, isServing, launcherPodsOf } from './objects.ts';

/** Cancels a migration that was deleted before virt-handler got it. */
export function cancelBeforeHandOff(pass: MigrationPass, vmim: Vmim, target: Pod | undefined): void {
  if (target && !isDeleting(target)) {
    const message = `migration canceled and pod ${target.metadata.namespace}/${target.metadata.name} is deleted`;
    deleteTargetPod(pass, vmim, target, message);
  }
  const now = pass.nowIso;
  failMigration(pass, vmim, 'Migration failed due to being canceled', (copy) => withAbortRequested(copy, now));
}

/** Fails the migration when its target pod is gone or down; true when it did. */
export function failOnLostTarget(pass: MigrationPass, vmim: Vmim, target: Pod | undefined): boolean {
  if (!target) {
    failMigration(pass, vmim, 'Migration target pod was removed during active migration.');
    return true;
  }
  if (isTerminal(target)) {
    failMigration(pass, vmim, 'Migration failed because target pod shutdown during migration');
    return true;
  }
  return false;
}

function isUnschedulable(pod: Pod): boolean {
  return (pod.status?.conditions ?? []).some(
    (c) => c.type === 'PodScheduled' && c.status === 'False' && c.reason === 'Unschedulable',
  );
}

/** Deletes a target pod Pending for too long (the migration then fails on the lost target). */
function handlePendingTarget(pass: MigrationPass, vmim: Vmim, vmi: Vmi, target: Pod): void {
  if (target.status?.phase !== 'Pending' || isDeleting(target)) return;
  const { unschedulableTargetTimeoutMs, pendingTargetTimeoutMs } = pass.kv.timings;
  const pendingMs = pass.nowMs - pass.clocks.since(vmim, pass.nowMs);
  const name = `${target.metadata.namespace}/${target.metadata.name}`;
  if (isUnschedulable(target)) {
    if (pass.clocks.firstWarning(vmim, 'unschedulable', pass.nowMs)) {
      const message = `Migration target pod for VMI [${vmi.metadata.namespace}/${vmi.metadata.name}] is currently unschedulable.`;
      recorders(pass.kv).migration.record(vmim, 'Warning', 'migrationTargetPodUnschedulable', message);
    }
    if (pendingMs >= unschedulableTargetTimeoutMs) {
      deleteTargetPod(pass, vmim, target, `unschedulable pod ${name} timeout period exceeded`);
      return;
    }
    pass.wakeAt(pass.nowMs + unschedulableTargetTimeoutMs - pendingMs);
  }
  if (pendingMs >= pendingTargetTimeoutMs) {
    deleteTargetPod(pass, vmim, target, `pending pod ${name} timeout period exceeded`);
    return;
  }
  pass.wakeAt(pass.nowMs + pendingTargetTimeoutMs - pendingMs);
}

/** Scheduling: waits for the target pod to serve. */
export function syncScheduling(pass: MigrationPass, vmim: Vmim, vmi: Vmi, target: Pod | undefined): void {
  pass.countRunning(vmim);
  if (isDeleting(vmim)) {
    cancelBeforeHandOff(pass, vmim, target);
    return;
  }
  if (failOnLostTarget(pass, vmim, target) || !target) return;
  if (isServing(target)) {
    setPhase(pass, vmim, 'Scheduled');
    return;
  }
  handlePendingTarget(pass, vmim, vmi, target);
}

/** Scheduled: hands the migration to virt-handler, then PreparingTarget. */
export function syncScheduled(pass: MigrationPass, vmim: Vmim, vmi: Vmi, target: Pod | undefined): void {
  pass.countRunning(vmim);
  if (isDeleting(vmim)) {
    cancelBeforeHandOff(pass, vmim, target);
    return;
  }
  if (failOnLostTarget(pass, vmim, target) || !target || !isServing(target)) return;
  const source = currentPodOf(vmi, launcherPodsOf(pass.kv.context.store, vmi));
  const config = pass.config;
  const handedOff = updateMigrationState(pass, vmi, (state, copy) => {
    for (const key of Object.keys(state)) delete state[key];
    Object.assign(state, {
      migrationUid: vmim.metadata.uid,
      sourceNode: copy.status?.nodeName,
      ...(source ? { sourcePod: source.metadata.name } : {}),
      targetNode: target.spec.nodeName,
      targetPod: target.metadata.name,
      migrationConfiguration: {
        allowAutoConverge: false,
        allowPostCopy: false,
        bandwidthPerMigration: '0Mi',
        completionTimeoutPerGiB: config.completionTimeoutPerGiB,
        nodeDrainTaintKey: config.nodeDrainTaintKey,
        parallelMigrationsPerCluster: config.parallelMigrationsPerCluster,
        parallelOutboundMigrationsPerNode: config.parallelOutboundMigrationsPerNode,
        progressTimeout: config.progressTimeout,
        unsafeMigrationOverride: false,
      },
    });
    copy.metadata.labels = { ...copy.metadata.labels, [LABELS.migrationTargetNodeName]: target.spec.nodeName ?? '' };
  });
  if (!handedOff) return;
  recorders(pass.kv).migration.record(
    vmim,
    'Normal',
    'SuccessfulHandOver',
    'Migration target pod is ready for preparation by virt-handler.',
  );
  setPhase(pass, vmim, 'PreparingTarget');
}
