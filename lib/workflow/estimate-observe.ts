/**
 * Gathers what the evacuation estimate needs — the plan of every branch (as `drainbridge plan` makes it,
 * without server dry-runs), the node's pods, the budgets, the Evacuation records of recent evacuations —
 * once, and lets each branch time its own part (its definition's `estimate`: lib/branches/pods/estimate.ts,
 * lib/branches/contract/estimates.ts); lib/model/estimate.ts combines them by stage. Reads only.
 */

import type { EstimateSetup } from '../branches/contract/branch.ts';
import { planEvacuation } from '../branches/plan.ts';
import { branchNamed } from '../branches/registry.ts';
import type { KubeClient } from '../clients/kube/client.ts';
import type { EvacuationObject } from '../clients/kube/paths.ts';
import type { Config } from '../config/index.ts';
import { combineEstimates, type Estimate } from '../model/estimate.ts';
import type { NodePlan } from '../model/plan.ts';
import type { DrainOptions } from '../model/request.ts';

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
  const setup: EstimateSetup = {
    config,
    options,
    pods: new Map(pods.map((pod) => [pod.metadata?.uid ?? '', pod])),
    budgets,
    records,
  };
  // Each branch times its own part (its definition's estimate), in the stage it runs in.
  return combineEstimates(
    plan.plan.branches.map((branchPlan) => {
      const branch = branchNamed(branchPlan.branch);
      return { stage: branch.stage, estimate: branch.estimate(branchPlan, setup) };
    }),
  );
}
