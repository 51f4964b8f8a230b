/**
 * Reporting a request that is blocked until an operator acts — today, a record drainbridge keeps in the
 * cluster that cannot be read (RecordUnreadable). Three places, so whoever looks finds it: a Warning
 * Event on the node (`kubectl describe node`), the request's Evacuation record (`status.blocked`, first in
 * `kubectl get evacuations`), and the outcome event the caller publishes (Evacuation Failed names it).
 * Best effort: the failure is already the outcome, and a report that cannot be written must not hide it.
 */

import { EvacuationFailed } from '../errors/index.ts';
import type { ResolvedRequest } from '../model/request.ts';
import { readNodeOrFail } from '../node/hold.ts';
import { emitNodeEvent } from '../node/kube-events.ts';
import type { WorkflowDeps } from './deps.ts';

export interface BlockedReport {
  /** The error's name (`RecordUnreadable`). */
  readonly error: string;
  readonly message: string;
}

/** Writes the node Event and the record's `status.blocked`; returns the errors it swallowed, for the log. */
export async function reportBlocked(
  deps: Pick<WorkflowDeps, 'kube' | 'progress'>,
  request: ResolvedRequest,
  blocked: BlockedReport,
  now: Date,
): Promise<Error[]> {
  const problems: Error[] = [];
  try {
    const node = await readNodeOrFail(deps.kube, request.nodeName);
    const message = `maintenance request ${request.requestId} stopped: ${blocked.message}`;
    const failed = await emitNodeEvent(deps.kube, node, { reason: 'RecordUnreadable', message, type: 'Warning' }, now);
    if (failed) problems.push(failed);
  } catch (error) {
    if (!(error instanceof EvacuationFailed)) problems.push(error as Error);
  }
  try {
    await deps.progress.recordBlocked(request, blocked, now);
  } catch (error) {
    problems.push(error as Error);
  }
  return problems;
}
