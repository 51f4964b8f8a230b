/**
 * The Evacuate machine's history budget: Step Functions keeps at most 25,000 events per execution, so an
 * execution counts (an upper bound of) the events it has written and continues as new before the limit.
 * The count is kept in the state (`$.history.events`) with intrinsic functions: every loop iteration adds
 * the most it can have written. The numbers here are written into state-machines/evacuate.asl.yml by
 * `npm run asl` (scripts/asl-branches.ts) — the hand-written Admit loop uses the same ones, and
 * test/workflow/history.test.ts checks the packaged definition against them.
 *
 * Event accounting (as the executor's `estimateHistoryEvents`): 2 per state entered (…Entered, …Exited),
 * 3 per Lambda call (Scheduled, Started, Succeeded/Failed), 2 per Parallel state (Started, Succeeded).
 */

/** Step Functions' limit of events in one execution's history. */
export const HISTORY_LIMIT = 25_000;
export const EVENTS_PER_STATE = 2;
export const EVENTS_PER_LAMBDA_CALL = 3;

/**
 * NotYetDone retries per entry of a polling Task (a branch pass). When they run out the Task is
 * caught, the loop counts the iteration and goes round (the backoff starts again at its first interval).
 * Bounding them bounds what one iteration can cost: no Retry can run the history out on its own.
 */
export const POLL_RETRIES = 20;
/**
 * The `transient` retrier's attempts (TransientError, ConflictError, Lambda service errors). Twelve, with
 * full jitter from 2 s doubling to 30 s: 270 s at the most, and under 35 s about once in 200,000 — so a
 * request waiting in line or draining rides out a 30 s API outage (six ended under 35 s one time in four).
 */
export const TRANSIENT_RETRIES = 12;

/**
 * The most one polling iteration writes: its Task entered once with every retry of both retriers, the
 * Pass state that records the caught NotYetDone, the Pass state that counts, and the Choice.
 */
export const ITERATION_EVENTS =
  EVENTS_PER_STATE + EVENTS_PER_LAMBDA_CALL * (1 + POLL_RETRIES + TRANSIENT_RETRIES) + 3 * EVENTS_PER_STATE;

/** A service integration attempt (`lambda:invoke.waitForTaskToken`, startExecution): Scheduled, Started, Submitted, Succeeded/Failed/TimedOut, and one to spare. */
export const EVENTS_PER_SERVICE_CALL = 5;

/** Admit's AdmissionBusy retries (the admission lock held for a moment by another request): 1–8 s apart, jittered. */
export const ADMISSION_BUSY_RETRIES = 5;

/**
 * The most one round of the Admit loop writes: Admit with its transient and AdmissionBusy retries and —
 * behind another execution of the same request, which no wake-up ends — its RequestRunningElsewhere
 * retries; the waits (WaitInLine, and WaitForSlot after it when WaitInLine's token could not be parked:
 * callback Tasks with their transient retries), the Pass state that counts, and the Choice. Waiting in
 * line does not poll: the waits end on a wake-up or their fallback.
 */
export const ADMIT_ITERATION_EVENTS =
  EVENTS_PER_STATE +
  EVENTS_PER_LAMBDA_CALL * (1 + POLL_RETRIES + TRANSIENT_RETRIES + ADMISSION_BUSY_RETRIES) +
  2 * (EVENTS_PER_STATE + EVENTS_PER_SERVICE_CALL * (1 + TRANSIENT_RETRIES)) +
  2 * EVENTS_PER_STATE;

/**
 * The count an execution starts with: ExecutionStarted, ResolveTarget with its retries, the notBefore
 * Choice — everything before the Admit loop counts for itself (the planning rounds count their own).
 */
export const START_EVENTS = 40;

/**
 * The most one round of planning the start writes (a request with notBefore): PlanStart with its transient
 * retries, the Pass states that set startedAt and count, the Wait and the Choice. A start far ahead is
 * planned again at most about log₂(hours ahead) times (lib/workflow/start-time.ts).
 */
export const PLAN_ROUND_EVENTS = 5 * EVENTS_PER_STATE + EVENTS_PER_LAMBDA_CALL * (1 + TRANSIENT_RETRIES);

/**
 * An execution continues as new once its count reaches this. What remains below the limit covers one
 * more iteration and the way out: the states that were not counted (Admit's and PrepareBranches' successful
 * calls, the Parallel state and the branch ends, the continuation or FinishEvacuation/RecordFailure).
 */
export const CONTINUE_AT = 24_000;

/** Entering the Parallel state with more than this counted (a long wait for a slot), the execution continues first. */
export const PARALLEL_ENTRY_LIMIT = 1_000;

/** What the Parallel state and its branches write besides their loops (state entries, ends, the tally after it). */
export const PARALLEL_OVERHEAD = 100;

/**
 * Each parallel branch's share: its loop leaves (continue) once its own count reaches it. The branches
 * share what is left after the entry limit, so the Parallel state's total stays below CONTINUE_AT.
 */
export function parallelShare(parallelBranches: number): number {
  const room = CONTINUE_AT - PARALLEL_ENTRY_LIMIT - PARALLEL_OVERHEAD;
  return Math.floor(room / parallelBranches) - ITERATION_EVENTS;
}

/**
 * Where a loop asks its pass to leave: one iteration before its share, so that it ends inside it (the
 * Choice's own check at the share is the backstop).
 */
export function softLimit(share: number): number {
  return share - ITERATION_EVENTS;
}
