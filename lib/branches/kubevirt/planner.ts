/**
 * One pass of the KubeVirt branch, planned: from what the pass observed and the progress it kept, the
 * migrations (and opt-in restarts) to start now, the next progress, the Kubernetes Events to record,
 * and the result (counts, blockers, done). Pure: pass.ts reads and acts.
 *
 * Limits: at most min(drainbridge's, KubeVirt's) migrations in flight from the node and in the
 * cluster, counting every unfinished migration whoever made it (KubeVirt's own evacuations, an
 * operator's `virtctl migrate`), Pending ones included.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { BranchProgress } from '../../model/pass.ts';
import type { Blocker, SkippedItem } from '../../model/plan.ts';
import type { MigrationClaim } from './claims.ts';
import { type Decision, decideVmi, itemOf } from './decide.ts';
import { eventsFor, type VmiEvent } from './kube-events.ts';
import { launcherBlockers, selectedVmis } from './launchers.ts';
import { migrationName, migrationsByVmi, type NewMigration, unfinished, type VmiMigrations } from './migrations.ts';
import {
  type KubeVirtBranchState,
  type KubeVirtOptions,
  keyOf,
  type Vmi,
  type VmiProgress,
  vmiKeyOfMigration,
} from './model.ts';
import type { KubeVirtObservation } from './observe.ts';
import { departed, summary } from './progress.ts';

export interface PlanInput {
  readonly requestId: string;
  readonly nodeName: string;
  readonly observation: KubeVirtObservation;
  readonly state: KubeVirtBranchState;
  readonly options: KubeVirtOptions;
  readonly now: Date;
  /** Slots other passes claimed for migrations not listed yet (claims.ts): counted as in flight. */
  readonly claims?: readonly MigrationClaim[];
}

export type KubeVirtAction = (
  | { readonly kind: 'migrate'; readonly uid: string; readonly migration: NewMigration }
  | { readonly kind: 'restart'; readonly uid: string; readonly pod: V1Pod }
) & {
  /** The VMI's progress had the action not been planned (kept when it is refused). */
  readonly unchanged: VmiProgress;
};

export interface KubeVirtPassPlan {
  /** The progress to keep, as if every action succeeds (pass.ts corrects refused ones). */
  readonly state: KubeVirtBranchState;
  readonly actions: readonly KubeVirtAction[];
  readonly events: readonly VmiEvent[];
  readonly blockers: readonly Blocker[];
  /** Waited for, blockers only when the evacuation gives up (External VMIs). */
  readonly waiting: readonly Blocker[];
  readonly skipped: readonly SkippedItem[];
  readonly progress: BranchProgress;
  readonly progressed: boolean;
  readonly done: boolean;
  /** One line per VMI in flight: `vms/app-1 Running node-1 → node-2 (40 s)`. */
  readonly detail: readonly string[];
}

/**
 * Free migration slots: the tighter of drainbridge's and KubeVirt's limits, minus everyone's unfinished
 * migrations and the slots other passes claimed for migrations about to be created.
 */
export function freeSlots(input: PlanInput): { free: number; fromNode: number; nodeLimit: number } {
  const { observation, options } = input;
  const claims = input.claims ?? [];
  const nodeLimit = Math.min(options.maxMigrationsPerNode, observation.settings.parallelOutboundMigrationsPerNode);
  const clusterLimit = Math.min(options.maxMigrationsPerCluster, observation.settings.parallelMigrationsPerCluster);
  const onNode = new Set(observation.vmis.map(keyOf));
  const active = unfinished(observation.migrations);
  const fromNode =
    active.filter((vmim) => onNode.has(vmiKeyOfMigration(vmim))).length +
    claims.filter((claim) => claim.node === input.nodeName).length;
  const inCluster = active.length + claims.length;
  return { free: Math.max(0, Math.min(nodeLimit - fromNode, clusterLimit - inCluster)), fromNode, nodeLimit };
}

interface Decided {
  readonly vmi: Vmi;
  readonly decision: Decision;
  readonly pod: V1Pod | undefined;
}

function activeLauncherOf(vmi: Vmi, pods: readonly V1Pod[]): V1Pod | undefined {
  return pods.find(
    (pod) =>
      pod.metadata?.labels?.['kubevirt.io/created-by'] === vmi.metadata.uid &&
      pod.status?.phase !== 'Succeeded' &&
      pod.status?.phase !== 'Failed',
  );
}

function decideAll(input: PlanInput, vmis: readonly Vmi[], byVmi: ReadonlyMap<string, VmiMigrations>): Decided[] {
  const { observation } = input;
  return vmis.map((vmi) => {
    const pod = activeLauncherOf(vmi, observation.launcherPods);
    const decision = decideVmi(vmi, {
      nodeName: input.nodeName,
      settings: observation.settings,
      options: input.options,
      now: input.now,
      migrations: byVmi.get(keyOf(vmi)),
      previous: input.state.vmis[vmi.metadata.uid],
      launcherPod: pod,
      owner: observation.owners.get(keyOf(vmi)),
    });
    return { vmi, decision, pod };
  });
}

/** Hands the free slots to the VMIs asking, in name order; returns the actions and their VMIs' progress. */
function assignSlots(input: PlanInput, decided: readonly Decided[]) {
  const slots = freeSlots(input);
  let migrations = slots.free;
  const restarting = decided.filter((d) => d.decision.progress.status === 'restarting').length;
  let restarts = Math.max(0, input.options.maxMigrationsPerNode - restarting);
  const actions: KubeVirtAction[] = [];
  const progress = new Map<string, VmiProgress>();
  for (const { vmi, decision, pod } of decided) {
    const uid = vmi.metadata.uid;
    if (decision.wants === 'migrate' && migrations > 0) {
      migrations--;
      const attempt = decision.progress.attempts + 1;
      const name = migrationName(input.requestId, vmi.metadata.name, attempt);
      const spec = { requestId: input.requestId, namespace: vmi.metadata.namespace, vmiName: vmi.metadata.name };
      actions.push({
        kind: 'migrate',
        uid,
        migration: { ...spec, sourceNode: input.nodeName, attempt },
        unchanged: decision.progress,
      });
      const { note: _note, retryAt: _retry, targetNode: _target, endedAt: _ended, ...rest } = decision.progress;
      progress.set(uid, {
        ...rest,
        status: 'migrating',
        attempts: attempt,
        migration: name,
        migrationBy: 'drainbridge',
        migrationPhase: 'Pending',
        startedAt: input.now.toISOString(),
      });
    } else if (decision.wants === 'restart' && pod && restarts > 0) {
      restarts--;
      actions.push({ kind: 'restart', uid, pod, unchanged: decision.progress });
      progress.set(uid, { ...decision.progress, status: 'restarting', startedAt: input.now.toISOString() });
    } else if (decision.wants === 'migrate') {
      const note = `waiting for a free migration slot (${slots.fromNode}/${slots.nodeLimit} in flight from the node, cluster limits counted)`;
      progress.set(uid, { ...decision.progress, note });
    }
  }
  return { actions, progress };
}

/** Whether any VMI's progress changed in a way that is progress (a move started, ended or failed). */
export function progressedBetween(previous: KubeVirtBranchState, next: KubeVirtBranchState): boolean {
  return Object.entries(next.vmis).some(([uid, progress]) => isProgress(previous.vmis[uid], progress));
}

/** Whether a VMI's progress changed in a way that is progress (a move started, ended or failed). */
function isProgress(previous: VmiProgress | undefined, next: VmiProgress): boolean {
  if (!previous || previous.status === next.status) return previous === undefined && next.status === 'migrating';
  return (
    previous.status === 'migrating' || ['migrating', 'restarting', 'moved', 'left', 'retry-wait'].includes(next.status)
  );
}

export function planPass(input: PlanInput): KubeVirtPassPlan {
  const { observation } = input;
  const byVmi = migrationsByVmi(observation.migrations, input.requestId);
  const { selected, skipped } = selectedVmis(observation);
  const decided = decideAll(input, selected, byVmi);
  const assigned = assignSlots(input, decided);
  const vmis: Record<string, VmiProgress> = {};
  for (const { vmi, decision } of decided)
    vmis[vmi.metadata.uid] = assigned.progress.get(vmi.metadata.uid) ?? decision.progress;
  const onNode = new Set(selected.map((vmi) => vmi.metadata.uid));
  for (const [uid, previous] of Object.entries(input.state.vmis)) {
    if (!onNode.has(uid)) vmis[uid] = departed(previous, byVmi, input);
  }
  const launchers = launcherBlockers(observation, input.requestId);
  const blockers = [...decided.flatMap((d) => (d.decision.blocker ? [d.decision.blocker] : [])), ...launchers.blockers];
  const state = { vmis };
  const progressed = assigned.actions.length > 0 || progressedBetween(input.state, state);
  const counts = summary(state, input.now);
  return {
    state,
    actions: assigned.actions,
    events: eventsFor(input, state),
    blockers,
    waiting: decided.flatMap((d) => (d.decision.waiting ? [d.decision.waiting] : [])),
    skipped,
    progress: { ...counts.progress, inFlight: counts.progress.inFlight + launchers.inFlight, skipped: skipped.length },
    progressed,
    done: selected.length === 0 && launchers.blockers.length === 0 && launchers.inFlight === 0,
    detail: [...counts.detail, ...launchers.detail],
  };
}

export { itemOf };
