/**
 * `drainbridge plan`: every registered branch's plan of a node, in registry order. Reads only. The pod
 * drain's plan (both pod branches, server dry-run evictions) is made once and shared by its branches.
 */

import type { KubeClient } from '../clients/kube/client.ts';
import type { Config } from '../config/index.ts';
import type { BranchPlan, BranchPlanner, NodePlan } from '../model/plan.ts';
import type { DrainOptions } from '../model/request.ts';
import { planNode } from './pods/plan-node.ts';
import { BRANCH_REGISTRY } from './registry.ts';

export interface EvacuationPlanSettings {
  readonly options: DrainOptions;
  readonly infraPodSelector: string;
  /** Ask the API server for dry-run evictions (default true). */
  readonly serverDryRun?: boolean;
  readonly now?: Date;
}

/** The drain's plan of each node, made on first use. */
function sharedDrainPlan(kube: KubeClient, settings: EvacuationPlanSettings): (nodeName: string) => Promise<NodePlan> {
  const plans = new Map<string, Promise<NodePlan>>();
  return (nodeName) => {
    let plan = plans.get(nodeName);
    if (!plan) {
      // The KubeVirt branch plans the VMs of launcher pods (and blocks on those no VMI accounts for).
      plan = planNode(kube, nodeName, { ...settings, launcherPodsBlock: false });
      plans.set(nodeName, plan);
    }
    return plan;
  };
}

/** Plans the evacuation of `nodeName`: the drain's warnings, then each branch that is on. */
export async function planEvacuation(
  config: Config,
  kube: KubeClient,
  nodeName: string,
  settings: EvacuationPlanSettings,
): Promise<NodePlan> {
  const drainPlan = sharedDrainPlan(kube, settings);
  // Planners first: a branch that cannot start (bad OpenStack credentials) fails before the cluster is read.
  const planners: BranchPlanner[] = [];
  for (const branch of BRANCH_REGISTRY) {
    const planner = await branch.planner({ config, kube, options: settings.options, drainPlan });
    if (planner) planners.push(planner);
  }
  const drain = await drainPlan(nodeName);
  const branches: BranchPlan[] = [];
  for (const planner of planners) branches.push(await planner(nodeName));
  return { plan: { nodeName, branches }, warnings: drain.warnings, serverDryRun: drain.serverDryRun };
}
