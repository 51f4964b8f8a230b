/**
 * The wait schedule: how long a place in line lasts and is refreshed, and which error a waiting request
 * throws — the error picks how soon the workflow asks again (state-machines/evacuate.asl.yml, Admit). Pure.
 */
import { AdmissionBusy, SlotUnavailable, WaitingInLine } from '../errors/index.ts';
import { type AdmissionQueue, requestsAhead } from './decision.ts';

/** A waiting request refreshes its entry at every retry (≤ 30 s apart); gone for this long, it is dropped. */
export const QUEUE_TTL_SECONDS = 180;

/** A request that keeps finding no free slot writes its place in the queue again after this long (≪ QUEUE_TTL_SECONDS). */
export const QUEUE_REFRESH_SECONDS = 60;

/**
 * A place older than this is not waited on from the Lease alone (its refreshes there kept failing): the
 * request decides on the nodes again (wait.ts, waitWithoutLock), which writes its place anew.
 */
export const LEASE_ONLY_WAIT_SECONDS = 120;

/**
 * The error a waiting request throws, which picks how it waits (state-machines/evacuate.asl.yml, Admit's catch):
 * SlotUnavailable (WaitForSlot: woken as a slot frees, else again within 10 s) when fewer than twice as
 * many requests wait ahead of it for the cluster-wide slots as there are slots — the next round of
 * releases admits it, or brings it to the front — or when it has no place yet (it found admission busy:
 * it writes its place at its next attempt, and a minute's sleep would put it behind later arrivals);
 * WaitingInLine (WaitInLine: again within 60 s) when it waits further back, on a label-selector limit or
 * a window.
 */
export function waitError(
  message: string,
  decision: { readonly queue: AdmissionQueue; readonly limited?: boolean },
  at: { readonly requestId: string; readonly maxHeldNodes: number; readonly now: Date },
): SlotUnavailable {
  const ahead = requestsAhead(decision.queue, at.requestId, { now: at.now, ttlSeconds: QUEUE_TTL_SECONDS });
  const next = !decision.limited && (ahead === undefined || ahead < 2 * at.maxHeldNodes);
  return next ? new SlotUnavailable(message) : new WaitingInLine(message);
}

/**
 * The error for a request that found the admission lock held: AdmissionBusy (retried within 1–8 s with
 * jitter by Admit itself: the lock is held for a few API calls, and a request with no place in line yet
 * has nothing a wake-up could find) unless it waits far back in line anyway (WaitingInLine, as waitError).
 */
export function busyError(
  message: string,
  decision: { readonly queue: AdmissionQueue },
  at: { readonly requestId: string; readonly maxHeldNodes: number; readonly now: Date },
): SlotUnavailable {
  const waiting = waitError(message, decision, at);
  return waiting instanceof WaitingInLine ? waiting : new AdmissionBusy(message);
}
