/**
 * The KubeVirt branch: live-migrates the node's VMs with drainbridge's own migrations (lib/branches/kubevirt),
 * beside the pod drain and Nova. Launcher pods stay out of the pod branches; this branch moves their
 * VMs and stops only its own migrations on Restore and abort.
 */
import type { Config } from '../../config/index.ts';
import type { RecordFormat } from '../../util/json-record.ts';
import { type BranchDefinition, itemRowsReader } from '../contract/branch.ts';
import { perItemEstimate } from '../contract/estimates.ts';
import { KUBEVIRT_ACCESS } from './access.ts';
import {
  cancelKubeVirtMigrations,
  KUBEVIRT_STATE_FORMAT,
  type KubeVirtOptions,
  KubeVirtPass,
  kubeVirtPlanLines,
  planKubeVirtNode,
} from './index.ts';
import { vmiTimelines } from './progress.ts';

/**
 * How long one KubeVirt pass waits on a watch of its migrations, starting the next the moment one ends,
 * before it returns: as the pods pass (POD_PASS_WAIT_MS) — a 20-VM node needs a handful of passes
 * rather than one Step Functions retry per freed slot (each leaving the slot idle for its backoff), and
 * the wait stays well inside the functions' 60 s timeout, so an abort is seen within it.
 */
export const KUBEVIRT_PASS_WAIT_MS = 30_000;

export function kubeVirtOptions(config: Config): KubeVirtOptions {
  return { ...config.kubevirt };
}

export const kubeVirtBranch: BranchDefinition = {
  name: 'kubevirt',
  stage: 'parallel',
  moves: { podEviction: false, counter: 'servers-migrated', column: { key: 'kubevirt', heading: 'VMS', position: 1 } },
  words: { toMove: 'to move', moved: 'VMs moved' },
  stateFormat: KUBEVIRT_STATE_FORMAT as RecordFormat<unknown>,
  itemRows: itemRowsReader(KUBEVIRT_STATE_FORMAT, vmiTimelines),
  aslComment: "KubeVirt VMs, by drainbridge's own live migrations within KubeVirt's limits",
  pass: (deps) =>
    new KubeVirtPass({
      kube: deps.kube,
      store: deps.progress,
      options: kubeVirtOptions(deps.config),
      // Where the migration claims every evacuation shares live (the cluster-wide limit across nodes).
      namespace: deps.config.namespace,
      waitMs: KUBEVIRT_PASS_WAIT_MS,
    }),
  access: KUBEVIRT_ACCESS,
  cancel: (deps, requestIds, nodeName) => cancelKubeVirtMigrations(deps.kube, requestIds, nodeName),
  estimate: perItemEstimate,
  planner: async (setup) => async (nodeName) =>
    planKubeVirtNode(setup.kube, nodeName, {
      podSelector: setup.options.podSelector,
      options: kubeVirtOptions(setup.config),
    }),
  planLines: kubeVirtPlanLines,
};
