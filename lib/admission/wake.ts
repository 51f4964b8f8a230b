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

/** The longest wake-up token: Step Functions issues task tokens of up to 2,048 characters (SendTaskSuccess). */
export const MAX_TOKEN_CHARS = 2048;

/**
 * The parked tokens at the front of the line take at most this many characters of the Lease, and as many
 * more those waiting on a limit: the Lease's annotations must stay far below Kubernetes' 256 KiB however
 * many requests wait. Sixteen of the longest tokens Step Functions issues; the embedded executor's
 * (`<execution id>/<uuid>`, about 120 characters) fit some 270 — so with `drainbridge run` a line of a
 * hundred parks whole, and nobody near the front sleeps out WaitInLine's minute with a slot free (seen at
 * 1,000 nodes when only 16 places parked: the slots idle for 45 s at a time). A request further back
 * waits out its fallback; it parks once it is this near.
 */
export const PARKED_TOKEN_CHARS = 16 * MAX_TOKEN_CHARS;

const tokenChars = (entries: readonly (WakeableEntry | undefined)[]): number =>
  entries.reduce((sum, entry) => sum + (entry?.wake?.length ?? 0), 0);

/**
 * Whether a place may park `token`: the tokens parked ahead of it in line and its own fit
 * PARKED_TOKEN_CHARS; or, waiting on a limit, those others on a limit parked and its own fit it.
 */
export function mayPark(
  queue: Readonly<Record<string, WakeableEntry>>,
  requestId: string,
  now: Date,
  token: string,
): boolean {
  const place = queue[requestId];
  if (place === undefined) return false;
  const order = lineOrder(queue, { now, ttlSeconds: QUEUE_TTL_SECONDS });
  const ahead = order.indexOf(requestId);
  if (ahead < 0) return false;
  if (tokenChars(order.slice(0, ahead).map((id) => queue[id])) + token.length <= PARKED_TOKEN_CHARS) return true;
  // A request on a zone's or a selector's limit is woken by any release (wake-plan.ts), wherever it stands.
  const onLimits = Object.entries(queue).flatMap(([id, e]) => (id !== requestId && e.why && e.wake ? [e] : []));
  return place.why !== undefined && tokenChars(onLimits) + token.length <= PARKED_TOKEN_CHARS;
}

/**
 * What became of a token: parked on the request's place; not parked because the request stands too far
 * back (the tokens ahead of it fill PARKED_TOKEN_CHARS and it waits on no limit, or those of others on a
 * limit do) — only the wait's fallback ends its wait, as it should; or not written: the request has no
 * place on the Lease yet, or the write kept losing to the admission mutex (a moment's contention, when
 * many requests arrive together) — then it should not sleep out a long fallback with a slot perhaps free.
 */
export type ParkOutcome = 'parked' | 'far-back' | 'not-written';

/** Parks `token` on `requestId`'s place in line (an unlocked, conditional write: editWithoutMutex). */
export async function parkWakeToken(
  client: KubeClient,
  at: { readonly namespace: string; readonly now: Date },
  requestId: string,
  token: string,
): Promise<ParkOutcome> {
  let farBack = false;
  const written = await editWithoutMutex(client, at, (lease) => {
    const queue: Readonly<Record<string, WakeableEntry>> = readQueue(lease);
    const place = queue[requestId];
    farBack = place !== undefined && !mayPark(queue, requestId, at.now, token);
    if (place === undefined || farBack) return undefined;
    return { queue: { ...queue, [requestId]: { ...place, wake: token } as WakeableEntry } };
  });
  if (written) return 'parked';
  return farBack ? 'far-back' : 'not-written';
}
