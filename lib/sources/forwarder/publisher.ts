/**
 * The one publishing path: sources offer events, the coalescing queue holds them, and one loop sends
 * them to the sink in batches while this replica leads. Partially failed batches put only the failed
 * events back (unless a newer event for the same subject arrived meanwhile) and back off, doubling up to
 * a ceiling; refused events are reported and not retried; a graceful stop flushes what is waiting — a
 * flush cuts a backoff short and retries every `FLUSH_RETRY_MS` while it lasts, so events queued while
 * the bus was away still go out within the grace period once it answers again.
 */
import type { BusAdapter, SendOutcome } from '../../bus/types.ts';
import { TransientError } from '../../errors/index.ts';
import type { Logger } from '../../log/logger.ts';
import type { EventOutlet, ForwardedEvent, PublishReceipt } from '../types.ts';
import type { ForwarderMetrics } from './metrics.ts';
import { CoalescingQueue } from './queue.ts';

export interface PublisherOptions {
  readonly sink: BusAdapter;
  readonly capacity: number;
  readonly metrics: ForwarderMetrics;
  readonly logger: Logger;
  /** Told of each event once it is published, refused or dropped (sources keep their own books by it). */
  readonly onReceipt: (receipt: PublishReceipt) => void;
  /** Backoff after a failed send: first delay and ceiling (ms). */
  readonly backoff?: { readonly baseMs: number; readonly maxMs: number };
}

const sourceOf = (event: ForwardedEvent): string => event.key.split('/')[0] ?? 'unknown';

/** The longest wait between two sends while flushing (a backoff may have grown to 30 s; a grace period is 10 s). */
export const FLUSH_RETRY_MS = 250;

export class Publisher implements EventOutlet {
  readonly #queue: CoalescingQueue;
  readonly #options: PublisherOptions;
  #active = false;
  #stopped = false;
  #inFlight = 0;
  #delayMs = 0;
  /** Flushes waiting: a backoff is cut short (see FLUSH_RETRY_MS). */
  #flushing = 0;
  /** Ends the loop's wait for work (an offer, leadership, a stop). */
  #wakeIdle: (() => void) | undefined;
  /** Ends the loop's backoff (a flush, a stop, leadership changing) — not an offer: a down bus is not retried per offer. */
  #wakeBackoff: (() => void) | undefined;
  #loop: Promise<void> | undefined;
  #idleWaiters: (() => void)[] = [];
  /** Cancels the send in flight on stop(). */
  readonly #cancel = new AbortController();

  constructor(options: PublisherOptions) {
    this.#options = options;
    this.#queue = new CoalescingQueue(options.capacity);
  }

  get depth(): number {
    return this.#queue.depth;
  }

  start(): void {
    this.#loop ??= this.#run();
  }

  /** This replica leads: send what sources offer. */
  activate(): void {
    this.#active = true;
    this.#interrupt();
  }

  /** Another replica leads: drop what is waiting (the new leader derives it from cluster state). */
  deactivate(): void {
    this.#active = false;
    this.#queue.clear();
    this.#options.metrics.queueDepth.set(0);
    this.#interrupt();
  }

  offer(event: ForwardedEvent): void {
    if (this.#stopped) return;
    const result = this.#queue.offer(event);
    if (result.dropped) {
      this.#options.metrics.publishFailures.inc({ detail_type: result.dropped.detailType, kind: 'dropped' });
      this.#options.logger.warn(
        'forwarder queue full: dropped the oldest event; it is derived again from cluster state',
        {
          key: result.dropped.key,
          detailType: result.dropped.detailType,
        },
      );
      this.#options.onReceipt({ event: result.dropped, outcome: 'dropped' });
    }
    this.#options.metrics.queueDepth.set(this.#queue.depth);
    this.#notify();
  }

  /** Resolves when nothing waits and nothing is in flight, or after `timeoutMs`; true when flushed. */
  async flush(timeoutMs: number): Promise<boolean> {
    if (this.#isIdle()) return true;
    let timer: NodeJS.Timeout | undefined;
    const flushed = new Promise<boolean>((resolve) => this.#idleWaiters.push(() => resolve(true)));
    const timedOut = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    this.#flushing++;
    // A send loop sleeping out a backoff tries again now.
    this.#interrupt();
    try {
      return await Promise.race([flushed, timedOut]);
    } finally {
      this.#flushing--;
      clearTimeout(timer);
    }
  }

  /** Stops the loop; a send in flight is cancelled (its events stay unpublished). Call `flush` first for a graceful stop. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#cancel.abort();
    this.#interrupt();
    await this.#loop;
  }

  #isIdle(): boolean {
    return this.#inFlight === 0 && (this.#queue.depth === 0 || !this.#active);
  }

  /** New work, or the loop went idle: wake a loop waiting for work; tell flushes once idle. */
  #notify(): void {
    const wake = this.#wakeIdle;
    this.#wakeIdle = undefined;
    wake?.();
    if (this.#isIdle()) for (const resolve of this.#idleWaiters.splice(0)) resolve();
  }

  /** Wakes the loop whatever it waits for, a backoff included. */
  #interrupt(): void {
    const wake = this.#wakeBackoff;
    this.#wakeBackoff = undefined;
    wake?.();
    this.#notify();
  }

  #backoff(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.#wakeBackoff = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  async #run(): Promise<void> {
    while (!this.#stopped) {
      if (!this.#active || this.#queue.depth === 0) {
        await new Promise<void>((resolve) => {
          this.#wakeIdle = resolve;
        });
        continue;
      }
      const sink = this.#options.sink;
      const batch = this.#queue.take(sink.maxBatch, (events) => sink.fits(events));
      this.#inFlight = batch.length;
      const retry = this.#settle(batch, await this.#send(batch));
      this.#inFlight = 0;
      // The gauge counts what waits, the events just put back included.
      if (retry.length > 0) this.#queue.requeue(retry);
      this.#options.metrics.queueDepth.set(this.#queue.depth);
      if (retry.length > 0) {
        this.#delayMs = Math.min(
          this.#options.backoff?.maxMs ?? 30_000,
          Math.max(this.#delayMs * 2, this.#options.backoff?.baseMs ?? 500),
        );
        await this.#backoff(this.#flushing > 0 ? Math.min(this.#delayMs, FLUSH_RETRY_MS) : this.#delayMs);
        this.#wakeBackoff = undefined;
      } else {
        this.#delayMs = 0;
      }
      this.#notify();
    }
  }

  async #send(batch: readonly ForwardedEvent[]): Promise<SendOutcome[]> {
    try {
      return await this.#options.sink.send(batch, this.#cancel.signal);
    } catch (error) {
      const failure = error instanceof Error ? error : new Error(String(error));
      return batch.map(() => ({ ok: false, error: new TransientError(failure.message, { cause: failure }) }));
    }
  }

  /** Books each outcome; returns the events to send again. */
  #settle(batch: readonly ForwardedEvent[], outcomes: readonly SendOutcome[]): ForwardedEvent[] {
    const { metrics, logger, onReceipt } = this.#options;
    const retry: ForwardedEvent[] = [];
    batch.forEach((event, index) => {
      const outcome = outcomes[index] ?? { ok: false, error: new TransientError('no outcome for this event') };
      if (outcome.ok) {
        metrics.published.inc({ detail_type: event.detailType, source: sourceOf(event) });
        onReceipt({ event, outcome: 'published' });
        return;
      }
      const transient = outcome.error instanceof TransientError;
      metrics.publishFailures.inc({ detail_type: event.detailType, kind: transient ? 'transient' : 'rejected' });
      if (transient) {
        retry.push(event);
        logger.warn('publish failed; will retry', {
          key: event.key,
          detailType: event.detailType,
          error: outcome.error.message,
        });
      } else {
        logger.error('event refused; not retried', {
          key: event.key,
          detailType: event.detailType,
          error: outcome.error.message,
        });
        onReceipt({ event, outcome: 'rejected' });
      }
    });
    return retry;
  }
}
