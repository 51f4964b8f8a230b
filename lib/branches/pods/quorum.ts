/**
 * Refuses to drain a control-plane node whose loss would cost etcd quorum. Pure.
 *
 * Members are the etcd pods (kubeadm's static pods, `component=etcd` in kube-system, seen as mirror
 * pods); when none are visible (external or managed etcd) the control-plane nodes stand in for them.
 * Quorum is a majority of members; draining is refused when the members still healthy without this
 * node would be fewer than that. A member on another node that is cordoned or held by a drainbridge
 * request counts as unavailable: that node is in maintenance too and may go down at any moment (two
 * control-plane nodes evacuated at once would otherwise each be checked against the other's member).
 */
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import type { Blocker } from '../../model/plan.ts';
import { HELD_LABEL } from '../../node/ledger.ts';

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

/** Whether a node is in maintenance: cordoned (by anyone) or held by a drainbridge request. */
export function isInMaintenance(node: V1Node): boolean {
  return node.spec?.unschedulable === true || node.metadata?.labels?.[HELD_LABEL] !== undefined;
}

/** Members as (host node, healthy); a member on a node in maintenance is not healthy. */
function etcdMembers(nodes: readonly V1Node[], pods: readonly V1Pod[]): { node: string; healthy: boolean }[] {
  const away = new Set(nodes.filter(isInMaintenance).map((node) => node.metadata?.name ?? ''));
  const etcd = pods.filter(isEtcdPod);
  if (etcd.length > 0) {
    return etcd.map((pod) => ({
      node: pod.spec?.nodeName ?? '',
      healthy:
        pod.status?.phase === 'Running' && isReady(pod.status?.conditions) && !away.has(pod.spec?.nodeName ?? ''),
    }));
  }
  return nodes.filter(isControlPlaneNode).map((node) => ({
    node: node.metadata?.name ?? '',
    healthy: isReady(node.status?.conditions) && !away.has(node.metadata?.name ?? ''),
  }));
}

/**
 * The blocker when draining `node` would leave etcd without quorum; undefined otherwise. `nodes` must be
 * every node of the cluster (the members on nodes in maintenance are counted as lost); the node itself
 * is judged as the member being drained, whatever its own cordon.
 */
export function quorumBlocker(node: V1Node, nodes: readonly V1Node[], pods: readonly V1Pod[]): Blocker | undefined {
  const name = node.metadata?.name ?? '';
  const members = etcdMembers(nodes, pods);
  const here = members.filter((member) => member.node === name);
  if (!isControlPlaneNode(node) && here.length === 0) return undefined;
  if (here.length === 0) return undefined;
  const quorum = Math.floor(members.length / 2) + 1;
  const healthyAfter = members.filter((member) => member.healthy && member.node !== name).length;
  if (healthyAfter >= quorum) return undefined;
  const inMaintenance = nodes.filter((other) => other.metadata?.name !== name && isInMaintenance(other));
  const away = members.filter((member) => inMaintenance.some((other) => other.metadata?.name === member.node));
  const note =
    away.length > 0 ? ` (members on nodes in maintenance count as lost: ${away.map((m) => m.node).join(', ')})` : '';
  return {
    code: 'ControlPlaneQuorum',
    reason: `draining control-plane node ${name} would leave ${healthyAfter} of ${members.length} etcd members healthy; quorum needs ${quorum}${note}`,
  };
}
