/**
 * The etcd quorum guard as the workflow runs it before a node is cordoned: reads what quorum.ts needs
 * (every node, the etcd pods) and asks the same function `drainbridge plan` asks — so both name the same
 * blocker in the same words.
 */
import type { V1Node } from '@kubernetes/client-node';
import type { KubeClient } from '../../clients/kube/client.ts';
import type { Blocker } from '../../model/plan.ts';
import { isControlPlaneNode, quorumBlocker } from './quorum.ts';

/** kubeadm's etcd static pods carry this label (quorum.ts checks the namespace too). */
export const ETCD_POD_SELECTOR = 'component=etcd';

/**
 * The ControlPlaneQuorum blocker for evacuating `node` now, or undefined. Reads only: the etcd pods (one
 * small list) and, only when the node is a control-plane node or hosts a member, the nodes — which stand
 * in for the members when none is visible, and say which members are on nodes in maintenance (cordoned
 * or held by another request: counted as lost).
 */
export async function observeQuorumBlocker(client: KubeClient, node: V1Node): Promise<Blocker | undefined> {
  const etcdPods = await client.listPods(undefined, ETCD_POD_SELECTOR);
  const name = node.metadata?.name;
  const hostsMember = etcdPods.some((pod) => pod.metadata?.namespace === 'kube-system' && pod.spec?.nodeName === name);
  if (!hostsMember && !isControlPlaneNode(node)) return undefined;
  return quorumBlocker(node, await client.listNodes(), etcdPods);
}
