/**
 * The pod counts of a NodeMaintenance's first status, as node-maintenance-operator fills them
 * (initMaintenanceStatus): `totalpods` every pod on the node, `evictionPods` and `pendingPods(Refs)` the ones
 * its drain would evict — kubectl's GetPodsForDeletion with NMO's drainer (IgnoreAllDaemonSets, Force,
 * DeleteEmptyDirData): all but mirror pods and pods of a DaemonSet. They stand until drainbridge's
 * evacuation has counted the node's pods itself (decide.ts). Pure but for `readFirstCounts`.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { controllerOf, isMirrorPod } from '../../branches/pods/filters.ts';
import type { KubeHttpClient } from '../../clients/kube/http/client.ts';
import type { NodeMaintenanceStatus, PodReference } from './types.ts';

export type FirstCounts = Pick<NodeMaintenanceStatus, 'totalpods' | 'evictionPods' | 'pendingPods' | 'pendingPodsRefs'>;

export function firstCounts(pods: readonly V1Pod[]): FirstCounts {
  const evicted: PodReference[] = pods
    .filter((pod) => !isMirrorPod(pod) && controllerOf(pod)?.kind !== 'DaemonSet')
    .map((pod) => ({ namespace: pod.metadata?.namespace ?? '', name: pod.metadata?.name ?? '' }))
    .sort((a, b) => `${a.namespace}/${a.name}`.localeCompare(`${b.namespace}/${b.name}`));
  return {
    totalpods: pods.length,
    evictionPods: evicted.length,
    ...(evicted.length > 0 ? { pendingPods: evicted.map((ref) => ref.name), pendingPodsRefs: evicted } : {}),
  };
}

/** The pods on `node` (NMO's list: every namespace, field selector spec.nodeName), counted. */
export async function readFirstCounts(client: KubeHttpClient, node: string): Promise<FirstCounts> {
  return firstCounts(await client.listPods({ fieldSelector: `spec.nodeName=${node}` }));
}
