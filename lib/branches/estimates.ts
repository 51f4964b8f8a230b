/**
 * The start-time estimate's two ways of timing a branch, for branch definitions to pick as their
 * `estimate` (branch.ts): pods evicted as `kubectl drain` does (grace periods, paced by their budgets),
 * or items moved one by one (VMs: seconds per item observed in recent Evacuation records on this
 * cluster, else the configured default). The arithmetic is estimate.ts's; this module finds the facts
 * in what estimate-observe.ts read once for every branch.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { EvacuationObject } from '../clients/kube/paths.ts';
import type { BranchPlan } from '../model/plan.ts';
import type { DrainOptions } from '../model/request.ts';
import {
  type BranchEstimate,
  estimatePodBranch,
  estimateVmBranch,
  type PodToEvict,
  secondsPerItem,
  typicalSeconds,
} from '../workflow/estimate.ts';
import type { EstimateSetup } from './contract/branch.ts';
import { budgetsCovering } from './pods/refusals.ts';

/** How many recent observations of a branch the typical seconds per item is taken from. */
const RECENT_OBSERVATIONS = 10;

/** kubectl: `--grace-period` -1 uses the pod's own; Kubernetes' default is 30 s. */
function graceOf(pod: V1Pod | undefined, options: DrainOptions): number {
  if (options.gracePeriodSeconds >= 0) return options.gracePeriodSeconds;
  return pod?.spec?.terminationGracePeriodSeconds ?? 30;
}

const keyOf = (o: { metadata?: { namespace?: string; name?: string } }) =>
  `${o.metadata?.namespace}/${o.metadata?.name}`;

function podsToEvict(plan: BranchPlan, setup: EstimateSetup): PodToEvict[] {
  return plan.toMove.map((item) => {
    const pod = setup.pods.get(item.uid);
    const covering = pod ? budgetsCovering(pod, setup.budgets) : [];
    const budget = covering.length === 1 && covering[0] ? keyOf(covering[0]) : undefined;
    return { key: item.name, graceSeconds: graceOf(pod, setup.options), ...(budget ? { budget } : {}) };
  });
}

/** A pod branch's time: its pods' grace periods, in waves of what their budget allows. */
export function podEvictionEstimate(
  plan: BranchPlan,
  setup: EstimateSetup,
  stage: 'parallel' | 'after-vms',
): BranchEstimate {
  const budgets = setup.budgets.map((pdb) => ({
    key: keyOf(pdb),
    disruptionsAllowed: pdb.status?.disruptionsAllowed ?? 0,
  }));
  return estimatePodBranch(
    { branch: plan.branch, stage, pods: podsToEvict(plan, setup) },
    { budgets, podReadySeconds: setup.config.startTiming.podReadySeconds },
  );
}

/** The typical seconds per moved item of `branch` in the most recent finished evacuations, if any were observed. */
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

/** A branch moving items one by one (VMs): count × the seconds per item observed here, or the configured default. */
export function perItemEstimate(plan: BranchPlan, setup: EstimateSetup): BranchEstimate {
  const observed = observedSecondsPerItem(setup.records, plan.branch);
  return estimateVmBranch({
    branch: plan.branch,
    count: plan.toMove.length,
    secondsPerVm: observed ?? setup.config.startTiming.migrationSeconds,
    observed: observed !== undefined,
  });
}
