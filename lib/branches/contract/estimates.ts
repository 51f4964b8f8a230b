/**
 * The start-time estimate of a branch that moves items one by one (VMs), for branch definitions to pick
 * as their `estimate` (branch.ts): the seconds per item observed in recent Evacuation records on this
 * cluster, else the configured default. The pods branches time theirs in lib/branches/pods/estimate.ts.
 */
import type { EvacuationObject } from '../../clients/kube/paths.ts';
import { type BranchEstimate, estimateVmBranch, secondsPerItem, typicalSeconds } from '../../model/estimate.ts';
import type { BranchPlan } from '../../model/plan.ts';
import type { EstimateSetup } from './branch.ts';

/** How many recent observations of a branch the typical seconds per item is taken from. */
const RECENT_OBSERVATIONS = 10;

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
