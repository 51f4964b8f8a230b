/**
 * The forwarder's bounded in-memory queue. One waiting event per key: a newer event for a subject
 * (a node's cordon, a NodeMaintenance) replaces the one still waiting, so a bus outage costs memory in
 * proportion to the subjects that changed, not to the changes. Full: the oldest waiting event is
 * dropped and reported — the cluster state is the durable copy, and the forwarder derives it again
 * (`resync`). Not durable by design. Pure data structure, no timers.
 */
import type { ForwardedEvent } from '../types.ts';

export interface OfferResult {
  /** An older waiting event with the same key was replaced. */
  readonly coalesced: boolean;
  /** The event dropped to make room, when the queue was full. */
  readonly dropped?: ForwardedEvent;
}

export class CoalescingQueue {
  readonly capacity: number;
  #waiting = new Map<string, ForwardedEvent>();

  constructor(capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError('queue capacity must be a whole number ≥ 1');
    this.capacity = capacity;
  }

  get depth(): number {
    return this.#waiting.size;
  }

  /** Queues `event`, replacing a waiting one with the same key (which keeps its place in line). */
  offer(event: ForwardedEvent): OfferResult {
    if (this.#waiting.has(event.key)) {
      this.#waiting.set(event.key, event);
      return { coalesced: true };
    }
    let dropped: ForwardedEvent | undefined;
    if (this.#waiting.size >= this.capacity) {
      const [oldestKey, oldest] = this.#waiting.entries().next().value as [string, ForwardedEvent];
      this.#waiting.delete(oldestKey);
      dropped = oldest;
    }
    this.#waiting.set(event.key, event);
    return dropped ? { coalesced: false, dropped } : { coalesced: false };
  }

  /** Takes up to `max` oldest events while `fits(batch)` holds (the first always fits). */
  take(max: number, fits: (batch: readonly ForwardedEvent[]) => boolean = () => true): ForwardedEvent[] {
    const batch: ForwardedEvent[] = [];
    for (const [key, event] of this.#waiting) {
      if (batch.length >= max) break;
      if (batch.length > 0 && !fits([...batch, event])) break;
      batch.push(event);
      this.#waiting.delete(key);
    }
    return batch;
  }

  /** Puts events that failed back at the front, unless a newer event for their key arrived meanwhile. */
  requeue(events: readonly ForwardedEvent[]): void {
    const front = events.filter((event) => !this.#waiting.has(event.key));
    if (front.length === 0) return;
    this.#waiting = new Map([...front.map((event): [string, ForwardedEvent] => [event.key, event]), ...this.#waiting]);
    while (this.#waiting.size > this.capacity) {
      const last = [...this.#waiting.keys()].at(-1) as string;
      this.#waiting.delete(last);
    }
  }

  /** Empties the queue (leadership lost); returns what was waiting. */
  clear(): ForwardedEvent[] {
    const all = [...this.#waiting.values()];
    this.#waiting.clear();
    return all;
  }
}
