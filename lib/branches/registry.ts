/**
 * The branches of an evacuation, in one place. The pass task, Restore's and abort's cancel,
 * `drainbridge plan`, the progress lines and the Evacuate state machine (its Parallel branches are
 * generated from this list by `npm run asl`), the PrepareBranches and RestoreBranches steps, the
 * workflow's connections (deps.ts) all follow it: a new branch is one definition here plus its
 * implementation, and `npm run definitions` (docs/development.md, "Add a branch").
 *
 * Order matters twice: it is the order of the Parallel state's branches (and of the `after-vms`
 * states), and the order `drainbridge plan` prints the branches in.
 */
import { passFailureOf } from '../model/pass.ts';
import type { BranchName } from '../model/plan.ts';
import type { ResolvedRequest } from '../model/request.ts';
import type {
  BranchCancelled,
  BranchDefinition,
  BranchPrepared,
  BranchRestored,
  BranchStage,
  StatusColumn,
} from './contract/branch.ts';
import type { WorkflowDeps } from './contract/workflow-deps.ts';
import { kubeVirtBranch } from './kubevirt/definition.ts';
import { novaBranch } from './nova/definition.ts';
import { infraPodsBranch, podsBranch } from './pods/definition.ts';

const branches: BranchDefinition[] = [podsBranch, infraPodsBranch, novaBranch, kubeVirtBranch];

export const BRANCH_REGISTRY: readonly BranchDefinition[] = branches;

/**
 * Adds a branch after the built-in ones, for tests that prove a branch needs nothing but its definition
 * (test/workflow/fake-branch.test.ts). A real branch is a line in the list above: the Evacuate machine is
 * generated from that list (`npm run asl`). Returns how to take the branch out again.
 */
export function registerBranch(definition: BranchDefinition): () => void {
  if (branches.some((b) => b.name === definition.name))
    throw new Error(`branch ${definition.name} is registered already`);
  branches.push(definition);
  return () => {
    const at = branches.indexOf(definition);
    if (at >= 0) branches.splice(at, 1);
  };
}

/**
 * The definition of a branch. The event contracts name every branch drainbridge has or will have
 * (lib/model/plan.ts); one without a definition here is not built yet.
 */
export function branchNamed(name: BranchName): BranchDefinition {
  const branch = BRANCH_REGISTRY.find((b) => b.name === name);
  if (!branch) throw new Error(`branch ${name} is not available in this build`);
  return branch;
}

/** The branches of one stage of the Evacuate machine, in registry order. */
export function branchesOf(stage: BranchStage): BranchDefinition[] {
  return BRANCH_REGISTRY.filter((b) => b.stage === stage);
}

/** The words for a branch, with neutral ones for a name not built yet. */
export function wordsOf(name: string): BranchDefinition['words'] {
  return branchCalled(name)?.words ?? { toMove: 'to move', moved: 'moved' };
}

/** The definition of a branch by its name in a record, or undefined for a name not built (an older or newer drainbridge's). */
export function branchCalled(name: string): BranchDefinition | undefined {
  return BRANCH_REGISTRY.find((b) => b.name === name);
}

/** The columns of `drainbridge status`, left to right, each once. */
export function statusColumns(): StatusColumn[] {
  const columns = new Map(BRANCH_REGISTRY.map((b) => [b.moves.column.key, b.moves.column]));
  return [...columns.values()].sort((a, b) => a.position - b.position);
}

/** The branches whose items are pods evicted as kubectl drain does (a NodeMaintenance's progress counts them). */
export function podEvictionBranches(): string[] {
  return BRANCH_REGISTRY.filter((b) => b.moves.podEviction).map((b) => b.name);
}

/**
 * Cancels every branch's in-flight moves for these requests (this one first) on the node, in registry
 * order; the items stay where they are.
 */
export async function cancelBranches(
  deps: WorkflowDeps,
  requestIds: readonly string[],
  nodeName: string,
): Promise<BranchCancelled> {
  let aborted = 0;
  const leftAlone: string[] = [];
  for (const branch of BRANCH_REGISTRY) {
    if (!branch.cancel) continue;
    const cancelled = await branch.cancel(deps, requestIds, nodeName);
    aborted += cancelled.aborted;
    leftAlone.push(...cancelled.leftAlone);
  }
  return { aborted, leftAlone };
}

/**
 * The PrepareBranches step: every branch's prepare, in registry order; what each did, by branch name.
 * A prepare that refuses with blockers (a PassFailure, e.g. Nova's host with no room elsewhere) puts
 * them on the branch's record first, as a failed pass does: Evacuation Failed names them from there.
 */
export async function prepareBranches(
  deps: WorkflowDeps,
  request: ResolvedRequest,
  now: Date,
): Promise<Record<string, BranchPrepared>> {
  const prepared: Record<string, BranchPrepared> = {};
  for (const branch of BRANCH_REGISTRY) {
    if (!branch.prepare) continue;
    try {
      prepared[branch.name] = await branch.prepare(deps, request);
    } catch (error) {
      const failure = passFailureOf(error);
      // With the time, so the blockers' spans carry their codes (Evacuation Failed reads them from there).
      if (failure)
        await deps.progress.recordProgress(request.requestId, branch.name, {
          ...failure,
          timing: { now, done: false },
        });
      throw error;
    }
  }
  return prepared;
}

/**
 * The RestoreBranches step's undoing, after the cancel: every branch's restore, in registry order; what
 * they left alone, and their fields of the `Node Restored` event.
 */
export async function restoreBranches(
  deps: WorkflowDeps,
  request: ResolvedRequest,
  otherRequestIds: readonly string[],
): Promise<Required<BranchRestored>> {
  const leftAlone: string[] = [];
  let restoredFields: BranchRestored['restoredFields'] = {};
  for (const branch of BRANCH_REGISTRY) {
    if (!branch.restore) continue;
    const restored = await branch.restore(deps, request, otherRequestIds);
    leftAlone.push(...restored.leftAlone);
    restoredFields = { ...restoredFields, ...restored.restoredFields };
  }
  return { leftAlone, restoredFields };
}
