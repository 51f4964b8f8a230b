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
  /**
   * A slow pass holds its key: the next pass of that key waits `holdFactor` times as long (real time)
   * as this one took, events meanwhile folding into it — as a real controller's worker, busy with a key,
   * folds the events that arrive meanwhile into one more pass. Passes under 2 ms hold nothing, so
   * small clusters see every pass at the next tick as before. Omitted: no hold.
   */
  readonly holdFactor?: number;
}

const MAX_RETRY_DELAY_MS = 5_000;
/**
 * The hold the workload and disruption controllers and the scheduler use: a key that costs T ms a pass
 * gets at most one pass per 10T, a tenth of the simulator's one thread. At 5,000 nodes five keys cost
 * tens of ms a pass (two ReplicaSets, two budgets, a DaemonSet, each over thousands of pods); with a
 * hold of 3T (a quarter each) they took the whole thread and the API starved.
 */
export const SLOW_PASS_HOLD_FACTOR = 9;
/** The longest hold, real ms: a pass that placed thousands of pods at start-up must not idle its key for minutes. */
const MAX_HOLD_MS = 1_000;
/** Real milliseconds a pass must take before it holds its key. */
const MIN_HOLDING_PASS_MS = 2;

/** A deduplicating, clock-driven work queue. */
export class WorkQueue {
  readonly #options: QueueOptions;
  readonly #dirty = new Set<string>();
  readonly #delayed = new Map<string, { at: number; timer: ClockTimer }>();
  readonly #failures = new Map<string, number>();
  /** Key → real time (performance.now) before which its next pass waits. */
  readonly #heldUntil = new Map<string, number>();
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
    if (this.#deferredWhileHeld(key)) return;
    this.#dirty.add(key);
    this.#flushTimer ??= this.#options.clock.setTimeout(() => this.#flush(), 0);
  }

  /**
   * Runs `key`'s pass at once if one is waiting (marked, delayed or held), hold or not: for a reader
   * that must not act on a result older than the events already seen.
   */
  settle(key: string): void {
    const delayed = this.#delayed.get(key);
    if (this.#stopped || (!this.#dirty.has(key) && !delayed)) return;
    delayed?.timer.cancel();
    this.#delayed.delete(key);
    this.#dirty.delete(key);
    this.#runOne(key);
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
      // Marked while its own pass ran (its writes' events), before the hold was known: held now.
      if (!this.#deferredWhileHeld(key)) this.#runOne(key);
    }
  }

  #runOne(key: string): void {
    const started = performance.now();
    try {
      const result = this.#options.reconcile(key);
      this.#hold(key, started);
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

  /** Whether `key` is held by its last slow pass; if so its pass is put off until the hold ends. */
  #deferredWhileHeld(key: string): boolean {
    const heldUntil = this.#heldUntil.get(key);
    if (heldUntil === undefined) return false;
    const heldForMs = heldUntil - performance.now();
    if (heldForMs <= 0) {
      this.#heldUntil.delete(key);
      return false;
    }
    this.#addLater(key, heldForMs * this.#options.clock.speed);
    return true;
  }

  #hold(key: string, started: number): void {
    const factor = this.#options.holdFactor;
    if (factor === undefined) return;
    const finished = performance.now();
    const tookMs = finished - started;
    if (tookMs >= MIN_HOLDING_PASS_MS) this.#heldUntil.set(key, finished + Math.min(MAX_HOLD_MS, tookMs * factor));
  }
}
