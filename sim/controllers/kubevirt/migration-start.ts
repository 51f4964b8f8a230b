/**
 * A migration's first steps in the migration controller (`pkg/virt-controller/watch/migration/migration.go`):
 *
 * - new (no phase): the selector label, finalizer and API-version annotations; `Pending`, or `Failed`
 *   when another migration of the VMI is in progress (canMigrateVMI).
 * - `Pending`: waits while the VMI is not Running, has more than one active pod, is in evacuation
 *   backoff (20 s after a failed evacuation migration, doubling per further failure:
 *   handleMigrationBackoff), or while the cluster (`parallelMigrationsPerCluster`) or the source node
 *   (`parallelOutboundMigrationsPerNode`) already runs as many migrations as allowed — excess
 *   migrations stay Pending (handleTargetPodCreation). Then it expands the VMI's PDB, creates the
 *   target pod and moves to `Scheduling`.
 */
import { isDeleting } from '../meta.ts';
import type { Pod } from '../types.ts';
import { REFS } from '../types.ts';
import { ANNOTATIONS, FINALIZERS, isFinalMigration, LABELS, type Vmi, type Vmim } from './api.ts';
import { recorders } from './context.ts';
import { targetPod } from './launcher.ts';
import type { MigrationPass } from './migration-pass.ts';
import { cancelBeforeHandOff } from './migration-target.ts';
import { expandBudget, failMigration, setPhase } from './migration-writes.ts';
import { isActivePod, launcherPodsOf } from './objects.ts';

const FIRST_BACKOFF_MS = 20_000;

/** Whether the VMI is free for this migration (no other unfinished migration owns its migration state). */
function canMigrate(pass: MigrationPass, vmim: Vmim, vmi: Vmi): boolean {
  const owner = vmi.status?.migrationState?.migrationUid;
  if (!owner || owner === vmim.metadata.uid) return true;
  const other = pass.migrations.find((m) => m.metadata.uid === owner);
  return !other || isFinalMigration(other);
}

/** A migration seen for the first time: what virt-api's mutator and the controller add, then Pending. */
export function startNew(pass: MigrationPass, vmim: Vmim, vmi: Vmi): void {
  const prepare = (copy: Vmim): void => {
    copy.metadata.labels = { ...copy.metadata.labels, [LABELS.vmiName]: copy.spec.vmiName ?? '' };
    if (!copy.metadata.finalizers?.includes(FINALIZERS.migration)) {
      copy.metadata.finalizers = [...(copy.metadata.finalizers ?? []), FINALIZERS.migration];
    }
    copy.metadata.annotations = {
      ...copy.metadata.annotations,
      'kubevirt.io/latest-observed-api-version': 'v1',
      'kubevirt.io/storage-observed-api-version': 'v1',
    };
  };
  if (canMigrate(pass, vmim, vmi)) {
    setPhase(pass, vmim, 'Pending', prepare);
    return;
  }
  failMigration(pass, vmim, 'VMI is not eligible for migration because another migration job is in progress.', prepare);
}

/** Milliseconds of evacuation backoff left for this migration (0 when none applies). */
function backoffLeftMs(pass: MigrationPass, vmim: Vmim): number {
  if (vmim.metadata.annotations?.[ANNOTATIONS.evacuationMigration] === undefined) return 0;
  const evacuations = pass.migrations
    .filter((m) => m.spec.vmiName === vmim.spec.vmiName && m.metadata.namespace === vmim.metadata.namespace)
    .filter((m) => m.metadata.annotations?.[ANNOTATIONS.evacuationMigration] !== undefined)
    .reverse();
  if (evacuations.length < 2 || evacuations[0]?.metadata.uid !== vmim.metadata.uid) return 0;
  let backoff = 0;
  for (const earlier of evacuations.slice(1)) {
    if (earlier.status?.phase === 'Succeeded') break;
    if (isDeleting(earlier) || earlier.status?.phase !== 'Failed') continue;
    backoff = backoff === 0 ? FIRST_BACKOFF_MS : backoff * 2;
  }
  if (backoff === 0) return 0;
  const failedAt = evacuations[1]?.status?.phaseTransitionTimestamps?.find((t) => t.phase === 'Failed');
  const failedMs = Date.parse(failedAt?.phaseTransitionTimestamp ?? '');
  return Number.isNaN(failedMs) ? 0 : Math.max(0, failedMs + backoff - pass.nowMs);
}

/** Whether the limits leave room for one more migration from the VMI's node. */
function hasCapacity(pass: MigrationPass, vmi: Vmi): boolean {
  if (pass.runningCount() >= pass.config.parallelMigrationsPerCluster) return false;
  return pass.outboundFrom(vmi.status?.nodeName ?? '') < pass.config.parallelOutboundMigrationsPerNode;
}

/** Whether the migration must wait before its target pod is created (and when to look again). */
function mustWait(pass: MigrationPass, vmim: Vmim, vmi: Vmi): boolean {
  const backoff = backoffLeftMs(pass, vmim);
  if (backoff > 0) {
    if (pass.clocks.firstWarning(vmim, 'backoff', pass.nowMs)) {
      const message = `backoff migrating vmi ${vmi.metadata.namespace}/${vmi.metadata.name}`;
      recorders(pass.kv).migration.record(vmi, 'Warning', 'MigrationBackoff', message);
    }
    pass.wakeAt(pass.nowMs + backoff);
    return true;
  }
  if (vmi.status?.phase !== 'Running') return true;
  // KubeVirt re-queues such a migration every 5 s; here every migration, VMI and launcher pod change
  // starts a pass, which is when capacity can free up, so no timer is needed.
  const activePods = launcherPodsOf(pass.kv.context.store, vmi).filter(isActivePod).length;
  return activePods > 1 || !hasCapacity(pass, vmi);
}

/** Pending: cancel when deleted, wait while it must, else create the target pod and go Scheduling. */
export function syncPending(pass: MigrationPass, vmim: Vmim, vmi: Vmi, target: Pod | undefined): void {
  if (isDeleting(vmim)) {
    cancelBeforeHandOff(pass, vmim, target);
    return;
  }
  if (target) {
    pass.countRunning(vmim);
    setPhase(pass, vmim, 'Scheduling');
    return;
  }
  if (mustWait(pass, vmim, vmi)) return;
  expandBudget(pass, vmi, vmim);
  const pod = pass.kv.context.store.create(REFS.pods, targetPod(vmi, vmim));
  recorders(pass.kv).migration.record(
    vmim,
    'Normal',
    'SuccessfulCreate',
    `Created migration target pod ${pod.metadata.name}`,
  );
  pass.countRunning(vmim);
  setPhase(pass, vmim, 'Scheduling');
}
