/**
 * The circuit breaker, planned purely: when K evacuations fail (or reach their deadline) within a window,
 * admission pauses — no new node is admitted until a person runs `drainbridge resume` — because failures
 * in a row say something is wrong with the fleet (a PDB no eviction can meet, a broken live migration),
 * and taking node after node into that only leaves more of them cordoned. Running evacuations go on;
 * waiting requests keep their place in line. The record lives on the admission Lease (records.ts), so
 * every origin, embedded and on AWS, sees the same state.
 */

/** `DRAINBRIDGE_BREAKER`: pause after `failures` failed evacuations within `windowSeconds`. */
export interface BreakerSetting {
  readonly failures: number;
  readonly windowSeconds: number;
}

/** One failed evacuation as the breaker remembers it. */
export interface BreakerFailure {
  /** ISO 8601. */
  readonly at: string;
  readonly requestId: string;
  readonly node: string;
  /** The error's name: `DeadlineExceeded`, `EvictionBlocked`, … */
  readonly error: string;
}

/** The breaker's record on the admission Lease. */
export interface BreakerRecord {
  /** The failures since the last resume, newest last (at most K kept). */
  readonly failures: readonly BreakerFailure[];
  /** Set while admission is paused (ISO 8601), with the sentence that says why. */
  readonly pausedAt?: string;
  readonly reason?: string;
  /** The last resume: when and by whom. */
  readonly resumedAt?: string;
  readonly resumedBy?: string;
  /** The pause that resume ended, for `Admission Resumed` (trip.ts). */
  readonly resumedFrom?: { readonly pausedAt: string; readonly reason: string };
  /** `Admission Resumed` was published for the last resume (by the first Admit step after it). */
  readonly resumeAnnounced?: boolean;
}

export const NO_BREAKER_RECORD: BreakerRecord = { failures: [] };

function describeWindow(seconds: number): string {
  if (seconds % 86400 === 0) return `${seconds / 86400}d`;
  if (seconds % 3600 === 0) return `${seconds / 3600}h`;
  if (seconds % 60 === 0) return `${seconds / 60}m`;
  return `${seconds}s`;
}

/**
 * `record` with `failure` noted: failures older than the window are forgotten, and at K within it the
 * breaker trips (`tripped`: this failure paused admission — the caller says so once, not per failure).
 * A breaker already paused only remembers the failure.
 */
export function noteFailure(
  record: BreakerRecord,
  failure: BreakerFailure,
  setting: BreakerSetting,
): { readonly record: BreakerRecord; readonly tripped: boolean } {
  const at = Date.parse(failure.at);
  const recent = record.failures.filter(
    (seen) => seen.requestId !== failure.requestId && at - Date.parse(seen.at) <= setting.windowSeconds * 1000,
  );
  const failures = [...recent, failure].slice(-setting.failures);
  if (record.pausedAt !== undefined || failures.length < setting.failures) {
    return { record: { ...record, failures }, tripped: false };
  }
  const each = failures.map((seen) => `${seen.node} (${seen.error})`).join(', ');
  const reason = `${failures.length} evacuations failed within ${describeWindow(setting.windowSeconds)}: ${each}; admission is paused until \`drainbridge resume\``;
  return { record: { ...record, failures, pausedAt: failure.at, reason }, tripped: true };
}

/** Why admission is paused, or undefined when it is not. */
export function pausedBecause(record: BreakerRecord): string | undefined {
  if (record.pausedAt === undefined) return undefined;
  return record.reason ?? `admission is paused since ${record.pausedAt} until \`drainbridge resume\``;
}

/**
 * The breaker closed again by `by`: the failures before it are forgotten, so the next K count anew. The
 * pause it ended is kept for the announcement, until the next resume.
 */
export function resumeBreaker(by: string, now: Date, paused?: BreakerRecord): BreakerRecord {
  const from =
    paused?.pausedAt === undefined
      ? {}
      : { resumedFrom: { pausedAt: paused.pausedAt, reason: pausedBecause(paused) ?? paused.pausedAt } };
  return { failures: [], resumedAt: now.toISOString(), resumedBy: by, ...from };
}

/** A resume not yet announced on the bus (`Admission Resumed`): the record to write once it is; undefined otherwise. */
export function resumeToAnnounce(record: BreakerRecord): BreakerRecord | undefined {
  if (record.resumedAt === undefined || record.resumeAnnounced === true || record.pausedAt !== undefined) {
    return undefined;
  }
  return { ...record, resumeAnnounced: true };
}
