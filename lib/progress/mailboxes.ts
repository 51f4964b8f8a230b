/**
 * The Evacuation record's mailboxes: what others ask of a running evacuation, kept in its status —
 * `abortRequested` (`drainbridge abort`), `continueRequested` (an execution nearing Step Functions'
 * history limit asks its branches to leave) and `blocked` (what stops the request until an operator
 * acts). Each is written by the store (evacuation-store.ts) and read here, so that the workflow, status
 * and repair agree on what a message says. Pure.
 */
import type { EvacuationStatus } from '../clients/kube/paths.ts';

/** Who asked to abort the evacuation, or undefined. */
export function abortRequestedBy(status: EvacuationStatus | undefined): string | undefined {
  return status?.abortRequested?.by;
}

/** The status with an abort asked by `by` (the first request stands: unchanged when one is there). */
export function withAbortRequest(status: EvacuationStatus, by: string, at: Date): EvacuationStatus {
  return status.abortRequested ? status : { ...status, abortRequested: { by, at: at.toISOString() } };
}

/** The execution asked to continue as new (its branches leave at their next pass), or undefined. */
export function continueRequestedOf(status: EvacuationStatus | undefined): string | undefined {
  return status?.continueRequested?.executionId;
}

/** The status with `executionId` asked to continue as new (unchanged when it already is). */
export function withContinueRequest(status: EvacuationStatus, executionId: string, at: Date): EvacuationStatus {
  return status.continueRequested?.executionId === executionId
    ? status
    : { ...status, continueRequested: { executionId, at: at.toISOString() } };
}

/** What blocks the request until an operator acts, as one blocker sentence (`<Error>: <message>`), or undefined. */
export function blockedBlocker(status: EvacuationStatus | undefined): string | undefined {
  return status?.blocked ? `${status.blocked.error}: ${status.blocked.message}` : undefined;
}

/** The status with what blocks the request recorded (the latest report replaces an earlier one). */
export function withBlocked(
  status: EvacuationStatus,
  blocked: { readonly error: string; readonly message: string },
  at: Date,
): EvacuationStatus {
  return { ...status, blocked: { ...blocked, at: at.toISOString() } };
}

/** The status without its block (what `drainbridge repair` clears once the record reads again). */
export function withoutBlocked(status: EvacuationStatus): EvacuationStatus {
  const { blocked: _cleared, ...unblocked } = status;
  return unblocked;
}
