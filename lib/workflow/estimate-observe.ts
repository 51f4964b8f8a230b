/**
 * Gathers what the evacuation estimate (estimate.ts) needs: the plan of every branch (as `drainbridge
 * plan` makes it, without server dry-runs), the pods' grace periods and budgets, and the seconds per VM
 * recent evacuations on this cluster took (their Evacuation records). Reads only.
 */
import type { V1Pod, V1PodDisruptionBudget } from '@kubernetes/client-node';
import type { Config } from '../config/index.ts';
import type { BranchPlan } from '../domain/plan.ts';
import type { DrainOptions } from '../domain/request.ts';
import type { NodePlan } from '../drain/plan-node.ts';
import { budgetsCovering } from '../drain/refusals.ts';
import type { KubeClient } from '../kube/client.ts';
import type { EvacuationObject } from '../kube/paths.ts';
import { planEvacuation } from './branches/plan.ts';
import { branchNamed } from './branches/registry.ts';
import {
  type BudgetAllowance,
  type Estimate,
  type EstimateFacts,
  estimateEvacuation,
  type PodBranchFacts,
  type PodToEvict,
  secondsPerItem,
  typicalSeconds,
  type VmBranchFacts,
} from './estimate.ts';

/** How many recent observations of a branch the typical seconds per VM is taken from. */
const RECENT_OBSERVATIONS = 10;

/** kubectl: `--grace-period` -1 uses the pod's own; Kubernetes' default is 30 s. */
function graceOf(pod: V1Pod | undefined, options: DrainOptions): number {
  if (options.gracePeriodSeconds >= 0) return options.gracePeriodSeconds;
  return pod?.spec?.terminationGracePeriodSeconds ?? 30;
}

const keyOf = (o: { metadata?: { namespace?: string; name?: string } }) =>
  `${o.metadata?.namespace}/${o.metadata?.name}`;

function podsToEvict(
  plan: BranchPlan,
  pods: ReadonlyMap<string, V1Pod>,
  budgets: readonly V1PodDisruptionBudget[],
  options: DrainOptions,
): PodToEvict[] {
  return plan.toMove.map((item) => {
    const pod = pods.get(item.uid);
    const covering = pod ? budgetsCovering(pod, budgets) : [];
    const budget = covering.length === 1 && covering[0] ? keyOf(covering[0]) : undefined;
    return { key: item.name, graceSeconds: graceOf(pod, options), ...(budget ? { budget } : {}) };
  });
}

/**
 * The typical seconds per moved item of `branch` in the most recent finished evacuations, and whether
 * any were observed.
 */
export function observedSecondsPerItem(records: readonly EvacuationObject[], branch: string): number | undefined {
  const observations = records
    .map((record) => record.status?.branches?.[branch])
    .filter((entry) => entry?.finishedAt !== undefined)
    .sort((a, b) => Date.parse(b?.finishedAt ?? '') - Date.parse(a?.finishedAt ?? ''))
    .map((entry) => (entry ? secondsPerItem(entry) : undefined))
    .filter((seconds): seconds is number => seconds !== undefined)
    .slice(0, RECENT_OBSERVATIONS);
  return typicalSeconds(observations);
}

function vmBranch(plan: BranchPlan, records: readonly EvacuationObject[], config: Config): VmBranchFacts {
  const observed = observedSecondsPerItem(records, plan.branch);
  return {
    branch: plan.branch,
    count: plan.toMove.length,
    secondsPerVm: observed ?? config.startTiming.migrationSeconds,
    observed: observed !== undefined,
  };
}

/** Estimates the evacuation of `nodeName` with `options` on the cluster as it is now (`planned`: its plan, when made already). */
export async function estimateNode(
  config: Config,
  kube: KubeClient,
  node: {
    readonly name: string;
    readonly options: DrainOptions;
    readonly planned?: NodePlan;
    /** The Evacuation records, when the caller listed them already (plan: none when the CRD is missing). */
    readonly records?: readonly EvacuationObject[];
  },
): Promise<Estimate> {
  const { name: nodeName, options, planned } = node;
  const [plan, pods, budgets, records] = await Promise.all([
    planned ??
      planEvacuation(config, kube, nodeName, {
        options,
        infraPodSelector: config.infraPodSelector,
        serverDryRun: false,
      }),
    kube.listPodsOnNode(nodeName, { chunkSize: options.chunkSize }),
    kube.listPodDisruptionBudgets(),
    node.records ?? kube.listEvacuations(),
  ]);
  const byUid = new Map(pods.map((pod) => [pod.metadata?.uid ?? '', pod]));
  const podBranches: PodBranchFacts[] = [];
  const vmBranches: VmBranchFacts[] = [];
  for (const branchPlan of plan.plan.branches) {
    // The registry says what each branch moves: evicted pods (grace periods, budgets) or items moved one by one.
    const { moves, stage } = branchNamed(branchPlan.branch);
    if (moves.podEviction) {
      podBranches.push({ branch: branchPlan.branch, stage, pods: podsToEvict(branchPlan, byUid, budgets, options) });
    } else {
      vmBranches.push(vmBranch(branchPlan, records, config));
    }
  }
  const allowances: BudgetAllowance[] = budgets.map((pdb) => ({
    key: keyOf(pdb),
    disruptionsAllowed: pdb.status?.disruptionsAllowed ?? 0,
  }));
  const facts: EstimateFacts = {
    podBranches,
    budgets: allowances,
    vmBranches,
    podReadySeconds: config.startTiming.podReadySeconds,
  };
  return estimateEvacuation(facts);
}
