/**
 * One execution at a time per request. EventBridge delivers at least once, so two executions can run
 * for one requestId; both would pass admission (the hold is the request's, not the execution's) and
 * evict side by side. The execution that runs an evacuation records itself as the owner on the
 * request's Evacuation record (an annotation, refreshed while it runs); another execution for the same
 * request waits while the owner is alive and takes over only when the owner stopped refreshing — the
 * case of a process killed mid-step and re-run with the same input. The claim's codec is owner-record.ts,
 * which only this module uses: status and repair ask here (readOwner, damagedOwner, withOwner).
 */
import { hostname } from 'node:os';
import type { KubeClient } from '../clients/kube/client.ts';
import { retryOnConflict, unlessConflict } from '../clients/kube/conflict.ts';
import { isNotFound } from '../clients/kube/errors.ts';
import { type EvacuationObject, type EvacuationStatus, evacuationName } from '../clients/kube/paths.ts';
import { damagedOwner, type Owner, readOwner, withOwner } from './owner-record.ts';

export { damagedOwner, type Owner, readOwner, withOwner };

/**
 * The owner refreshes its mark (its heartbeat) when it is older than this, at the step it is running: a
 * record write per half minute at most, never one per pass, and none of its own between steps.
 */
export const OWNER_REFRESH_SECONDS = 30;
/**
 * An owner not seen for this long is gone: the refresh interval plus the longest gap between two steps of
 * a live execution (a retry delay, MaxDelaySeconds 30, plus one task run), with room to spare. A second
 * execution takes the request over after it, and `drainbridge status` calls the request abandoned.
 */
export const OWNER_TTL_SECONDS = 4 * OWNER_REFRESH_SECONDS;
/** Fewer than a node write's: a claim that keeps colliding is another execution claiming at the same time. */
const CONFLICT_ATTEMPTS = 3;

/** The region of an embedded execution's ARN (embedded/executor.ts): it runs in a drainbridge process. */
const EMBEDDED_EXECUTION = /^arn:aws:states:local:/;

/** Who drives `executionId` from this process: `pid@host` when embedded, nothing on AWS (the ARN says it). */
export function driverOf(executionId: string): string | undefined {
  return EMBEDDED_EXECUTION.test(executionId) ? `${process.pid}@${hostname()}` : undefined;
}

/** Whether `owner` still claims its request at `now`: not handed back, and seen within OWNER_TTL_SECONDS. */
export function isLiveOwner(owner: Owner, now: Date): boolean {
  return owner.released === undefined && now.getTime() - Date.parse(owner.seen) <= OWNER_TTL_SECONDS * 1000;
}

export type OwnerDecision =
  | { readonly action: 'keep' }
  | { readonly action: 'claim'; readonly owner: Owner }
  | { readonly action: 'yield'; readonly owner: Owner; readonly ageSeconds: number };

/**
 * Decides, purely, whether `executionId` keeps, claims (or refreshes) or yields the request at `now`.
 * `predecessor`: the execution this one continues (continue-as-new); its claim is handed over at once,
 * since it started this execution as its last step and does nothing after.
 */
export function planOwnership(
  current: Owner | undefined,
  executionId: string,
  now: Date,
  predecessor?: string,
): OwnerDecision {
  const driver = driverOf(executionId);
  const owner: Owner = { executionId, seen: now.toISOString(), ...(driver ? { driver } : {}) };
  const claim: OwnerDecision = { action: 'claim', owner };
  // A mark handed back claims nothing: whoever comes next (the same execution included) claims at once.
  if (!current || current.released !== undefined) return claim;
  const ageSeconds = (now.getTime() - Date.parse(current.seen)) / 1000;
  if (current.executionId === executionId) return ageSeconds > OWNER_REFRESH_SECONDS ? claim : { action: 'keep' };
  if (predecessor !== undefined && current.executionId === predecessor) return claim;
  return ageSeconds > OWNER_TTL_SECONDS ? claim : { action: 'yield', owner: current, ageSeconds };
}

/**
 * Hands the request back: marks this execution's owner mark released at `now`, so that the next
 * execution for the request (the same command run again after Ctrl-C) claims it at once instead of
 * waiting OWNER_TTL_SECONDS for the mark to age, and `drainbridge status` says nobody drives it since.
 * Conditional on the record's resourceVersion; a mark that is not this execution's, or that changed
 * meanwhile, is left alone. Returns whether it released the mark.
 */
export async function releaseOwnership(
  client: KubeClient,
  requestId: string,
  executionId: string,
  now: Date = new Date(),
): Promise<boolean> {
  let record: EvacuationObject;
  try {
    record = await client.getEvacuation(evacuationName(requestId));
  } catch (error) {
    if (isNotFound(error)) return false;
    throw error;
  }
  const owner = readOwner(record);
  if (owner?.executionId !== executionId || owner.released !== undefined) return false;
  const released: Owner = { ...owner, released: now.toISOString() };
  return unlessConflict(() => client.replaceEvacuation(withOwner(record, released)));
}

/**
 * Reads the request's record and applies `planOwnership` (handing over from `predecessor`, the execution
 * this one continues, if any): writes the mark when claiming (conditional on
 * the record's resourceVersion, re-read on conflict). Returns the decision; the caller says what a
 * `yield` means for it (wait at admission, stop in a later step). The record must exist.
 */
export async function reconcileOwnership(
  client: KubeClient,
  requestId: string,
  execution: { readonly executionId: string; readonly predecessor?: string | undefined },
  now: Date,
): Promise<OwnerDecision & { readonly status?: EvacuationStatus | undefined }> {
  return retryOnConflict(
    async () => {
      const record = await client.getEvacuation(evacuationName(requestId));
      const decision = planOwnership(readOwner(record), execution.executionId, now, execution.predecessor);
      // The record's status as read comes along: the caller's other checks (abort, continue) need no second read.
      if (decision.action !== 'claim') return { ...decision, status: record.status };
      await client.replaceEvacuation(withOwner(record, decision.owner));
      return { ...decision, status: record.status };
    },
    { attempts: CONFLICT_ATTEMPTS },
  );
}

/** A sentence for logs and errors: who owns the request and how recently it was seen. */
export function describeOwner(decision: { owner: Owner; ageSeconds: number }): string {
  const where = decision.owner.driver ? ` in process ${decision.owner.driver}` : '';
  return `execution ${decision.owner.executionId}${where} (seen ${Math.round(decision.ageSeconds)} s ago)`;
}

/**
 * Clears the owner mark of `requestId` when `isGone(owner)` knows its execution is dead — e.g. it ran in
 * a `drainbridge run` process that no longer holds the run Lease — so a resumed execution takes over at
 * once instead of waiting OWNER_TTL_SECONDS. Conditional on the record's resourceVersion; a mark that
 * changed meanwhile (a live owner refreshed it) is left alone. Returns whether it cleared one.
 */
export async function clearDeadOwner(
  client: KubeClient,
  requestId: string,
  isGone: (owner: Owner) => boolean,
): Promise<boolean> {
  const record = await client.getEvacuation(evacuationName(requestId));
  const owner = readOwner(record);
  if (!owner || !isGone(owner)) return false;
  return unlessConflict(() => client.replaceEvacuation(withOwner(record, undefined)));
}
