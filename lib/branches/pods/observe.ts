/**
 * Reads what a drain decision needs from the cluster: the pods on the node (paged, `--pod-selector` as
 * the label selector, as kubectl lists them) and whether the DaemonSets of DaemonSet pods still exist.
 */
import type { V1Pod, V1PodDisruptionBudget } from '@kubernetes/client-node';
import type { KubeClient } from '../../clients/kube/client.ts';
import { isNotFound } from '../../clients/kube/errors.ts';
import { ClusterUnreachable, TransientError } from '../../errors/index.ts';
import type { DrainOptions } from '../../model/request.ts';
import { daemonSetsToCheck } from './selection.ts';

export interface NodePods {
  readonly pods: readonly V1Pod[];
  /** For the daemonSet filter: true, false (404) or the lookup error's message. */
  readonly daemonSetExists: (namespace: string, name: string) => boolean | string;
}

/**
 * Whether a DaemonSet exists, for kubectl's daemonSet filter: true, false (404), or the lookup error's
 * message — an answer that refuses the lookup (403), which kubectl's drain fails on. A fault that may
 * pass (a cut connection, 5xx, 429) is thrown instead, and the step is retried: kubectl fails its one
 * run and the person runs it again, where taken as a refusal it failed the whole evacuation (seen at
 * 1,000 nodes: a connection closed early ended a request EvacuationFailed).
 */
export async function daemonSetState(client: KubeClient, namespace: string, name: string): Promise<boolean | string> {
  try {
    await client.getDaemonSet(namespace, name);
    return true;
  } catch (error) {
    if (isNotFound(error)) return false;
    if (error instanceof TransientError || error instanceof ClusterUnreachable) throw error;
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
