/**
 * How long an evacuation of a node will take, estimated from its plan. Pure: the facts are gathered by
 * estimate-observe.ts.
 *
 * - Pods: an eviction ends when the pod has terminated (at most its grace period). Pods under one
 *   PodDisruptionBudget go in waves of what the budget allows; the next wave waits until the last one's
 *   replacements are Ready. So a budget's pods take `waves × grace + (waves − 1) × ready`, pods under no
 *   budget one grace period, and the branch the longest of these (they run side by side).
 * - VMs (Nova servers, KubeVirt VMIs): count × the seconds per VM observed on this cluster (recent
 *   Evacuation records: the branch's time divided by the VMs it moved, which already includes how many
 *   migrate at once), or the configured default when there is no such record yet.
 * - Stages as the Evacuate machine runs them: the parallel branches side by side (the longest counts),
 *   then the after-VMs branches (infra pods) one after another.
 */
import type { BranchName } from './plan.ts';

/** A pod the plan would evict: its grace period and the budget that paces it, if exactly one does. */
export interface PodToEvict {
  readonly key: string;
  readonly graceSeconds: number;
  /** `namespace/name` of its PodDisruptionBudget; absent when none (or several: the API decides there). */
  readonly budget?: string;
}

export interface BudgetAllowance {
  /** `namespace/name`. */
  readonly key: string;
  /** status.disruptionsAllowed now (a wave is at least one pod: a budget at 0 lets one go once another is Ready). */
  readonly disruptionsAllowed: number;
}

export interface PodBranchFacts {
  readonly branch: BranchName;
  readonly stage: 'parallel' | 'after-vms';
  readonly pods: readonly PodToEvict[];
}

export interface VmBranchFacts {
  readonly branch: BranchName;
  readonly count: number;
  readonly secondsPerVm: number;
  /** True when secondsPerVm was observed on this cluster; false: the configured default. */
  readonly observed: boolean;
}

export interface EstimateFacts {
  readonly podBranches: readonly PodBranchFacts[];
  readonly budgets: readonly BudgetAllowance[];
  readonly vmBranches: readonly VmBranchFacts[];
  /** Seconds a replacement pod takes to become Ready. */
  readonly podReadySeconds: number;
}

export interface BranchEstimate {
  readonly branch: BranchName;
  readonly seconds: number;
  /** One line for people, e.g. `pods: 6 to evict; 3 waves under PDB shop/web (grace 30 s, 30 s to Ready): 150 s`. */
  readonly basis: string;
}

export interface Estimate {
  readonly seconds: number;
  readonly branches: readonly BranchEstimate[];
}

function groupByBudget(pods: readonly PodToEvict[]): Map<string | undefined, PodToEvict[]> {
  const groups = new Map<string | undefined, PodToEvict[]>();
  for (const pod of pods) groups.set(pod.budget, [...(groups.get(pod.budget) ?? []), pod]);
  return groups;
}

const maxGrace = (pods: readonly PodToEvict[]) => Math.max(0, ...pods.map((pod) => pod.graceSeconds));

/** What paces pod evictions: the budgets' allowances and how long a replacement takes to be Ready. */
export type PodPacing = Pick<EstimateFacts, 'budgets' | 'podReadySeconds'>;

/** One budget's pods (or the unbudgeted ones, `budget` undefined): seconds and how. */
function groupEstimate(
  budget: string | undefined,
  pods: readonly PodToEvict[],
  facts: PodPacing,
): { seconds: number; how: string } {
  const grace = maxGrace(pods);
  if (budget === undefined) return { seconds: grace, how: `${pods.length} under no PDB (grace ${grace} s)` };
  const allowed = facts.budgets.find((b) => b.key === budget)?.disruptionsAllowed ?? 1;
  const perWave = Math.max(1, allowed);
  const waves = Math.ceil(pods.length / perWave);
  const seconds = waves * grace + (waves - 1) * facts.podReadySeconds;
  const how = `${waves} wave(s) of ${perWave} under PDB ${budget} (grace ${grace} s, ${facts.podReadySeconds} s to Ready)`;
  return { seconds, how };
}

export function estimatePodBranch(branch: PodBranchFacts, facts: PodPacing): BranchEstimate {
  if (branch.pods.length === 0)
    return { branch: branch.branch, seconds: 0, basis: `${branch.branch}: nothing to evict` };
  let longest = { seconds: -1, how: '' };
  for (const [budget, pods] of groupByBudget(branch.pods)) {
    const group = groupEstimate(budget, pods, facts);
    if (group.seconds > longest.seconds) longest = group;
  }
  return {
    branch: branch.branch,
    seconds: longest.seconds,
    basis: `${branch.branch}: ${branch.pods.length} to evict; longest: ${longest.how}: ${longest.seconds} s`,
  };
}

export function estimateVmBranch(branch: VmBranchFacts): BranchEstimate {
  const seconds = Math.round(branch.count * branch.secondsPerVm);
  const source = branch.observed ? 'observed on this cluster' : 'configured default, nothing observed yet';
  const basis =
    branch.count === 0
      ? `${branch.branch}: no VMs`
      : `${branch.branch}: ${branch.count} VM(s) × ${Math.round(branch.secondsPerVm)} s (${source}): ${seconds} s`;
  return { branch: branch.branch, seconds, basis };
}

/** A branch's estimate and the stage it runs in (its definition's). */
export interface StagedEstimate {
  readonly stage: 'parallel' | 'after-vms';
  readonly estimate: BranchEstimate;
}

/**
 * The whole evacuation from each branch's own estimate: the parallel stage's longest branch, then the
 * after-VMs branches in turn (listed in that order, each stage in the order given).
 */
export function combineEstimates(branches: readonly StagedEstimate[]): Estimate {
  const parallel = branches.filter((b) => b.stage === 'parallel').map((b) => b.estimate);
  const after = branches.filter((b) => b.stage === 'after-vms').map((b) => b.estimate);
  const seconds =
    Math.max(0, ...parallel.map((b) => b.seconds)) + after.reduce((sum, branch) => sum + branch.seconds, 0);
  return { seconds, branches: [...parallel, ...after] };
}

/** The whole evacuation from pod and per-VM facts (the pod branches, then the VM branches, in each stage). */
export function estimateEvacuation(facts: EstimateFacts): Estimate {
  return combineEstimates([
    ...facts.podBranches
      .filter((b) => b.stage === 'parallel')
      .map((b) => ({ stage: b.stage, estimate: estimatePodBranch(b, facts) })),
    ...facts.vmBranches.map((b) => ({ stage: 'parallel' as const, estimate: estimateVmBranch(b) })),
    ...facts.podBranches
      .filter((b) => b.stage === 'after-vms')
      .map((b) => ({ stage: b.stage, estimate: estimatePodBranch(b, facts) })),
  ]);
}

/** A branch's observed seconds per moved item in one finished evacuation, or undefined when it moved none. */
export function secondsPerItem(branch: {
  readonly moved?: number;
  readonly startedAt?: string;
  readonly finishedAt?: string;
}): number | undefined {
  if (!branch.moved || !branch.startedAt || !branch.finishedAt) return undefined;
  const seconds = (Date.parse(branch.finishedAt) - Date.parse(branch.startedAt)) / 1000;
  return Number.isFinite(seconds) && seconds >= 0 ? seconds / branch.moved : undefined;
}

/** The median of recent observations (robust to one slow outlier); undefined when there are none. */
export function typicalSeconds(observations: readonly number[]): number | undefined {
  if (observations.length === 0) return undefined;
  const sorted = [...observations].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}
