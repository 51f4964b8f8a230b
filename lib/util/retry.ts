/**
 * Retries for calls to external systems (Kubernetes API, Keystone, Nova, AWS). Short and bounded:
 * this is for transient faults inside one step, never for waiting on progress — that is the
 * workflow's Retry on `NotYetDone`.
 */

export interface RetryOptions {
  /** Total attempts including the first; 1 disables retrying. */
  readonly attempts: number;
  /** First backoff ceiling in ms; each retry doubles it up to `maxDelayMs` ("full jitter": a random delay below the ceiling). */
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  /** Whether an error may pass on its own. Anything else is rethrown at once. */
  readonly isRetryable: (error: unknown) => boolean;
  /** Injected for tests; defaults to a timer. */
  readonly sleep?: (ms: number) => Promise<void>;
  /** Injected for tests; defaults to Math.random. */
  readonly random?: () => number;
  /** Called before each retry, e.g. to log the error (already redacted by the caller). */
  readonly onRetry?: (error: unknown, attempt: number, delayMs: number) => void;
}

export const DEFAULT_RETRY: Omit<RetryOptions, 'isRetryable'> = {
  attempts: 4,
  baseDelayMs: 200,
  maxDelayMs: 3_000,
};

const timerSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The full-jitter delay before retry number `attempt` (1-based). */
export function backoffDelay(
  attempt: number,
  options: Pick<RetryOptions, 'baseDelayMs' | 'maxDelayMs' | 'random'>,
): number {
  const ceiling = Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** (attempt - 1));
  return Math.floor((options.random ?? Math.random)() * ceiling);
}

/** Runs `call`, retrying retryable errors with exponential backoff and full jitter. */
export async function withRetry<T>(call: () => Promise<T>, options: RetryOptions): Promise<T> {
  const sleep = options.sleep ?? timerSleep;
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      if (attempt >= options.attempts || !options.isRetryable(error)) throw error;
      const delayMs = backoffDelay(attempt, options);
      options.onRetry?.(error, attempt, delayMs);
      await sleep(delayMs);
    }
  }
}

/**
 * Like withRetry, bounded by time instead of a count: retries while the error is retryable and less than
 * `budgetMs` has passed since the first attempt (a fault that lasts seconds — a 429 burst, an API
 * restart — is ridden out; one that lasts is not waited on for ever).
 */
export function withRetryFor<T>(
  call: () => Promise<T>,
  options: Omit<RetryOptions, 'attempts'> & { readonly budgetMs: number; readonly now?: () => number },
): Promise<T> {
  const now = options.now ?? Date.now;
  const deadline = now() + options.budgetMs;
  return withRetry(call, {
    ...options,
    attempts: Number.POSITIVE_INFINITY,
    isRetryable: (error) => options.isRetryable(error) && now() < deadline,
  });
}
