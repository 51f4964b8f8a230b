/**
 * Optimistic concurrency, done one way everywhere: an `attempt` reads the object, decides from what it
 * read, and writes conditional on that read's resourceVersion; a 409 (`ConflictError`) means someone
 * wrote in between, so the attempt runs again from a fresh read — client-go's `retry.RetryOnConflict`.
 *
 * Bounded, so two writers that keep colliding end in a ConflictError the workflow's Retry handles,
 * and with a short jittered backoff so that writers that collided once do not collide again in
 * lockstep. Only conflicts are retried here; transient API faults are the client's own retries.
 */
import { ConflictError } from '../../errors/index.ts';
import { type RetryOptions, withRetry } from '../../util/retry.ts';

export type ConflictRetryOptions = Partial<Omit<RetryOptions, 'isRetryable'>>;

/** client-go's DefaultRetry is 5 steps 10 ms apart; these double from 10 ms (≤ 150 ms of waiting in all). */
export const CONFLICT_RETRY: Omit<RetryOptions, 'isRetryable'> = Object.freeze({
  attempts: 5,
  baseDelayMs: 10,
  maxDelayMs: 200,
});

export function isConflict(error: unknown): boolean {
  return error instanceof ConflictError;
}

/**
 * Runs one conditional `write`: true when it landed, false when it met a conflict (someone wrote
 * first) — for a write that may simply be left to the next attempt, or to whoever wrote first.
 */
export async function unlessConflict(write: () => Promise<unknown>): Promise<boolean> {
  try {
    await write();
    return true;
  } catch (error) {
    if (isConflict(error)) return false;
    throw error;
  }
}

/**
 * Runs `attempt` (read → decide → conditional write) until it ends without a ConflictError, at most
 * `attempts` times; any other error, and the last conflict, are thrown as they are.
 */
export function retryOnConflict<T>(attempt: () => Promise<T>, options: ConflictRetryOptions = {}): Promise<T> {
  return withRetry(attempt, { ...CONFLICT_RETRY, ...options, isRetryable: isConflict });
}
