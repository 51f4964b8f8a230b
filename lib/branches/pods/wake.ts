/**
 * kubectl's clock for a waiting pods pass: the instants at which a new round decides differently although
 * no watch reports anything — the drain's `--timeout` passing, a terminating pod passing
 * `--skip-wait-for-delete-timeout`, the request's deadline, a refused pod's backoff ending. A pass waits on
 * its watches only until the first of them (never its whole `waitMs`), so that each limit takes effect
 * within a second of kubectl's, not at the end of the wait or after a Step Functions backoff. Pure.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { ResolvedRequest } from '../../model/request.ts';
import { deletionTime } from './filters.ts';
import type { DrainState } from './tracking.ts';

/** The first instant (ms) at which the drain's `--timeout` has passed (isPastTimeout), or undefined for 0. */
export function timeoutAt(request: ResolvedRequest, startedAt: string): number | undefined {
  const timeout = request.drain.timeoutSeconds;
  return timeout > 0 ? Date.parse(startedAt) + timeout * 1000 + 1 : undefined;
}

/** The first instant (ms) after the request's deadline (checkDeadline: strictly after), or undefined. */
export function requestDeadlineAt(request: ResolvedRequest): number | undefined {
  return request.deadline ? Date.parse(request.deadline) + 1 : undefined;
}

/**
 * The first instant (ms) at which a terminating pod counts as stuck (isStuckTerminating: whole seconds
 * since its deletionTimestamp strictly greater than the limit), or undefined (not terminating, limit 0).
 */
export function stuckAt(pod: V1Pod, skipSeconds: number): number | undefined {
  const deletedAt = deletionTime(pod);
  return skipSeconds > 0 && deletedAt !== undefined ? deletedAt + (skipSeconds + 1) * 1000 : undefined;
}

export interface Wakes {
  /**
   * The first limit (timeout, deadline, skip-wait) still ahead, or undefined: a pass with nothing watchable
   * to wait for waits for it when it comes within the pass's wait.
   */
  readonly firstLimit: number | undefined;
  /** The earliest instant after `nowMs` to look again (limits and backoffs), or undefined. */
  readonly next: number | undefined;
}

/** What a pass still waits for by the clock, after `nowMs`, for the pods it still has to move. */
export function wakes(
  input: { readonly request: ResolvedRequest; readonly startedAt: string },
  pods: { readonly toEvict: readonly V1Pod[]; readonly state: DrainState },
  nowMs: number,
): Wakes {
  const skip = input.request.drain.skipWaitForDeleteTimeoutSeconds;
  const ahead = (at: number | undefined): at is number => at !== undefined && at > nowMs;
  const limits = [
    timeoutAt(input.request, input.startedAt),
    requestDeadlineAt(input.request),
    ...pods.toEvict.map((pod) => stuckAt(pod, skip)),
  ].filter(ahead);
  const backoffs = pods.toEvict
    .map((pod) => pods.state.pods[pod.metadata?.uid ?? '']?.nextAttemptAt)
    .map((at) => (at ? Date.parse(at) : undefined))
    .filter(ahead);
  const all = [...limits, ...backoffs];
  const earliest = (instants: readonly number[]) => (instants.length > 0 ? Math.min(...instants) : undefined);
  return { firstLimit: earliest(limits), next: earliest(all) };
}
