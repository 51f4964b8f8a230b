/**
 * coordination.k8s.io Leases for the workflow's admission mutex: read (absent → undefined), create
 * (409 when someone created it first → ConflictError), update conditional on resourceVersion.
 */
import type { V1Lease } from '@kubernetes/client-node';
import type { KubeClient } from './client.ts';
import { isNotFound } from './errors.ts';

/** The lease, or undefined when it does not exist. */
export async function readLease(client: KubeClient, namespace: string, name: string): Promise<V1Lease | undefined> {
  try {
    return await client.getLease(namespace, name);
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

/** Creates the lease; ConflictError when it already exists (someone else won). */
export function createLease(client: KubeClient, namespace: string, lease: V1Lease): Promise<V1Lease> {
  return client.createLease(namespace, { ...lease, metadata: { ...lease.metadata, namespace } });
}

/** Replaces the lease; the `metadata.resourceVersion` it carries must be current, else ConflictError. */
export function updateLease(client: KubeClient, namespace: string, lease: V1Lease): Promise<V1Lease> {
  return client.replaceLease(namespace, lease);
}
