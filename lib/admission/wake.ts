/**
 * Waking requests that wait in line, instead of having them poll the Lease: a waiting request parks a
 * wake-up token on its place in line (its Step Functions task token, or the embedded executor's), and
 * whoever watches the Lease (`drainbridge run`, the forwarder) sends the token back when a slot frees —
 * so a waiting request reads nothing while it waits. A wake-up only makes the request try admission
 * again (it decides nothing), and a lost one costs the wait's fallback (its TimeoutSeconds): an
 * optimisation, never needed for correctness.
 */
import type { KubeClient } from '../clients/kube/client.ts';
import { lineOrder } from './decision.ts';
import { editWithoutMutex } from './mutex.ts';
import { readQueue } from './records.ts';
import { QUEUE_TTL_SECONDS } from './schedule.ts';
import type { WakeableEntry } from './wake-plan.ts';

/**
 * Only this many places at the front of the line park a token, and as many more waiting on a limit: a
 * Step Functions token is up to 2 KiB, and the Lease's annotations must stay far below Kubernetes'
 * 256 KiB however many requests wait. A request further back waits out its fallback; it parks once it
 * is this near.
 */
export const PARKED_PLACES = 16;

/** Whether a place may park a token: near the front, or waiting on a limit while few others on one have parked. */
export function mayPark(queue: Readonly<Record<string, WakeableEntry>>, requestId: string, now: Date): boolean {
  const place = queue[requestId];
  if (place === undefined) return false;
  const ahead = lineOrder(queue, { now, ttlSeconds: QUEUE_TTL_SECONDS }).indexOf(requestId);
  if (ahead >= 0 && ahead < PARKED_PLACES) return true;
  // A request on a zone's or a selector's limit is woken by any release (wake-plan.ts), wherever it stands.
  const parkedOnLimits = Object.entries(queue).filter(([id, e]) => id !== requestId && e.why && e.wake).length;
  return ahead >= 0 && place.why !== undefined && parkedOnLimits < PARKED_PLACES;
}

/**
 * Parks `token` on `requestId`'s place in line (an unlocked, conditional write: editWithoutMutex).
 * False when the request has no place near the front (it waits for something else, or PARKED_PLACES
 * wait ahead of it and it waits on no limit, or PARKED_PLACES others on a limit parked already) or the write lost to the mutex: then only the wait's fallback ends its wait.
 */
export function parkWakeToken(
  client: KubeClient,
  at: { readonly namespace: string; readonly now: Date },
  requestId: string,
  token: string,
): Promise<boolean> {
  return editWithoutMutex(client, at, (lease) => {
    const queue: Readonly<Record<string, WakeableEntry>> = readQueue(lease);
    const place = queue[requestId];
    if (place === undefined || !mayPark(queue, requestId, at.now)) return undefined;
    return { queue: { ...queue, [requestId]: { ...place, wake: token } as WakeableEntry } };
  });
}
