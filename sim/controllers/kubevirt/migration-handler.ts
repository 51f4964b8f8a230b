/**
 * What virt-handler and virt-launcher do with a handed-off migration, as simulated steps over time:
 *
 * - `PreparingTarget` → `TargetReady` after `targetPreparationMs`: the target reports its address and
 *   direct-migration ports in `migrationState` (`pkg/virt-handler/migration-target.go`).
 * - `TargetReady` → `Running` after `migrationStartMs`: `migrationState.startTimestamp`, mode PreCopy.
 * - `Running` ends after the transfer time (`transferBaseMs` + `transferMsPerGiB` × guest GiB, or the
 *   VMI's `sim.drainbridge.io/migration-seconds`): the VMI moves to the target node
 *   (`status.nodeName`, `kubevirt.io/nodeName`, `evacuationNodeName` cleared) and the migration
 *   Succeeds; the source launcher keeps running `sourceLauncherExitMs` longer (virt-handler on the
 *   source cleans the migrated domain up) and then exits (Completed). Or it fails: a test's fault (the target launcher
 *   exits, `failed: true` with the fault's reason), virt-launcher's progress timeout for a hung
 *   migration ("Live migration stuck for N seconds and has been aborted"), its completion timeout
 *   ("Live migration is not completed after N seconds and has been aborted", N =
 *   `completionTimeoutPerGiB` × GiB) — wording of `pkg/virt-launcher/virtwrap/live-migration-source.go`.
 * - A Running migration that is deleted is aborted: `abortRequested` on the VMI, then after `abortMs`
 *   `abortStatus: Succeeded`, `failed: true`, failure reason "Live migration aborted "; the VMI stays
 *   on its source. Deletion during PreparingTarget/TargetReady only adds the abort condition until
 *   the migration runs, as KubeVirt only signals virt-handler once it does.
 */
import { isDeleting, isTerminal } from '../meta.ts';
import { type Pod, REFS, view } from '../types.ts';
import { KV_REFS, LABELS, memoryGiB, SIM_ANNOTATIONS, type Vmi, type Vmim } from './api.ts';
import { recorders } from './context.ts';
import type { MigrationFault } from './faults.ts';
import type { MigrationPass } from './migration-pass.ts';
import {
  exitLauncher,
  failMigration,
  setPhase,
  stateFor,
  updateMigrationState,
  withAbortRequested,
} from './migration-writes.ts';
import { currentPodOf, launcherPodsOf, mutateObject } from './objects.ts';
import { interfacesFor } from './vmi-status.ts';

/** How a running migration ends, and when (simulated ms since it started running). */
export type Outcome =
  | { readonly kind: 'success'; readonly afterMs: number }
  | { readonly kind: 'fail'; readonly afterMs: number; readonly reason: string; readonly aborted: boolean };

export interface OutcomeInputs {
  readonly transferMs: number;
  readonly fault: MigrationFault | undefined;
  readonly guestGiB: number;
  readonly progressTimeoutSeconds: number;
  readonly completionTimeoutPerGiB: number;
}

/** Plans a running migration's end from its transfer time, fault and KubeVirt's timeouts. Pure. */
export function plannedOutcome(inputs: OutcomeInputs): Outcome {
  const dataGiB = Math.max(1, Math.ceil(inputs.guestGiB));
  const acceptableSeconds = inputs.completionTimeoutPerGiB * dataGiB;
  const completion: Outcome | undefined =
    acceptableSeconds > 0
      ? {
          kind: 'fail',
          afterMs: (acceptableSeconds + 1) * 1000,
          reason: `Live migration is not completed after ${acceptableSeconds} seconds and has been aborted`,
          aborted: true,
        }
      : undefined;
  const planned = plannedWithoutCompletionTimeout(inputs);
  return completion && completion.afterMs < planned.afterMs ? completion : planned;
}

function plannedWithoutCompletionTimeout(inputs: OutcomeInputs): Outcome {
  const { fault } = inputs;
  if (fault?.kind === 'fail') {
    return { kind: 'fail', afterMs: Math.floor(inputs.transferMs / 2), reason: fault.reason, aborted: false };
  }
  if (fault?.kind === 'hang') {
    if (inputs.progressTimeoutSeconds <= 0) return { kind: 'success', afterMs: Number.POSITIVE_INFINITY };
    const stuck = inputs.progressTimeoutSeconds + 1;
    return {
      kind: 'fail',
      afterMs: stuck * 1000,
      reason: `Live migration stuck for ${stuck} seconds and has been aborted`,
      aborted: true,
    };
  }
  return { kind: 'success', afterMs: inputs.transferMs };
}

/** The memory transfer time of this VMI's migrations. */
export function transferMsOf(pass: MigrationPass, vmi: Vmi): number {
  const annotated = Number(vmi.metadata.annotations?.[SIM_ANNOTATIONS.migrationSeconds]);
  if (Number.isFinite(annotated) && annotated >= 0) return annotated * 1000;
  const { transferBaseMs, transferMsPerGiB } = pass.kv.timings;
  return transferBaseMs + transferMsPerGiB * memoryGiB(vmi);
}

/** A migration with its VMI and target pod, as one step looks at them. */
interface Subject {
  readonly vmim: Vmim;
  readonly vmi: Vmi;
  readonly target: Pod | undefined;
}

/** Settles a handed-off migration whose VMI state says it ended; true when it did. */
function settleFromVmi(pass: MigrationPass, vmim: Vmim, vmi: Vmi, target: Pod | undefined): boolean {
  const state = stateFor(vmi, vmim);
  if (!state) {
    failMigration(pass, vmim, "VMI's migration state was cleared during the active migration.");
    return true;
  }
  if (!state.completed) return false;
  if (state.failed) {
    if (target && !isTerminal(target)) exitLauncher(pass, target, 'Failed');
    failMigration(pass, vmim, 'source node reported migration failed', (copy) => {
      copy.status = { ...copy.status, migrationState: structuredClone(state) };
    });
    return true;
  }
  recorders(pass.kv).migration.record(
    vmim,
    'Normal',
    'SuccessfulMigration',
    'Source node reported migration succeeded',
  );
  setPhase(pass, vmim, 'Succeeded', (copy) => {
    copy.status = { ...copy.status, migrationState: structuredClone(state) };
  });
  return true;
}

/**
 * Marks the VMI's migration ended with a failure (the VMI stays where it is), then settles the
 * migration in the same pass — KubeVirt's controller follows the handler's report within moments.
 */
function failOnVmi(pass: MigrationPass, subject: Subject, failure: { reason: string; aborted: boolean }): void {
  const { vmim, vmi, target } = subject;
  const now = pass.nowIso;
  const updated = updateMigrationState(pass, vmi, (state, copy) => {
    state.startTimestamp ??= now;
    state.endTimestamp = now;
    state.completed = true;
    state.failed = true;
    state.failureReason = failure.reason;
    if (failure.aborted) state.abortStatus = 'Succeeded';
    const labels = { ...copy.metadata.labels };
    delete labels[LABELS.migrationTargetNodeName];
    copy.metadata.labels = labels;
  });
  const message = `VirtualMachineInstance migration uid ${vmim.metadata.uid} failed. reason: ${failure.reason}`;
  recorders(pass.kv)
    .handler(vmi.status?.nodeName ?? '')
    .record(vmi, 'Warning', 'FailedMigration', message);
  if (updated) settleFromVmi(pass, vmim, updated, target);
}

/** The common checks of every handed-off phase; true when the migration is settled (or failed) by them. */
function settledOrLost(pass: MigrationPass, vmim: Vmim, vmi: Vmi, target: Pod | undefined): boolean {
  if (settleFromVmi(pass, vmim, vmi, target)) return true;
  if (target && !isTerminal(target)) return false;
  // The target went away before the transfer started: handleMarkMigrationFailedOnVMI.
  failOnVmi(pass, { vmim, vmi, target }, { reason: 'Target pod is down', aborted: false });
  return true;
}

function markAbortCondition(pass: MigrationPass, vmim: Vmim): void {
  if (!isDeleting(vmim) || vmim.status?.conditions?.some((c) => c.type === 'migrationAbortRequested')) return;
  const now = pass.nowIso;
  mutateObject(pass.kv.context.store, KV_REFS.vmims, vmim, (copy) => withAbortRequested(copy, now));
}

/** PreparingTarget: the target reports where it listens, then TargetReady. */
export function syncPreparingTarget(pass: MigrationPass, vmim: Vmim, vmi: Vmi, target: Pod | undefined): void {
  pass.countRunning(vmim);
  if (settledOrLost(pass, vmim, vmi, target) || !target) return;
  markAbortCondition(pass, vmim);
  const dueMs = pass.clocks.since(vmim, pass.nowMs) + pass.kv.timings.targetPreparationMs;
  if (pass.nowMs < dueMs) {
    pass.wakeAt(dueMs);
    return;
  }
  const address = target.status?.podIP ?? target.status?.hostIP ?? '';
  updateMigrationState(pass, vmi, (state) => {
    state.targetNodeAddress = address;
    state.targetDirectMigrationNodePorts = { '36461': 0, '39853': 49152, '42207': 49153 };
  });
  const handler = recorders(pass.kv).handler(target.spec.nodeName ?? '');
  handler.record(
    vmi,
    'Normal',
    'PreparingTarget',
    `Migration Target is listening at ${address}, on ports: 42207,39853`,
  );
  setPhase(pass, vmim, 'TargetReady');
}

/** TargetReady: the source starts the transfer, then Running (the VMI's next fault is taken now). */
export function syncTargetReady(pass: MigrationPass, vmim: Vmim, vmi: Vmi, target: Pod | undefined): void {
  pass.countRunning(vmim);
  if (settledOrLost(pass, vmim, vmi, target)) return;
  markAbortCondition(pass, vmim);
  const dueMs = pass.clocks.since(vmim, pass.nowMs) + pass.kv.timings.migrationStartMs;
  if (pass.nowMs < dueMs) {
    pass.wakeAt(dueMs);
    return;
  }
  const now = pass.nowIso;
  updateMigrationState(pass, vmi, (state) => {
    state.startTimestamp = now;
    state.mode = 'PreCopy';
  });
  const fault = pass.kv.faults.takeMigrationFault(`${vmi.metadata.namespace}/${vmi.metadata.name}`);
  const running = setPhase(pass, vmim, 'Running');
  if (running) pass.clocks.setFault(running, fault, pass.nowMs);
  const handler = recorders(pass.kv).handler(vmi.status?.nodeName ?? '');
  handler.record(vmi, 'Normal', 'Migrating', 'VirtualMachineInstance is migrating.');
}

/**
 * Moves the VMI to the target: the migration is complete on the VMI, the source launcher exits, and
 * the migration Succeeds in the same pass (so it never counts against its old node once the VMI left).
 */
function completeOnVmi(pass: MigrationPass, vmim: Vmim, vmi: Vmi, target: Pod): void {
  const now = pass.nowIso;
  const node = target.spec.nodeName ?? '';
  const source = currentPodOf(vmi, launcherPodsOf(pass.kv.context.store, vmi));
  const updated = updateMigrationState(pass, vmi, (state, copy) => {
    state.completed = true;
    state.endTimestamp = now;
    state.targetNodeDomainDetected = true;
    state.targetNodeDomainReadyTimestamp = now;
    const labels: Record<string, string> = { ...copy.metadata.labels, [LABELS.nodeName]: node };
    delete labels[LABELS.migrationTargetNodeName];
    copy.metadata.labels = labels;
    const status = {
      ...copy.status,
      nodeName: node,
      migrationTransport: 'Unix',
      interfaces: interfacesFor(copy, target),
    };
    delete status.evacuationNodeName;
    copy.status = status;
  });
  if (source) {
    const { namespace = '', name = '', uid = '' } = source.metadata;
    pass.clocks.scheduleSourceExit({ namespace, name, uid, dueMs: pass.nowMs + pass.kv.timings.sourceLauncherExitMs });
    exitDueSourceLaunchers(pass);
  }
  recorders(pass.kv)
    .handler(node)
    .record(vmi, 'Normal', 'Migrated', `The VirtualMachineInstance migrated to node ${node}.`);
  if (updated) settleFromVmi(pass, vmim, updated, target);
}

/** Running: the transfer ends as planned, or is aborted when the migration was deleted. */
export function syncRunning(pass: MigrationPass, vmim: Vmim, vmi: Vmi, target: Pod | undefined): void {
  pass.countRunning(vmim);
  if (settledOrLost(pass, vmim, vmi, target) || !target) return;
  if (isDeleting(vmim)) {
    abortRunning(pass, vmim, vmi, target);
    return;
  }
  const outcome = plannedOutcome({
    transferMs: transferMsOf(pass, vmi),
    fault: pass.clocks.fault(vmim),
    guestGiB: memoryGiB(vmi),
    progressTimeoutSeconds: pass.config.progressTimeout,
    completionTimeoutPerGiB: pass.config.completionTimeoutPerGiB,
  });
  const dueMs = pass.clocks.since(vmim, pass.nowMs) + outcome.afterMs;
  if (pass.nowMs < dueMs) {
    if (Number.isFinite(dueMs)) pass.wakeAt(dueMs);
    return;
  }
  if (outcome.kind === 'success') completeOnVmi(pass, vmim, vmi, target);
  else failOnVmi(pass, { vmim, vmi, target }, outcome);
}

function abortRunning(pass: MigrationPass, vmim: Vmim, vmi: Vmi, target: Pod): void {
  markAbortCondition(pass, vmim);
  if (!stateFor(vmi, vmim)?.abortRequested) {
    updateMigrationState(pass, vmi, (state) => {
      state.abortRequested = true;
    });
    recorders(pass.kv).migration.record(
      vmim,
      'Normal',
      'SuccessfulAbortMigration',
      'Migration is ready to be canceled by virt-handler.',
    );
  }
  const dueMs = pass.clocks.abortSince(vmim, pass.nowMs) + pass.kv.timings.abortMs;
  if (pass.nowMs < dueMs) {
    pass.wakeAt(dueMs);
    return;
  }
  failOnVmi(pass, { vmim, vmi, target }, { reason: 'Live migration aborted ', aborted: true });
}

/** Source launcher pods whose clean-up time has come exit (Completed); asks for a pass at the next one. */
export function exitDueSourceLaunchers(pass: MigrationPass): void {
  const { due, nextMs } = pass.clocks.takeDueSourceExits(pass.nowMs);
  for (const exit of due) {
    const found = pass.kv.context.store.get(REFS.pods, exit.namespace, exit.name);
    if (!found || found.metadata.uid !== exit.uid) continue;
    const pod = view<Pod>(found);
    if (!isTerminal(pod)) exitLauncher(pass, pod, 'Succeeded');
  }
  if (nextMs !== undefined) pass.wakeAt(nextMs);
}
