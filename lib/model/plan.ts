/**
 * What an evacuation would do, branch by branch. Built by pure planning code from observed state;
 * printed by `drainbridge plan`, and recorded in the progress record.
 */

/** The independent parts of an evacuation. `infra-pods` runs only after the VM branches have finished. */
export const BRANCHES = ['pods', 'nova', 'kubevirt', 'infra-pods'] as const;
export type BranchName = (typeof BRANCHES)[number];

/** Something that has to leave the node: a pod, a Nova server, a KubeVirt VMI. */
export interface PlanItem {
  readonly kind: 'Pod' | 'Server' | 'VirtualMachineInstance';
  /** Stable identity: pod/VMI uid, Nova server uuid. */
  readonly uid: string;
  /** `namespace/name` for Kubernetes objects, the server name for Nova. */
  readonly name: string;
}

/** An item that stays where it is on purpose (a DaemonSet pod with ignore-daemonsets, a mirror pod). */
export interface SkippedItem {
  readonly item: PlanItem;
  readonly reason: string;
}

/**
 * Machine-readable blocker codes. A blocker stops the branch from finishing until it clears or an
 * operator changes the options; it is never resolved by deleting or stopping something.
 */
export const BLOCKER_CODES = [
  'BarePod',
  'DaemonSetPod',
  'OrphanedDaemonSetPod',
  'EmptyDirData',
  'DisruptionBudget',
  'MultiplePodDisruptionBudgets',
  'LauncherPod',
  'Unschedulable',
  'ControlPlaneQuorum',
  'NotLiveMigratable',
  'MigrationFailed',
  'NoValidHost',
  'InsufficientCapacity',
  'NoComputeService',
  'OutOfBandUncordon',
  'Other',
] as const;
export type BlockerCode = (typeof BLOCKER_CODES)[number];

export interface Blocker {
  readonly code: BlockerCode;
  /** A sentence a person can act on, naming the object and the cause. */
  readonly reason: string;
  /** The item held back, when the blocker is about one item. */
  readonly item?: PlanItem;
}

export interface BranchPlan {
  readonly branch: BranchName;
  readonly toMove: readonly PlanItem[];
  readonly skipped: readonly SkippedItem[];
  readonly blockers: readonly Blocker[];
}

export interface Plan {
  readonly nodeName: string;
  readonly branches: readonly BranchPlan[];
}

/** `drainbridge plan`'s answer for a node: every branch's plan, kubectl's warnings, whether dry runs were made. */
export interface NodePlan {
  readonly plan: Plan;
  readonly warnings: readonly string[];
  /** Whether server dry-run evictions were made. */
  readonly serverDryRun: boolean;
}

/** Plans one branch of a node's evacuation (reads only). */
export type BranchPlanner = (nodeName: string) => Promise<BranchPlan>;

/** True when any branch of the plan has a blocker. */
export function isBlocked(plan: Plan): boolean {
  return plan.branches.some((branch) => branch.blockers.length > 0);
}
