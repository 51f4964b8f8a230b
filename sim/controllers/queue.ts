/**
 * A controller's work queue: keys marked dirty by watch events are reconciled once per batch, in a
 * later turn of the event loop, so a burst of events costs one pass per key. Delays and retries go
 * through the simulator's Clock, never raw timers, so `--speed` scales them and `stop()` leaves
 * nothing pending.
 */
import type { Clock, ClockTimer } from '../store/types.ts';

/**
 * What one reconcile asks for: nothing (done until the next event) or another pass after `ms` of
 * simulated time (a startup delay, a grace period, a budget entry expiring).
 */
export type ReconcileResult = undefined | { requeueAfterMs: number };

export interface QueueOptions {
  readonly name: string;
  readonly clock: Clock;
  readonly reconcile: (key: string) => ReconcileResult;
  /** Told about a failed pass; the key is retried after `retryDelayMs` (doubling up to 5 s). */
  readonly onError: (controller: string, key: string, error: unknown) => void;
  /** First retry delay in simulated ms. */
  readonly retryDelayMs?: number;
}

const MAX_RETRY_DELAY_MS = 5_000;

/** A deduplicating, clock-driven work queue. */
export class WorkQueue {
  readonly #options: QueueOptions;
  readonly #dirty = new Set<string>();
  readonly #delayed = new Map<string, { at: number; timer: ClockTimer }>();
  readonly #failures = new Map<string, number>();
  #flushTimer: ClockTimer | undefined;
  #stopped = false;

  constructor(options: QueueOptions) {
    this.#options = options;
  }

  /** Marks `key` for a pass soon; with `afterMs`, not before that much simulated time has passed. */
  add(key: string, afterMs = 0): void {
    if (this.#stopped) return;
    if (afterMs > 0) {
      this.#addLater(key, afterMs);
      return;
    }
    this.#dirty.add(key);
    this.#flushTimer ??= this.#options.clock.setTimeout(() => this.#flush(), 0);
  }

  /** Cancels every pending pass and timer; later `add` calls do nothing. */
  stop(): void {
    this.#stopped = true;
    this.#flushTimer?.cancel();
    this.#flushTimer = undefined;
    for (const { timer } of this.#delayed.values()) timer.cancel();
    this.#delayed.clear();
    this.#dirty.clear();
  }

  /** Keys waiting for a pass now or later (for tests and idle checks). */
  get pending(): number {
    return this.#dirty.size + this.#delayed.size;
  }

  #addLater(key: string, afterMs: number): void {
    const at = this.#options.clock.now() + afterMs;
    const existing = this.#delayed.get(key);
    // Keep the earliest wake-up: a later one would only delay work that is already due.
    if (existing && existing.at <= at) return;
    existing?.timer.cancel();
    const timer = this.#options.clock.setTimeout(() => {
      this.#delayed.delete(key);
      this.add(key);
    }, afterMs);
    this.#delayed.set(key, { at, timer });
  }

  #flush(): void {
    this.#flushTimer = undefined;
    const keys = [...this.#dirty];
    this.#dirty.clear();
    for (const key of keys) {
      if (this.#stopped) return;
      this.#runOne(key);
    }
  }

  #runOne(key: string): void {
    try {
      const result = this.#options.reconcile(key);
      this.#failures.delete(key);
      if (result) this.add(key, Math.max(1, result.requeueAfterMs));
    } catch (error) {
      const failures = (this.#failures.get(key) ?? 0) + 1;
      this.#failures.set(key, failures);
      this.#options.onError(this.#options.name, key, error);
      const base = this.#options.retryDelayMs ?? 100;
      this.add(key, Math.min(MAX_RETRY_DELAY_MS, base * 2 ** (failures - 1)));
    }
  }
}
