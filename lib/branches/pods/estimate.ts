/**
 * The pods branches' part of the start-time estimate (their definitions' `estimate`): pods evicted as
 * `kubectl drain` does — each one's grace period, in waves of what its budget allows. The arithmetic is
 * lib/model/estimate.ts's; this finds the facts in what estimate-observe.ts read once for every branch.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { type BranchEstimate, estimatePodBranch, type PodToEvict } from '../../model/estimate.ts';
import type { BranchPlan } from '../../model/plan.ts';
import type { DrainOptions } from '../../model/request.ts';
import type { EstimateSetup } from '../contract/branch.ts';
import { budgetsCovering } from './refusals.ts';

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
