/**
 * Which evicted pods' replacements could schedule nowhere else, using the scheduler predicates shared
 * with the simulator (lib/clients/kube/scheduling.ts): cordon, taints, node selector and required affinity,
 * pod capacity. Replacements are placed one after another, least-loaded node first, so capacity that
 * one replacement takes is not offered to the next. Pure.
 */
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { placePod, type SchedulingNode, type SchedulingPod } from '../../clients/kube/scheduling.ts';
import { controllerOf, isFinished } from './filters.ts';

/** Controllers that create a replacement when a pod is evicted. */
const REPLACING_CONTROLLERS = new Set(['ReplicaSet', 'StatefulSet', 'ReplicationController', 'Job']);

export function hasReplacement(pod: V1Pod): boolean {
  const controller = controllerOf(pod);
  return controller !== undefined && REPLACING_CONTROLLERS.has(controller.kind) && !isFinished(pod);
}

function toSchedulingNode(node: V1Node): SchedulingNode {
  return {
    metadata: { name: node.metadata?.name ?? '', labels: node.metadata?.labels ?? {} },
    spec: { unschedulable: node.spec?.unschedulable, taints: node.spec?.taints ?? [] },
    status: { allocatable: node.status?.allocatable ?? {}, conditions: node.status?.conditions ?? [] },
  };
}

function toSchedulingPod(pod: V1Pod): SchedulingPod {
  return {
    metadata: { name: pod.metadata?.name, namespace: pod.metadata?.namespace },
    spec: {
      nodeName: pod.spec?.nodeName,
      nodeSelector: pod.spec?.nodeSelector,
      tolerations: pod.spec?.tolerations ?? [],
      affinity: pod.spec?.affinity,
    },
    status: { phase: pod.status?.phase },
  };
}

export interface Unplaceable {
  readonly pod: V1Pod;
  /** The scheduler's FailedScheduling message. */
  readonly message: string;
}

/** The pods to evict whose replacements fit no other node. */
export function unplaceableReplacements(
  toEvict: readonly V1Pod[],
  drainedNode: string,
  nodes: readonly V1Node[],
  pods: readonly V1Pod[],
): Unplaceable[] {
  const candidates = nodes.filter((node) => node.metadata?.name !== drainedNode).map(toSchedulingNode);
  const podsByNode = new Map<string, SchedulingPod[]>();
  for (const pod of pods) {
    const nodeName = pod.spec?.nodeName;
    if (!nodeName || nodeName === drainedNode) continue;
    podsByNode.set(nodeName, [...(podsByNode.get(nodeName) ?? []), toSchedulingPod(pod)]);
  }
  const unplaceable: Unplaceable[] = [];
  for (const pod of toEvict.filter(hasReplacement)) {
    const replacement = toSchedulingPod({
      ...pod,
      spec: { ...pod.spec, containers: pod.spec?.containers ?? [], nodeName: undefined },
    });
    const placement = placePod(replacement, candidates, podsByNode);
    const target = placement.fitting[0];
    if (!target) {
      unplaceable.push({ pod, message: placement.message ?? 'no nodes available to schedule pods' });
      continue;
    }
    const name = target.metadata?.name ?? '';
    podsByNode.set(name, [
      ...(podsByNode.get(name) ?? []),
      { ...replacement, spec: { ...replacement.spec, nodeName: name } },
    ]);
  }
  return unplaceable;
}
