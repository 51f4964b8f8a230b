/**
 * Why a request waits, and its place in line: decided without the mutex — from the Lease alone when it
 * can tell (waitFromLease), else on the labelled held nodes (waitWithoutLock) — so that waiting requests
 * never take the mutex: it is held only to admit. A stale read can only make a request wait one retry
 * longer, never admit it.
 */
import type { V1Lease, V1Node } from '@kubernetes/client-node';
import type { KubeClient } from '../clients/kube/client.ts';
import type { SlotUnavailable } from '../errors/index.ts';
import type { ResolvedRequest } from '../model/request.ts';
import { describeHolders, type QueueEntry, requestsAhead } from './decision.ts';
import { nodesInFlight } from './intents.ts';
import { editWithoutMutex, isMutexFreeFor } from './mutex.ts';
import { type AdmissionSettings, decide, observeNodes } from './observe.ts';
import { readAdmitted, readIntents, readQueue } from './records.ts';
import { busyError, LEASE_ONLY_WAIT_SECONDS, QUEUE_REFRESH_SECONDS, QUEUE_TTL_SECONDS, waitError } from './schedule.ts';

/**
 * A request for which no slot is free yet: why it waits — decided on an unlocked read (the labelled held
 * nodes, the Lease as read), so that waiting requests never take the mutex: it is held only to admit.
 * Waiting needs no lock: a new place in the queue, a refresh of an old one or a place dropped (a window
 * whose own slots are full) is written with one conditional write of the Lease as read, and only while
 * nobody holds the mutex — so it never meets a holder's unlock; a write that loses a race is simply
 * tried again at the next attempt. Undefined when it may be admitted, or no Lease exists yet: then the
 * locked path decides on every node that may be held, and takes the hold. A stale read can only make a
 * request wait one retry longer, never admit it.
 */
export async function waitWithoutLock(
  client: KubeClient,
  request: ResolvedRequest,
  settings: AdmissionSettings,
  read: { node: V1Node; now: Date; lease: V1Lease | undefined },
): Promise<SlotUnavailable | undefined> {
  const { node, now, lease } = read;
  if (!lease) return undefined;
  const place = readQueue(lease, request.nodeName)[request.requestId];
  const intents = readIntents(lease, request.nodeName);
  const decision = decide(request, settings, {
    nodes: await observeNodes(client, node, undefined, settings.minSchedulable),
    lease,
    intents,
    now,
  });
  if (decision.admit) return undefined;
  const error = waitError(`node ${request.nodeName}: ${decision.why}`, decision, {
    requestId: request.requestId,
    maxHeldNodes: settings.maxHeldNodes,
    now,
  });
  const mine = decision.queue[request.requestId];
  // A limit's reason changes only when the nodes it names change: written at once, `status` shows it.
  const reasonChanged = decision.limited === true && mine?.why !== place?.why;
  const due =
    place === undefined || reasonChanged || now.getTime() - Date.parse(place.seen) > QUEUE_REFRESH_SECONDS * 1000;
  if (mine ? due : place !== undefined) {
    await writePlace(client, { namespace: settings.namespace, lease, now }, request.requestId, mine);
  }
  return error;
}

/**
 * Why a request waits, decided from the admission Lease alone — one read, where deciding on the nodes
 * costs four and the record one more. With a hundred requests for ten slots most attempts end here:
 * - a request with a fresh place in line, when at least twice as many older requests wait ahead of it as
 *   there are slots, or fewer slots are free than requests ahead of it — counting as held the nodes the
 *   Lease records admitting (pruned by every locked decision and by each release, so they can only
 *   over-count) and those being admitted now; its place is refreshed here too (an unlocked write);
 * - any request that would have to decide while another holds the mutex (it could only be told "busy").
 * Never admits: undefined sends the request on to the usual path, which decides on the nodes. The error
 * picks the retry schedule (waitError).
 */
export async function waitFromLease(
  client: KubeClient,
  request: ResolvedRequest,
  settings: AdmissionSettings,
  read: { readonly lease: V1Lease | undefined; readonly now: Date },
): Promise<SlotUnavailable | undefined> {
  const { lease, now } = read;
  const queue = readQueue(lease, request.nodeName);
  const place = queue[request.requestId];
  const max = settings.maxHeldNodes;
  const at = { requestId: request.requestId, maxHeldNodes: max, now };
  const busy = isMutexFreeFor(lease, request.requestId, now)
    ? undefined
    : busyError(
        `node ${request.nodeName}: admission is busy (held by ${lease?.spec?.holderIdentity}); retrying`,
        { queue },
        at,
      );
  const age = place ? now.getTime() - Date.parse(place.seen) : Number.POSITIVE_INFINITY;
  if (!lease || !place || age > LEASE_ONLY_WAIT_SECONDS * 1000) return busy;
  const ahead = requestsAhead(queue, request.requestId, { now, ttlSeconds: QUEUE_TTL_SECONDS }) ?? 0;
  const why =
    ahead >= 2 * max
      ? `waiting in line since ${place.since} behind ${ahead} older request(s) for ${max} maintenance slot(s) (\`drainbridge status\` shows who holds them)`
      : noSlotYet(lease, request, { ahead, max, now });
  if (why === undefined) return busy;
  if (age > QUEUE_REFRESH_SECONDS * 1000) {
    const refreshed = { ...place, seen: now.toISOString() };
    if (!(await writePlace(client, { namespace: settings.namespace, lease, now }, request.requestId, refreshed))) {
      return busy;
    }
  }
  return waitError(`node ${request.nodeName}: ${why}`, { queue }, at);
}

/**
 * Why no slot can be this request's yet, counting from the Lease (the nodes it records admitting and those
 * being admitted now); undefined when one may be, or the Lease cannot tell.
 */
function noSlotYet(
  lease: V1Lease | undefined,
  request: ResolvedRequest,
  at: { readonly ahead: number; readonly max: number; readonly now: Date },
): string | undefined {
  const admitted = readAdmitted(lease);
  if (admitted === 'unreadable') return undefined;
  const intents = readIntents(lease, request.nodeName);
  const held = new Set([...admitted, ...nodesInFlight(intents, request.requestId, at.now)]);
  // Its node held already (a second request for it) is admitted at once by the usual path.
  if (held.has(request.nodeName)) return undefined;
  const free = at.max - held.size;
  if (at.ahead < free) return undefined;
  return free > 0
    ? `waiting behind ${at.ahead} older request(s) for ${free} free slot(s)`
    : `all ${at.max} maintenance slot(s) are in use (${describeHolders([...held])}); ${at.ahead} request(s) ahead`;
}

/**
 * Writes `requestId`'s place in line (`place`), or drops it (undefined), without the mutex
 * (editWithoutMutex); the other places stay as whoever wrote last left them. Returns whether it wrote.
 */
export function writePlace(
  client: KubeClient,
  at: { readonly namespace: string; readonly now: Date; readonly lease?: V1Lease | undefined },
  requestId: string,
  place: QueueEntry | undefined,
): Promise<boolean> {
  return editWithoutMutex(client, { namespace: at.namespace, now: at.now, first: at.lease }, (lease) => {
    const { [requestId]: current, ...others } = readQueue(lease);
    if (place === undefined && current === undefined) return undefined;
    const queue = place === undefined ? others : { ...others, [requestId]: place };
    return { queue };
  });
}
