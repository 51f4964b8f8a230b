/**
 * NMO's Lease rules for an adopted NodeMaintenance, from what requesting the node's Lease gave. Pure.
 *
 * Before the request goes out (nothing done to the node yet), as NMO before it cordons:
 *  - taken: the request goes out; a lease error count left from failed tries is reset (NMO: "another chance");
 *  - held by another (self-node-remediation, node-healthcheck…): no request; phase Running, NMO's lastError;
 *    the count unchanged — NMO waits as long as it takes;
 *  - the request failed (the API, the namespace, the role): no request; the count goes up by one;
 *  - the count above MAX_LEASE_ERRORS: Failed with NMO's message, the Lease no longer asked for.
 * Once the request is out (NMO: the drain under way), as NMO's controller:
 *  - taken (renewed): the count is reset;
 *  - held by another, or the request failed: the count goes up by one, NMO's lastError; the maintenance goes on;
 *  - the count above MAX_LEASE_ERRORS: the maintenance ends (NMO uncordons; drainbridge ends its request, and
 *    its restore re-enables only what it disabled and nobody else still holds), Failed with NMO's message.
 * drainbridge renews long before the Lease can lapse, so only another holder taking a lapsed Lease (drainbridge
 * down for an hour) or a failing API gets there.
 */
import { LEASE_ERRORS, MAX_LEASE_ERRORS } from './lease.ts';
import type { LeaseOutcome } from './node-lease.ts';
import type { NodeMaintenanceStatus } from './types.ts';

export interface LeaseVerdict {
  /** The maintenance request may go out. */
  readonly proceed: boolean;
  /** The status to show instead of the record's (while the request waits or failed). */
  readonly status?: NodeMaintenanceStatus;
  /** Fields laid over the record's status. */
  readonly overlay?: NodeMaintenanceStatus;
  /** The request is to end: too many lease errors once it was out (NMO's uncordon and FailedMaintenance). */
  readonly end?: true;
}

/** Is the Lease still to be asked for: not when NMO's count of failures has failed the maintenance. */
export function leaseWanted(status: NodeMaintenanceStatus | undefined): boolean {
  return (status?.errorOnLeaseCount ?? 0) <= MAX_LEASE_ERRORS;
}

function beforeRequest(lease: LeaseOutcome | undefined, count: number): LeaseVerdict {
  if (count > MAX_LEASE_ERRORS)
    return { proceed: false, status: { phase: 'Failed', lastError: LEASE_ERRORS.failed(count) } };
  switch (lease?.kind) {
    case 'held':
      return { proceed: false, status: { phase: 'Running', lastError: LEASE_ERRORS.notOwned(lease.holder, count) } };
    case 'failed':
      return { proceed: false, status: { phase: 'Running', lastError: lease.error, errorOnLeaseCount: count + 1 } };
    default:
      return { proceed: true, ...(count !== 0 ? { overlay: { errorOnLeaseCount: 0 } } : {}) };
  }
}

/** `lease`: the outcome of this pass's request (undefined: not asked). `delivered`: the request is out. */
export function leaseVerdict(
  status: NodeMaintenanceStatus | undefined,
  lease: LeaseOutcome | undefined,
  delivered: boolean,
): LeaseVerdict {
  const count = status?.errorOnLeaseCount ?? 0;
  if (!delivered) return beforeRequest(lease, count);
  if (count > MAX_LEASE_ERRORS)
    return { proceed: false, end: true, status: { phase: 'Failed', lastError: LEASE_ERRORS.failed(count) } };
  switch (lease?.kind) {
    case 'held':
      return {
        proceed: true,
        overlay: { lastError: LEASE_ERRORS.lost(lease.holder, count + 1), errorOnLeaseCount: count + 1 },
      };
    case 'failed':
      return { proceed: true, overlay: { lastError: lease.error, errorOnLeaseCount: count + 1 } };
    default:
      return { proceed: true, ...(count !== 0 ? { overlay: { errorOnLeaseCount: 0 } } : {}) };
  }
}
