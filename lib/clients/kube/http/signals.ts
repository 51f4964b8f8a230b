/**
 * Cancellation for the lean client: one signal per request that fires when any of its owners gives up
 * (the caller, the client being closed) or its deadline passes — and that leaves nothing behind once the
 * request is over (its timer cleared, its listeners on the long-lived owners removed).
 */

export interface Deadline {
  readonly signal: AbortSignal;
  /** Whether the deadline (rather than an owner) ended it. */
  readonly timedOut: () => boolean;
  /** Stops the clock; the owners' abort still reaches the signal until `release`. */
  readonly stopClock: () => void;
  /** Stops the clock and lets go of the owners. */
  readonly release: () => void;
}

export function deadline(owners: readonly (AbortSignal | undefined)[], ms: number): Deadline {
  const controller = new AbortController();
  let expired = false;
  const timer = setTimeout(() => {
    expired = true;
    controller.abort(new Error(`no answer within ${ms} ms`));
  }, ms);
  const present = owners.filter((owner): owner is AbortSignal => owner !== undefined);
  const onAbort = (): void => controller.abort(new Error('cancelled'));
  for (const owner of present) {
    if (owner.aborted) onAbort();
    else owner.addEventListener('abort', onAbort, { once: true });
  }
  const stopClock = (): void => clearTimeout(timer);
  return {
    signal: controller.signal,
    timedOut: () => expired,
    stopClock,
    release: () => {
      stopClock();
      for (const owner of present) owner.removeEventListener('abort', onAbort);
    },
  };
}

/** Waits `ms`, or rejects as soon as `signal` aborts (a retry backoff that `stop()` can cut short). */
export function abortableSleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
