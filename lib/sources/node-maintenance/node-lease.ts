/**
 * Taking, renewing and releasing medik8s's node Lease (lease.ts) through the forwarder's Kubernetes
 * client: what NMO does on each reconcile (RequestLease) and when its maintenance ends (InvalidateLease,
 * which deletes the Lease when it is ours and leaves another holder's alone).
 */
import type { V1Lease, V1Node } from '@kubernetes/client-node';
import { apiCodeOf, isNotFound } from '../../clients/kube/errors.ts';
import { readLease } from '../../clients/kube/lease.ts';
import { NODE_LEASE_NAMESPACE, nodeLeaseName, nodeLeaseRecord, nodeLeaseState } from './lease.ts';

export interface NodeLeaseCalls {
  getLease(namespace: string, name: string): Promise<V1Lease>;
  createLease(namespace: string, lease: V1Lease): Promise<V1Lease>;
  replaceLease(namespace: string, lease: V1Lease): Promise<V1Lease>;
  deleteLease(namespace: string, name: string, resourceVersion: string): Promise<unknown>;
}

/** Taken (created, renewed or taken over), held by another, or a failed call (its error, with the repair). */
export type LeaseOutcome =
  | { readonly kind: 'taken' }
  | { readonly kind: 'held'; readonly holder: string; readonly until: Date }
  | { readonly kind: 'failed'; readonly error: string };

/** The repair for a refused Lease call: the namespace missing, or the role not granting it. */
function describeFailure(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  if (isNotFound(error))
    return `${text} (the namespace ${NODE_LEASE_NAMESPACE} is missing: kubectl apply -k deploy/base, or kubectl create namespace ${NODE_LEASE_NAMESPACE})`;
  if (apiCodeOf(error) === 403)
    return `${text} (bind the Role drainbridge-node-leases of deploy/base in ${NODE_LEASE_NAMESPACE})`;
  return text;
}

/** NMO's RequestLease for `node`: create, renew ours, take over a lapsed one; a valid one held by another is reported. */
export async function requestNodeLease(client: NodeLeaseCalls, node: V1Node, now: Date): Promise<LeaseOutcome> {
  const name = nodeLeaseName(node.metadata?.name ?? '');
  try {
    const read = await readLease(client, NODE_LEASE_NAMESPACE, name);
    const state = nodeLeaseState(read, now);
    if (state.kind === 'held') return { kind: 'held', holder: state.holder, until: state.until };
    const record = nodeLeaseRecord(node, read, now);
    if (read) await client.replaceLease(NODE_LEASE_NAMESPACE, record);
    else await client.createLease(NODE_LEASE_NAMESPACE, record);
    return { kind: 'taken' };
  } catch (error) {
    return { kind: 'failed', error: describeFailure(error) };
  }
}

/** NMO's InvalidateLease: deletes the node's Lease when drainbridge holds it; absent or another's: nothing. */
export async function releaseNodeLease(client: NodeLeaseCalls, nodeName: string, now: Date): Promise<void> {
  const name = nodeLeaseName(nodeName);
  const read = await readLease(client, NODE_LEASE_NAMESPACE, name);
  if (!read || nodeLeaseState(read, now).kind !== 'ours') return;
  try {
    await client.deleteLease(NODE_LEASE_NAMESPACE, name, read.metadata?.resourceVersion ?? '');
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
}
