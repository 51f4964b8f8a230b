/**
 * Refuses to drain a control-plane node whose loss would cost etcd quorum. Pure.
 *
 * Members are the etcd pods (kubeadm's static pods, `component=etcd` in kube-system, seen as mirror
 * pods); when none are visible (external or managed etcd) the control-plane nodes stand in for them.
 * Quorum is a majority of members; draining is refused when the members still healthy without this
 * node would be fewer than that.
 */
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import type { Blocker } from '../domain/plan.ts';

export const CONTROL_PLANE_LABELS = ['node-role.kubernetes.io/control-plane', 'node-role.kubernetes.io/master'];

export function isControlPlaneNode(node: V1Node): boolean {
  const labels = node.metadata?.labels ?? {};
  return CONTROL_PLANE_LABELS.some((label) => Object.hasOwn(labels, label));
}

function isReady(conditions: readonly { type: string; status: string }[] | undefined): boolean {
  return (conditions ?? []).some((condition) => condition.type === 'Ready' && condition.status === 'True');
}

function isEtcdPod(pod: V1Pod): boolean {
  return pod.metadata?.namespace === 'kube-system' && pod.metadata?.labels?.component === 'etcd';
}

/** Members as (host node, healthy). */
function etcdMembers(nodes: readonly V1Node[], pods: readonly V1Pod[]): { node: string; healthy: boolean }[] {
  const etcd = pods.filter(isEtcdPod);
  if (etcd.length > 0) {
    return etcd.map((pod) => ({
      node: pod.spec?.nodeName ?? '',
      healthy: pod.status?.phase === 'Running' && isReady(pod.status?.conditions),
    }));
  }
  return nodes
    .filter(isControlPlaneNode)
    .map((node) => ({ node: node.metadata?.name ?? '', healthy: isReady(node.status?.conditions) }));
}

/** The blocker when draining `node` would leave etcd without quorum; undefined otherwise. */
export function quorumBlocker(node: V1Node, nodes: readonly V1Node[], pods: readonly V1Pod[]): Blocker | undefined {
  const name = node.metadata?.name ?? '';
  const members = etcdMembers(nodes, pods);
  const here = members.filter((member) => member.node === name);
  if (!isControlPlaneNode(node) && here.length === 0) return undefined;
  if (here.length === 0) return undefined;
  const quorum = Math.floor(members.length / 2) + 1;
  const healthyAfter = members.filter((member) => member.healthy && member.node !== name).length;
  if (healthyAfter >= quorum) return undefined;
  return {
    code: 'ControlPlaneQuorum',
    reason: `draining control-plane node ${name} would leave ${healthyAfter} of ${members.length} etcd members healthy; quorum needs ${quorum}`,
  };
}
