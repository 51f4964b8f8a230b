/**
 * A cloud notice moved (rescheduled): the same requestId arrives again with a later revision (AWS Health
 * resends, the node agent re-publishes when a notice's NotBefore changed). Each arrival starts an Evacuate
 * execution; the Evacuation record says which revision is the live one (`spec.revision`). What an
 * execution does with its request, judged against the record — pure:
 *
 *  - `current`: its revision is the record's, or it carries none (a request not from a notice: a person
 *    resuming it with `drainbridge evacuate --request-id`, which must not be taken for a stale one);
 *  - `superseded`: the record has a later revision: it ends before it cordons (the later one plans the start);
 *  - `unchanged`: a later revision with the same start: nothing to plan again, the waiting execution goes on;
 *  - `replan`: a later revision, a new start, the evacuation has not started: this execution becomes the
 *    live one and waits for the new start (at once when it is already within the estimate);
 *  - `kept`: a later revision, a new start, the evacuation had started: the node stays drained until the
 *    maintenance ends (what AWS Node Termination Handler users expect: a drained node is not put back into
 *    service on a notice that may move again), and the record and `status` say so;
 *  - `restore`: the same, but the policy restores (`DRAINBRIDGE_NOTICE_RESTORE_GAP_SECONDS` > 0), the
 *    evacuation had ended (NodeDrained, no Restore begun) and the start moved later, more than the gap
 *    away: the node is restored (lib/workflow/reschedule-restore.ts) and this execution, now the live one,
 *    evacuates it again for the new start.
 *
 * Stale executions are not stopped: one waiting for an old start wakes then, finds itself superseded and
 * ends without touching the node (Step Functions Wait states cannot be woken, and need not be).
 */

import type { EvacuationObject, Reschedule } from '../clients/kube/paths.ts';
import type { NoticeRevision, ResolvedRequest } from '../model/request.ts';

/** How many moves the record keeps (the last one is what `status` shows). */
export const MAX_RESCHEDULES = 5;

export type RevisionVerdict =
  | { readonly kind: 'current' }
  | { readonly kind: 'superseded'; readonly message: string }
  | { readonly kind: 'unchanged'; readonly message: string }
  | { readonly kind: 'replan'; readonly reschedule: Reschedule }
  | { readonly kind: 'kept'; readonly reschedule: Reschedule }
  | { readonly kind: 'restore'; readonly reschedule: Reschedule };

/** The notice policy for a start moved after the evacuation started: restore when the new start is more than this away (0: never). */
export interface ReschedulePolicy {
  readonly restoreGapSeconds: number;
}

/** Keep drained: what drainbridge does unless told otherwise. */
export const KEEP_DRAINED: ReschedulePolicy = { restoreGapSeconds: 0 };

function instant(time: string | undefined): number | undefined {
  if (time === undefined) return undefined;
  const ms = Date.parse(time);
  return Number.isNaN(ms) ? undefined : ms;
}

function sameInstant(a: string | undefined, b: string | undefined): boolean {
  return instant(a) === instant(b);
}

/** Whether `revision` is later than `than` (a revision beats none; none is never later). */
export function isLaterRevision(revision: NoticeRevision | undefined, than: NoticeRevision | undefined): boolean {
  if (!revision) return false;
  if (!than) return true;
  return (instant(revision.at) ?? 0) > (instant(than.at) ?? 0);
}

/** The evacuation has started (admitted: cordoned, draining or over): past the wait for its start. */
function hasStarted(record: EvacuationObject): boolean {
  const phase = record.status?.phase;
  return phase !== undefined && phase !== 'MaintenanceScheduled';
}

function describe(time: string | undefined): string {
  return time ?? 'no start';
}

/**
 * Whether the policy restores the node for this move: the evacuation ended with the node drained and no
 * Restore begun, the start moved later, and the new start is more than the gap away.
 */
function restores(
  move: { readonly from: string | undefined; readonly to: string | undefined },
  record: EvacuationObject,
  now: Date,
  policy: ReschedulePolicy,
): boolean {
  const gap = policy.restoreGapSeconds;
  const [before, after] = [instant(move.from), instant(move.to)];
  if (gap <= 0 || before === undefined || after === undefined || after <= before) return false;
  if (record.status?.phase !== 'NodeDrained' || record.status.restore?.startedAt) return false;
  return after - now.getTime() > gap * 1000;
}

function outcomeOf(started: boolean, restore: boolean): Reschedule['outcome'] {
  if (!started) return 'replanned';
  return restore ? 'restored' : 'kept';
}

function rescheduleOf(
  request: ResolvedRequest,
  record: EvacuationObject,
  now: Date,
  policy: ReschedulePolicy,
): Reschedule {
  const from = currentStartOf(record);
  const to = request.notBefore;
  const outcome = outcomeOf(hasStarted(record), restores({ from, to }, record, now, policy));
  const moved = `the maintenance on node ${request.nodeName} moved from ${describe(from)} to ${describe(to)} (${request.revision?.key})`;
  const messages: Record<Reschedule['outcome'], string> = {
    kept: `${moved}; the evacuation had started (${record.status?.phase}): the node stays drained until the maintenance ends`,
    replanned: `${moved}; the evacuation had not started: it starts for the new time`,
    restored: `restored: maintenance moved to ${describe(to)} (> ${policy.restoreGapSeconds} s away); evacuating again from ${describe(to)} − estimate (${moved})`,
  };
  return {
    ...(from ? { from } : {}),
    ...(to ? { to } : {}),
    revision: request.revision?.key ?? '',
    at: now.toISOString(),
    outcome,
    message: messages[outcome],
  };
}

/** What an execution of `request` does, given its Evacuation record (see the module comment). */
export function judgeRevision(
  request: ResolvedRequest,
  record: EvacuationObject,
  now: Date,
  policy: ReschedulePolicy = KEEP_DRAINED,
): RevisionVerdict {
  const live = record.spec.revision;
  if (!request.revision) return { kind: 'current' };
  if (isLaterRevision(live, request.revision)) {
    return {
      kind: 'superseded',
      message: `request ${request.requestId} was rescheduled (revision ${live?.key} of ${live?.at}, start ${describe(record.spec.notBefore)}): this execution, for an older revision, ends; node ${request.nodeName} is left to the later one`,
    };
  }
  if (!isLaterRevision(request.revision, live)) return { kind: 'current' };
  if (sameInstant(request.notBefore, currentStartOf(record))) {
    return {
      kind: 'unchanged',
      message: `request ${request.requestId}: revision ${request.revision?.key} keeps the start (${describe(request.notBefore)}); nothing to plan again`,
    };
  }
  const reschedule = rescheduleOf(request, record, now, policy);
  const kinds = { kept: 'kept', replanned: 'replan', restored: 'restore' } as const;
  return { kind: kinds[reschedule.outcome], reschedule };
}

/** The record's moves with `reschedule` appended (the last few kept). */
export function withReschedule(reschedules: readonly Reschedule[] | undefined, reschedule: Reschedule): Reschedule[] {
  return [...(reschedules ?? []), reschedule].slice(-MAX_RESCHEDULES);
}

/** The start a request now has: the last move's, or the record's own. */
export function currentStartOf(record: EvacuationObject): string | undefined {
  const last = record.status?.reschedules?.at(-1);
  return last ? last.to : record.spec.notBefore;
}
