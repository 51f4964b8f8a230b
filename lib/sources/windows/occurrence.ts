/**
 * One occurrence of a maintenance window, and the requests it makes: one `Maintenance Requested` per
 * node its selector matches, each carrying the occurrence (admission keeps the window to its own slots
 * and starts nothing once it has closed; the ledger remembers whether a reboot ends the maintenance).
 * Request ids name the window, the opening and the node, so a schedule delivered twice asks twice for
 * the same thing (a duplicate the workflow drops), and the next occurrence is a new request. Pure.
 */
import { createHash } from 'node:crypto';
import type { MaintenanceRequestedEvent } from '../../bus/contracts/contracts.ts';
import { type WindowOccurrence, windowRequester } from '../../model/window.ts';
import type { WindowDefinition } from './definition.ts';

/** The RequestId contract's limit. */
const MAX_REQUEST_ID = 128;

export function occurrenceOf(window: WindowDefinition, opensAt: Date): WindowOccurrence {
  return {
    name: window.name,
    opensAt: opensAt.toISOString(),
    closesAt: new Date(opensAt.getTime() + window.durationMinutes * 60_000).toISOString(),
    maxNodes: window.maxNodes,
    endsOn: window.endsOn,
  };
}

/** `window:<name>:<opening, yyyymmddThhmmZ>:<node>`; the node hashed when the whole would be too long. */
export function windowRequestId(occurrence: WindowOccurrence, nodeName: string): string {
  const stamp = occurrence.opensAt.replace(/[-:]/g, '').replace(/\d\d\.\d{3}Z$/, 'Z');
  const prefix = `window:${occurrence.name}:${stamp}:`;
  if (prefix.length + nodeName.length <= MAX_REQUEST_ID) return `${prefix}${nodeName}`;
  return `${prefix}${createHash('sha256').update(nodeName).digest('hex').slice(0, 16)}`;
}

/** The requests of an occurrence for `nodes`, in name order (admission takes them oldest first, then by id). */
export function windowRequests(
  window: WindowDefinition,
  occurrence: WindowOccurrence,
  nodes: readonly string[],
): MaintenanceRequestedEvent[] {
  const reason = window.reason ?? `maintenance window ${window.name}`;
  return [...nodes].sort().map((nodeName) => ({
    version: '1',
    requestId: windowRequestId(occurrence, nodeName),
    requester: windowRequester(window.name),
    origin: 'schedule',
    target: { nodeName },
    reason,
    ...(window.drain ? { drain: window.drain } : {}),
    window: occurrence,
  }));
}
