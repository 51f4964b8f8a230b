/**
 * The pod drain's two branches (lib/branches/pods): `pods`, beside the VM branches, and `infra-pods`, after
 * them. Both are planned together by the drain planner, whose one plan of the node they share.
 */
import type { PassInput, PassResult, ReconcilePass } from '../../model/pass.ts';
import type { BranchPlan, NodePlan } from '../../model/plan.ts';
import { type BranchDefinition, itemRowsReader, type MoveKind } from '../contract/branch.ts';
import type { WorkflowDeps } from '../contract/workflow-deps.ts';
import type { PodBranch } from './branch-filters.ts';
import { podEvictionEstimate } from './estimate.ts';
import { DRAIN_STATE_FORMAT, podTimelines } from './tracking.ts';

function branchOf(plan: NodePlan, branch: PodBranch): BranchPlan {
  return plan.plan.branches.find((b) => b.branch === branch) ?? { branch, toMove: [], skipped: [], blockers: [] };
}

/**
 * How long one pods pass waits on its watches (pods leaving, a budget freeing up) before it returns: long
 * enough that a drain behind a `maxUnavailable: 1` budget needs a few passes rather than one per pod —
 * each pass a Lambda invocation and three billed state transitions — and well inside the functions'
 * 60 s timeout, so that no Lambda waits for minutes and an abort is seen within it.
 */
export const POD_PASS_WAIT_MS = 30_000;

/**
 * The pass, its implementation loaded at its first run: the registry is read by processes that never
 * drain (the forwarder's preflight reads the branches' access lists), and the eviction pass brings
 * client-node's watch with it (test/deploy/image.test.ts keeps the forwarder's image path without it).
 */
function evictionPass(branch: PodBranch, deps: WorkflowDeps): ReconcilePass {
  let loaded: Promise<ReconcilePass> | undefined;
  const load = async (): Promise<ReconcilePass> => {
    const { createEvictionPass } = await import('./eviction-pass.ts');
    return createEvictionPass(deps.kube, deps.progress, {
      branch,
      waitMs: POD_PASS_WAIT_MS,
      // The state and the counts in one write per pass (the task's own record of them then changes nothing).
      recorder: deps.progress,
      infraPodSelector: deps.config.infraPodSelector,
      // The KubeVirt branch moves their VMs (and blocks on launcher pods no VMI accounts for).
      launcherPodsBlock: false,
    });
  };
  return {
    branch,
    run: async (input: PassInput): Promise<PassResult> => {
      loaded ??= load();
      return (await loaded).run(input);
    },
  };
}

/** Pods evicted as kubectl drain does; both pod branches add to the PODS column of `drainbridge status`. */
const EVICTED_PODS: MoveKind = {
  podEviction: true,
  counter: 'pods-evicted',
  column: { key: 'pods', heading: 'PODS', position: 0 },
};

export const podsBranch: BranchDefinition = {
  name: 'pods',
  stage: 'parallel',
  moves: EVICTED_PODS,
  words: { toMove: 'to evict', moved: 'pods evicted' },
  stateFormat: DRAIN_STATE_FORMAT,
  itemRows: itemRowsReader(DRAIN_STATE_FORMAT, podTimelines),
  pass: (deps) => evictionPass('pods', deps),
  estimate: (plan, setup) => podEvictionEstimate(plan, setup, 'parallel'),
  planner: async (setup) => async (nodeName) => branchOf(await setup.drainPlan(nodeName), 'pods'),
};

export const infraPodsBranch: BranchDefinition = {
  name: 'infra-pods',
  stage: 'after-vms',
  moves: EVICTED_PODS,
  words: { toMove: 'to evict', moved: 'infra pods evicted' },
  stateFormat: DRAIN_STATE_FORMAT,
  itemRows: itemRowsReader(DRAIN_STATE_FORMAT, podTimelines),
  aslComment: 'pods matching infraPodSelector (nova-compute, libvirt, agents) go only after the VMs have left',
  pass: (deps) => evictionPass('infra-pods', deps),
  estimate: (plan, setup) => podEvictionEstimate(plan, setup, 'after-vms'),
  planner: async (setup) => async (nodeName) => branchOf(await setup.drainPlan(nodeName), 'infra-pods'),
};
