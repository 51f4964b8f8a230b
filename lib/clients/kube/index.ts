/**
 * drainbridge's Kubernetes access: the one client (`KubeClient`: timeouts, retries, named errors),
 * error classification, the one conflict-retry loop, Leases for the workflow's admission mutex, and pure
 * request builders.
 */
export { KubeClient, type KubeClientOptions } from './client.ts';
export { CONFLICT_RETRY, type ConflictRetryOptions, isConflict, retryOnConflict } from './conflict.ts';
export {
  type ApiStatus,
  apiCodeOf,
  apiStatusOf,
  errorForStatus,
  isNotFound,
  isTransientStatus,
  KubeApiError,
  type StatusCause,
  statusFromResponse,
} from './errors.ts';
export { createLease, readLease, updateLease } from './lease.ts';
export {
  EVACUATION_API,
  type EvacuationObject,
  evacuationName,
  evictionBody,
  type MergePatch,
  podKey,
} from './paths.ts';
