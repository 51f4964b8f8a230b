/**
 * The pod drain's part of `drainbridge plan`: gathers what the pure planner needs, plans both pod
 * branches, and asks the API server for a dry-run eviction of every pod the plan would evict (so
 * admission webhooks and PDB checks answer as they would for real). Writes nothing. The other
 * branches are planned beside it by lib/branches/plan.ts.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { KubeClient } from '../../clients/kube/client.ts';
import { apiStatusOf, isNotFound } from '../../clients/kube/errors.ts';
import { podKey } from '../../clients/kube/paths.ts';
import { nodeNotFound, TargetNotFound } from '../../errors/index.ts';
import type { Blocker, BranchPlan, NodePlan } from '../../model/plan.ts';
import type { DrainOptions } from '../../model/request.ts';
import { observeNodePods } from './observe.ts';
import { planDrain } from './plan.ts';
import { classifyEvictionStatus } from './refusals.ts';
import { itemOf } from './selection.ts';

export interface NodePlanSettings {
  readonly options: DrainOptions;
  readonly infraPodSelector: string;
  readonly now?: Date;
  /** Ask the API server for dry-run evictions (default true). */
  readonly serverDryRun?: boolean;
  /** Whether launcher pods are `pods` blockers (default true; false when the KubeVirt branch plans their VMs). */
  readonly launcherPodsBlock?: boolean;
}

async function dryRunBlocker(client: KubeClient, pod: V1Pod): Promise<Blocker | undefined> {
  try {
    await client.evictPod(pod, { dryRun: true });
    return undefined;
  } catch (error) {
    const status = apiStatusOf(error);
    if (!status) throw error;
    const outcome = classifyEvictionStatus(status);
    const reason = `server dry-run eviction of pod ${podKey(pod)}: ${'message' in outcome ? outcome.message : outcome.kind}`;
    if (outcome.kind === 'budget') return { code: 'DisruptionBudget', reason, item: itemOf(pod) };
    if (outcome.kind === 'multiple-budgets') return { code: 'MultiplePodDisruptionBudgets', reason, item: itemOf(pod) };
    if (outcome.kind === 'refused') return { code: 'Other', reason, item: itemOf(pod) };
    return undefined;
  }
}

/** Adds dry-run refusals the static analysis did not already report for the same pod. */
async function withDryRun(client: KubeClient, branch: BranchPlan, pods: readonly V1Pod[]): Promise<BranchPlan> {
  const byUid = new Map(pods.map((pod) => [pod.metadata?.uid ?? '', pod]));
  const extra: Blocker[] = [];
  for (const item of branch.toMove) {
    const pod = byUid.get(item.uid);
    const blocker = pod ? await dryRunBlocker(client, pod) : undefined;
    const known = branch.blockers.some((b) => b.item?.uid === blocker?.item?.uid && b.code === blocker?.code);
    if (blocker && !known) extra.push(blocker);
  }
  return extra.length > 0 ? { ...branch, blockers: [...branch.blockers, ...extra] } : branch;
}

/** Plans the evacuation of `nodeName` against the live cluster. */
export async function planNode(client: KubeClient, nodeName: string, settings: NodePlanSettings): Promise<NodePlan> {
  const node = await client.getNode(nodeName).catch((error: unknown) => {
    throw isNotFound(error) ? new TargetNotFound(nodeNotFound(nodeName)) : error;
  });
  const [nodes, observed, allPods, budgets] = await Promise.all([
    client.listNodes(),
    observeNodePods(client, nodeName, settings.options),
    client.listPods(),
    client.listPodDisruptionBudgets(),
  ]);
  const drain = planDrain({
    node,
    nodes,
    podsOnNode: observed.pods,
    allPods,
    budgets,
    options: settings.options,
    now: settings.now ?? new Date(),
    daemonSetExists: observed.daemonSetExists,
    infraPodSelector: settings.infraPodSelector,
    ...(settings.launcherPodsBlock !== undefined ? { launcherPodsBlock: settings.launcherPodsBlock } : {}),
  });
  const dryRun = (settings.serverDryRun ?? true) && !settings.options.disableEviction;
  const branches = dryRun
    ? await Promise.all(drain.branches.map((b) => withDryRun(client, b, observed.pods)))
    : drain.branches;
  return { plan: { nodeName, branches }, warnings: drain.warnings, serverDryRun: dryRun };
}
