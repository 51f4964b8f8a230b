/**
 * The pod drain with kubectl's semantics: filters, the eviction reconcile pass (branches `pods` and
 * `infra-pods`), refusal classification, and the pod branches' plan / dry-run behind `drainbridge plan`.
 */
export { isLauncherPod, LAUNCHER_LABEL, type PodBranch, podBranchFilters } from './branch-filters.ts';
export { createEvictionPass, type EvictionPassSettings, isPastTimeout } from './eviction-pass.ts';
export { filterPod, KUBECTL_FILTERS, MESSAGES, makeFilters, type PodDeleteStatus, type PodFilter } from './filters.ts';
export { drainOptionsFromFlags, parseDurationSeconds } from './flags.ts';
export { type DrainPlan, type DrainPlanInput, planDrain } from './plan.ts';
export { type NodePlanSettings, planNode } from './plan-node.ts';
export { classifyEvictionStatus, type EvictionOutcome } from './refusals.ts';
export { type DrainSelection, selectPods } from './selection.ts';
export { type DrainState, INITIAL_DRAIN_STATE } from './tracking.ts';
