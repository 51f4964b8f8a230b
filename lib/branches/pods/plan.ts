/**
 * What draining a node's pods would do, without doing it: the `pods` and `infra-pods` branch plans
 * (pods to evict, skipped and why, blockers) plus kubectl's warnings. Pure: lib/branches/pods/plan-node.ts
 * gathers the inputs and adds server dry-run evictions; other branches (Nova, KubeVirt) plug in their
 * own `BranchPlan` through that module's `extraPlanners` hook.
 */
import type { V1Node, V1Pod, V1PodDisruptionBudget } from '@kubernetes/client-node';
import { podKey } from '../../clients/kube/paths.ts';
import type { Blocker, BranchPlan } from '../../model/plan.ts';
import type { DrainOptions } from '../../model/request.ts';
import type { PodBranch } from './branch-filters.ts';
import { budgetHoldMessage } from './budget-gate.ts';
import { describeBudgets } from './observe.ts';
import { quorumBlocker } from './quorum.ts';
import { budgetsCovering, ignoresBudgets } from './refusals.ts';
import { unplaceableReplacements } from './replacements.ts';
import { type DrainSelection, itemOf, selectionBlockers, selectPods } from './selection.ts';
import { budgetReason, multipleBudgetsReason } from './tracking.ts';

export interface DrainPlanInput {
  readonly node: V1Node;
  /** Every node (for replacements and etcd quorum). */
  readonly nodes: readonly V1Node[];
  /** The pods on the node, as listed for the drain. */
  readonly podsOnNode: readonly V1Pod[];
  /** Every pod in the cluster (for capacity on other nodes and etcd members). */
  readonly allPods: readonly V1Pod[];
  readonly budgets: readonly V1PodDisruptionBudget[];
  readonly options: DrainOptions;
  readonly now: Date;
  readonly daemonSetExists: (namespace: string, name: string) => boolean | string;
  readonly infraPodSelector: string;
  /**
   * Whether the `pods` branch reports launcher pods as blockers (default true). false where the
   * KubeVirt branch plans their VMs (and reports launcher pods no VMI accounts for).
   */
  readonly launcherPodsBlock?: boolean;
}

export interface DrainPlan {
  readonly branches: readonly BranchPlan[];
  /** kubectl's warning lines, then `[Unschedulable] …` for replacements that fit nowhere else. */
  readonly warnings: readonly string[];
}

/** PDBs at 0 and pods under two PDBs, for pods the eviction API would check (not with disableEviction). */
export function budgetBlockers(pods: readonly V1Pod[], budgets: readonly V1PodDisruptionBudget[]): Blocker[] {
  const blockers: Blocker[] = [];
  // In the words an evacuation's pass uses for the same refusal (tracking.ts).
  for (const pod of pods.filter((p) => !ignoresBudgets(p))) {
    const covering = budgetsCovering(pod, budgets);
    const pdb = covering[0];
    if (covering.length > 1) {
      const reason = multipleBudgetsReason(podKey(pod), describeBudgets(covering));
      blockers.push({ code: 'MultiplePodDisruptionBudgets', reason, item: itemOf(pod) });
    } else if (pdb && (pdb.status?.disruptionsAllowed ?? 0) <= 0) {
      const allowed = ` (disruptionsAllowed=${pdb.status?.disruptionsAllowed ?? 0})`;
      const reason = budgetReason(podKey(pod), pdb.metadata?.name ?? '?', allowed, budgetHoldMessage(pdb));
      blockers.push({ code: 'DisruptionBudget', reason, item: itemOf(pod) });
    }
  }
  return blockers;
}

/** The plan's warning for a pod whose replacement fits on no other node (code `Unschedulable`). */
export function unschedulableWarning(pod: string, schedulerMessage: string): string {
  return `[Unschedulable] replacement of pod ${pod} cannot schedule anywhere else: ${schedulerMessage}`;
}

function branchPlan(
  branch: PodBranch,
  selection: DrainSelection,
  extra: readonly Blocker[],
  launcherPodsBlock: boolean,
): BranchPlan {
  return {
    branch,
    toMove: selection.toEvict.map(itemOf),
    skipped: selection.skipped.map(({ pod, reason }) => ({ item: itemOf(pod), reason })),
    blockers: [...selectionBlockers(selection, branch === 'pods' && launcherPodsBlock), ...extra],
  };
}

function planBranch(branch: PodBranch, input: DrainPlanInput): { plan: BranchPlan; warnings: readonly string[] } {
  const selection = selectPods(input.podsOnNode, {
    options: input.options,
    now: input.now,
    daemonSetExists: input.daemonSetExists,
    branch,
    infraPodSelector: input.infraPodSelector,
  });
  const nodeName = input.node.metadata?.name ?? '';
  const budgets = input.options.disableEviction ? [] : budgetBlockers(selection.toEvict, input.budgets);
  // A warning, not a blocker: an evacuation evicts such a pod as kubectl does (its replacement stays
  // Pending), so `plan` must not exit 3 where the evacuation goes ahead (one decision, docs/safety-blockers.md).
  const unschedulable = unplaceableReplacements(selection.toEvict, nodeName, input.nodes, input.allPods).map(
    ({ pod, message }) => unschedulableWarning(podKey(pod), message),
  );
  const plan = branchPlan(branch, selection, budgets, input.launcherPodsBlock ?? true);
  return { plan, warnings: [...selection.warnings, ...unschedulable] };
}

/** Plans both pod branches; the etcd-quorum refusal goes on the `pods` branch. */
export function planDrain(input: DrainPlanInput): DrainPlan {
  const pods = planBranch('pods', input);
  const infra = planBranch('infra-pods', input);
  const quorum = quorumBlocker(input.node, input.nodes, input.allPods);
  const podsPlan = quorum ? { ...pods.plan, blockers: [quorum, ...pods.plan.blockers] } : pods.plan;
  return { branches: [podsPlan, infra.plan], warnings: [...pods.warnings, ...infra.warnings] };
}
