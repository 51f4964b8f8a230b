/**
 * medik8s's node Lease, as node-maintenance-operator takes it (medik8s/common pkg/lease, NMO's
 * controller): `medik8s-leases/node-<node>`, holder `node-maintenance`, 3600 s, owned by the Node.
 * medik8s components (self-node-remediation, node-healthcheck, NMO) coordinate by it: whoever holds a
 * valid one has the node. Pure: what a Lease read means now, and the record to write.
 */
import type { V1Lease, V1Node } from '@kubernetes/client-node';

/** medik8s/common's default namespace for these Leases (NMO creates it at start; drainbridge ships it). */
export const NODE_LEASE_NAMESPACE = 'medik8s-leases';
/** NMO's `LeaseHolderIdentity`: drainbridge takes the Lease as NMO, so medik8s tools see the maintenance. */
export const NODE_LEASE_HOLDER = 'node-maintenance';
/** NMO's `LeaseDuration`. */
export const NODE_LEASE_SECONDS = 3600;
/** NMO's `maxAllowedErrorToUpdateOwnedLease`: more lease errors than this fail the maintenance. */
export const MAX_LEASE_ERRORS = 3;

/** medik8s/common's `generateLeaseName`: the kind and the name, lower case. */
export const nodeLeaseName = (node: string): string => `node-${node}`.toLowerCase();

/** What a Lease read means for drainbridge now. */
export type NodeLeaseState =
  | { readonly kind: 'absent' }
  | { readonly kind: 'ours' }
  /** Another holder's, expired (or never renewed): it may be taken over. */
  | { readonly kind: 'lapsed' }
  /** Another holder's, valid until `until`. */
  | { readonly kind: 'held'; readonly holder: string; readonly until: Date };

const timeOf = (value: unknown): number | undefined => {
  if (value === undefined || value === null) return undefined;
  const ms = new Date(value as string | Date).getTime();
  return Number.isNaN(ms) ? undefined : ms;
};

/** medik8s/common's `isValidLease`: valid while the due time is not past and the renew time not ahead. */
export function nodeLeaseState(lease: V1Lease | undefined, now: Date): NodeLeaseState {
  if (!lease) return { kind: 'absent' };
  const holder = lease.spec?.holderIdentity;
  if (holder === NODE_LEASE_HOLDER) return { kind: 'ours' };
  const renewed = timeOf(lease.spec?.renewTime);
  const seconds = lease.spec?.leaseDurationSeconds;
  if (renewed === undefined || seconds === undefined) return { kind: 'lapsed' };
  const due = renewed + seconds * 1000;
  if (due < now.getTime() || renewed > now.getTime()) return { kind: 'lapsed' };
  return { kind: 'held', holder: holder || 'unknown', until: new Date(due) };
}

/**
 * The Lease to write: created, renewed (ours), or taken over (a lapsed one: the acquire time and a
 * transition more), as medik8s/common's RequestLease writes it, owned by the Node.
 */
export function nodeLeaseRecord(node: V1Node, read: V1Lease | undefined, now: Date): V1Lease {
  const name = node.metadata?.name ?? '';
  const ours = read?.spec?.holderIdentity === NODE_LEASE_HOLDER;
  const transitions = read ? (read.spec?.leaseTransitions ?? 0) + (ours ? 0 : 1) : 0;
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: {
      ...(read?.metadata ?? {}),
      name: nodeLeaseName(name),
      namespace: NODE_LEASE_NAMESPACE,
      ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name, uid: node.metadata?.uid ?? '' }],
    },
    spec: {
      ...(read?.spec ?? {}),
      holderIdentity: NODE_LEASE_HOLDER,
      leaseDurationSeconds: NODE_LEASE_SECONDS,
      renewTime: now,
      acquireTime: ours && read?.spec?.acquireTime ? read.spec.acquireTime : now,
      leaseTransitions: transitions,
    },
  };
}

/** NMO's `AlreadyHeldError` text. */
export const alreadyHeld = (holder: string): string =>
  `can't update or invalidate the lease because it is held by different owner: ${holder}`;

/** NMO's lastError texts around the Lease (its controller's). */
export const LEASE_ERRORS = Object.freeze({
  /** Held by another before the maintenance started: NMO waits, the count unchanged. */
  notOwned: (holder: string, count: number) =>
    `failed to obtain a lease that is not owned by us : ${alreadyHeld(holder)} errorOnLeaseCount ${count}`,
  /** Held by another once the maintenance is under way. */
  lost: (holder: string, count: number) =>
    `failed to extend a lease that used to be owned by us, incrementing error on lease count: ${alreadyHeld(holder)}, errorOnLeaseCount: ${count}`,
  /** More than MAX_LEASE_ERRORS failures: NMO fails the maintenance. */
  failed: (count: number) => `maintenance failed: lease could not be extended after ${count} attempts`,
});
