/**
 * When an evacuation of a request with `notBefore` starts: at notBefore − the estimated evacuation
 * time − a margin. Not at notBefore (too late: the maintenance begins then) and not at once (needlessly
 * early). When less time is left than the estimate, it starts at once and says it will likely not finish
 * in time. Pure.
 *
 * A notice can come days ahead (EC2 scheduled events), when the plan may still change: the Evacuate
 * machine then waits in steps and plans again, halving the wait each time until the start is within
 * `REPLAN_WITHIN_SECONDS`, so the estimate it starts on is fresh and a long wait costs a few history
 * events (log₂ of the wait in hours), not one per hour.
 */

/** Plan again before starting when the start is further away than this. */
export const REPLAN_WITHIN_SECONDS = 3600;

export interface StartFacts {
  readonly notBefore: Date;
  readonly now: Date;
  readonly estimateSeconds: number;
  readonly marginSeconds: number;
}

export interface StartDecision {
  /** When the evacuation starts. */
  readonly startAt: Date;
  /** When the machine's Wait state ends: startAt, or earlier to plan again (`final` false). */
  readonly waitUntil: Date;
  /** True when the wait ends at the start; false when it ends to plan again. */
  readonly final: boolean;
  /** Less time left than the estimate: started at once, will likely not finish before notBefore. */
  readonly late: boolean;
  /** Seconds from now until notBefore (negative once past). */
  readonly secondsLeft: number;
}

/** Whole seconds, rounded up: Step Functions' Wait timestamps are RFC 3339 without fractions (`…T01:59:00Z`). */
function ceilSecond(ms: number): Date {
  return new Date(Math.ceil(ms / 1000) * 1000);
}

/** An instant as a Wait state's TimestampPath wants it: `2026-11-21T10:08:00Z`. */
export function waitTimestamp(time: Date): string {
  return time.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export function planStart(facts: StartFacts): StartDecision {
  const now = facts.now.getTime();
  const notBefore = facts.notBefore.getTime();
  const secondsLeft = (notBefore - now) / 1000;
  const ideal = notBefore - (facts.estimateSeconds + facts.marginSeconds) * 1000;
  const startAt = ceilSecond(Math.max(now, ideal));
  const late = secondsLeft < facts.estimateSeconds;
  const wait = (startAt.getTime() - now) / 1000;
  if (wait <= REPLAN_WITHIN_SECONDS) return { startAt, waitUntil: startAt, final: true, late, secondsLeft };
  const ahead = Math.max(REPLAN_WITHIN_SECONDS, wait / 2);
  return { startAt, waitUntil: ceilSecond(startAt.getTime() - ahead * 1000), final: false, late, secondsLeft };
}

/** The warning published when the time left is shorter than the estimate. */
export function lateWarning(nodeName: string, decision: StartDecision, estimateSeconds: number): string {
  const left = Math.max(0, Math.round(decision.secondsLeft));
  return `the evacuation of node ${nodeName} is estimated to take ${Math.round(estimateSeconds)} s but only ${left} s are left before notBefore: starting now; it will likely not finish in time`;
}
