/**
 * Reads what a drain decision needs from the cluster: the pods on the node (paged, `--pod-selector` as
 * the label selector, as kubectl lists them) and whether the DaemonSets of DaemonSet pods still exist.
 */
import type { V1Pod, V1PodDisruptionBudget } from '@kubernetes/client-node';
import type { KubeClient } from '../../clients/kube/client.ts';
import { isNotFound } from '../../clients/kube/errors.ts';
import type { DrainOptions } from '../../model/request.ts';
import { daemonSetsToCheck } from './selection.ts';

export interface NodePods {
  readonly pods: readonly V1Pod[];
  /** For the daemonSet filter: true, false (404) or the lookup error's message. */
  readonly daemonSetExists: (namespace: string, name: string) => boolean | string;
}

/** Whether a DaemonSet exists, for kubectl's daemonSet filter: true, false (404), or the lookup error's message. */
export async function daemonSetState(client: KubeClient, namespace: string, name: string): Promise<boolean | string> {
  try {
    await client.getDaemonSet(namespace, name);
    return true;
  } catch (error) {
    if (isNotFound(error)) return false;
    return error instanceof Error ? error.message : String(error);
  }
}

/** Lists the node's pods and looks up their DaemonSets (once each). */
export async function observeNodePods(client: KubeClient, nodeName: string, options: DrainOptions): Promise<NodePods> {
  const pods = await client.listPodsOnNode(nodeName, {
    labelSelector: options.podSelector,
    chunkSize: options.chunkSize,
  });
  const known = new Map<string, boolean | string>();
  for (const { namespace, name } of daemonSetsToCheck(pods)) {
    known.set(`${namespace}/${name}`, await daemonSetState(client, namespace, name));
  }
  return {
    pods,
    daemonSetExists: (namespace, name) => known.get(`${namespace}/${name}`) ?? false,
  };
}

/** The PDBs covering a pod, described for a blocker: `name (disruptionsAllowed=N)`, joined. */
export function describeBudgets(budgets: readonly V1PodDisruptionBudget[]): string {
  return budgets
    .map((pdb) => `${pdb.metadata?.name ?? '?'} (disruptionsAllowed=${pdb.status?.disruptionsAllowed ?? '?'})`)
    .join(', ');
}
