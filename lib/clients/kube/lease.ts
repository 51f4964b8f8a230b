/**
 * coordination.k8s.io Leases (the workflow's admission mutex, the forwarder's leader election): read
 * (absent → undefined), create (409 when someone created it first → ConflictError), update conditional on
 * resourceVersion. Both clients serve: `KubeClient`, and the lean `KubeHttpClient`, whose calls also take
 * a signal (a stopping forwarder cancels its Lease requests).
 */
import type { V1Lease } from '@kubernetes/client-node';
import { isNotFound } from './errors.ts';

export interface LeaseCallSettings {
  readonly signal?: AbortSignal;
}

/** The Lease calls of a client (KubeClient's take no settings; the lean client's can be cancelled). */
export interface LeaseCalls {
  getLease(namespace: string, name: string, settings?: LeaseCallSettings): Promise<V1Lease>;
  createLease(namespace: string, lease: V1Lease, settings?: LeaseCallSettings): Promise<V1Lease>;
  replaceLease(namespace: string, lease: V1Lease, settings?: LeaseCallSettings): Promise<V1Lease>;
}

/** The lease, or undefined when it does not exist. */
export async function readLease(
  client: LeaseCalls,
  namespace: string,
  name: string,
  settings: LeaseCallSettings = {},
): Promise<V1Lease | undefined> {
  try {
    return await client.getLease(namespace, name, settings);
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

/** Creates the lease; ConflictError when it already exists (someone else won). */
export function createLease(
  client: LeaseCalls,
  namespace: string,
  lease: V1Lease,
  settings: LeaseCallSettings = {},
): Promise<V1Lease> {
  return client.createLease(namespace, { ...lease, metadata: { ...lease.metadata, namespace } }, settings);
}

/** Replaces the lease; the `metadata.resourceVersion` it carries must be current, else ConflictError. */
export function updateLease(
  client: LeaseCalls,
  namespace: string,
  lease: V1Lease,
  settings: LeaseCallSettings = {},
): Promise<V1Lease> {
  return client.replaceLease(namespace, lease, settings);
}
