/**
 * Ends the agent published, kept until the cluster shows them carried out. A `Maintenance Ended` the bus
 * took can still be lost before any workflow records it: embedded, the `drainbridge run` replica that
 * took it may lose its leadership a moment later (an API outage), stopping the Restore before its first
 * write, and the next leader resumes only what the records show. The request then kept its place, took
 * its node later and held it for a maintenance long over (the 60-minute soak, seed 71945: 46 minutes).
 * So an end is confirmed from the cluster (history.ts `open`), level-triggered like everything else the
 * agent does: a request still open CONFIRM_AFTER_MS after its end went out is ended again (a repeated
 * Restore changes nothing: outcome-steps.ts), at most MAX_REPEATS times.
 */
import { readNodeHistory } from './history.ts';
import type { NoticeKube } from './loop.ts';

/** How long a Restore has to show in the cluster before its end is published again. */
export const CONFIRM_AFTER_MS = 60_000;
/** Ends published again for one request before the agent leaves it to the operator (logged). */
export const MAX_REPEATS = 5;

interface Pending {
  readonly at: number;
  readonly repeats: number;
}

export interface EndsToRepeat {
  /** Requests still open in the cluster: publish their end again. */
  readonly again: readonly string[];
  /** Requests still open after MAX_REPEATS ends: no more are published. */
  readonly givenUp: readonly string[];
}

export class EndConfirmations {
  readonly #pending = new Map<string, Pending>();
  #checkedAt = 0;

  /** An end went out for `requestId` (again, if it was pending: one more repeat). */
  ended(requestId: string, at: Date): void {
    const repeats = this.#pending.has(requestId) ? (this.#pending.get(requestId)?.repeats ?? 0) + 1 : 0;
    this.#pending.set(requestId, { at: at.getTime(), repeats });
  }

  /** The request was requested again (its notice is back): its earlier end is no longer awaited. */
  forget(requestId: string): void {
    this.#pending.delete(requestId);
  }

  get size(): number {
    return this.#pending.size;
  }

  /**
   * At most once per CONFIRM_AFTER_MS, and only while ends are pending: reads the node's history and
   * returns the ends to publish again. Confirmed ends (nothing open any more) are dropped. A failed read
   * returns nothing: it is tried at the next check.
   */
  async check(kube: NoticeKube, nodeName: string, now: Date): Promise<EndsToRepeat> {
    const at = now.getTime();
    if (this.#pending.size === 0 || at - this.#checkedAt < CONFIRM_AFTER_MS) return { again: [], givenUp: [] };
    this.#checkedAt = at;
    const open = new Set((await readNodeHistory(kube, nodeName)).open);
    const again: string[] = [];
    const givenUp: string[] = [];
    for (const [requestId, pending] of [...this.#pending]) {
      if (!open.has(requestId)) this.#pending.delete(requestId);
      else if (at - pending.at < CONFIRM_AFTER_MS) continue;
      else if (pending.repeats >= MAX_REPEATS) {
        this.#pending.delete(requestId);
        givenUp.push(requestId);
      } else again.push(requestId);
    }
    return { again, givenUp };
  }
}
