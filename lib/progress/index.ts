/**
 * Where reconcile passes keep their progress: the `Evacuation` custom resource in the cluster
 * (`EvacuationProgressStore`, what the workflow uses), or process memory (`MemoryProgressStore`, for
 * `drainbridge plan`, unit tests and suites without a cluster).
 */
export {
  EvacuationProgressStore,
  followBlockers,
  newEvacuation,
  type ProgressRecorder,
  type RecordUpdate,
  summarise,
} from './evacuation-store.ts';
export {
  ENDED_LABEL,
  type ExpiryDecision,
  planExpiry,
  RESTORED_LABEL,
  SWEEP_LIMIT,
  type SweepResult,
  sweepExpiredRecords,
} from './expiry.ts';
export { abortRequestedBy, blockedBlocker } from './mailboxes.ts';
export { MemoryProgressStore } from './memory-store.ts';
