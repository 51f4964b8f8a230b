/**
 * The KubeVirt branch of an evacuation: live-migrates the node's VMs with drainbridge's own
 * VirtualMachineInstanceMigrations within KubeVirt's limits, retries failed migrations, reports what
 * cannot leave without being shut down (never shutting it down unless the operator opted in), and
 * cancels only its own migrations. See README.md here.
 */
export { cancelKubeVirtMigrations, type KubeVirtCancelled } from './cancel.ts';
export {
  DEFAULT_KUBEVIRT_OPTIONS,
  KUBEVIRT_STATE_FORMAT,
  type KubeVirtBranchState,
  type KubeVirtOptions,
  MIGRATION_MARKS,
  type VmiProgress,
} from './model.ts';
export { KubeVirtPass, type KubeVirtPassDeps } from './pass.ts';
export { type KubeVirtPlan, kubeVirtPlanLines, planKubeVirtNode } from './plan.ts';
