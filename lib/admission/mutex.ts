/**
 * The admission Lease as a mutex: one short lock around "count held nodes → decide → take the hold", so
 * two requests can never both take the last slot. Locking writes the locker's intent (intents.ts); an
 * unlock writes the records its decision leaves (records.ts). Edits that need no decision (a place in
 * line, a released node) are written without the mutex, only while nobody holds it.
 */
import type { V1Lease } from '@kubernetes/client-node';
import type { KubeClient } from '../clients/kube/client.ts';
import { isConflict, retryOnConflict } from '../clients/kube/conflict.ts';
import { createLease, readLease, updateLease } from '../clients/kube/lease.ts';
import { ConflictError, SlotUnavailable } from '../errors/index.ts';
import type { ResolvedRequest } from '../model/request.ts';
import { withIntent } from './intents.ts';
import { ADMISSION_LEASE, type LeaseRecords, readIntents, recordAnnotations } from './records.ts';

/** The mutex is held for one admission (a few API calls); a crashed holder loses it after this. */
export const MUTEX_SECONDS = 15;

export function isMutexFree(lease: V1Lease | undefined, now: Date): boolean {
  const spec = lease?.spec;
  if (!spec?.holderIdentity) return true;
  const renewed = spec.renewTime ? new Date(spec.renewTime).getTime() : 0;
  return now.getTime() - renewed > (spec.leaseDurationSeconds ?? MUTEX_SECONDS) * 1000;
}

/** The Lease held by `holder` (or by nobody), with `records` written over the ones it has. */
export function withHolder(
  lease: V1Lease | undefined,
  holder: string | undefined,
  now: Date,
  records: LeaseRecords = {},
): V1Lease {
  const annotations = { ...lease?.metadata?.annotations, ...recordAnnotations(records) };
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { ...lease?.metadata, name: ADMISSION_LEASE, annotations },
    spec: holder
      ? { holderIdentity: holder, leaseDurationSeconds: MUTEX_SECONDS, acquireTime: now, renewTime: now }
      : { leaseDurationSeconds: MUTEX_SECONDS },
  };
}

/**
 * Whether this request holds the mutex already: an earlier attempt's lock whose answer was lost (the
 * write landed, and the client's retry of it then conflicted with it) or that died before its unlock.
 * Only this request's executions write its id as the holder, and they all decide for its one node, so
 * taking the lock again cannot let two nodes share the last slot — whereas waiting for it to expire held
 * every other request back for MUTEX_SECONDS (seen at 1,000 nodes: 100 requests behind one lost answer).
 */
function heldBy(lease: V1Lease | undefined, requestId: string, now: Date): boolean {
  return !isMutexFree(lease, now) && lease?.spec?.holderIdentity === requestId;
}

/** Whether `requestId` may take the mutex: nobody holds it, or this request does already (heldBy). */
export function isMutexFreeFor(lease: V1Lease | undefined, requestId: string, now: Date): boolean {
  return isMutexFree(lease, now) || heldBy(lease, requestId, now);
}

/**
 * Takes the mutex, writing this request's intent beside the unexpired intents of earlier holders
 * (intents.ts); SlotUnavailable when another request holds it (the workflow retries shortly). A lock
 * this request holds already is taken again (heldBy).
 */
export async function lockAdmission(
  client: KubeClient,
  request: ResolvedRequest,
  at: { readonly namespace: string; readonly now: Date; readonly busy: (message: string) => SlotUnavailable },
): Promise<V1Lease> {
  const { namespace, now, busy } = at;
  const lease = await readLease(client, namespace, ADMISSION_LEASE);
  if (!isMutexFreeFor(lease, request.requestId, now)) {
    throw busy(`admission is busy (held by ${lease?.spec?.holderIdentity}); retrying`);
  }
  const intents = withIntent(
    readIntents(lease, request.nodeName),
    request.requestId,
    { node: request.nodeName, requester: request.requester },
    now,
  );
  const locked = withHolder(lease, request.requestId, now, { intents });
  try {
    return lease ? await updateLease(client, namespace, locked) : await createLease(client, namespace, locked);
  } catch (error) {
    if (!(error instanceof ConflictError)) throw error;
    // The write may have landed with its answer lost: then the lock is this request's, as written.
    const current = await readLease(client, namespace, ADMISSION_LEASE);
    if (heldBy(current, request.requestId, now) && current) return current;
    throw busy('admission is busy (another request took the lock); retrying');
  }
}

/**
 * Releases the mutex, leaving the queue and the intents still in flight. A conflict means the mutex was
 * lost while this request held it (its step stalled past the expiry): whoever took it carried this
 * request's intent forward and counted its node, so a hold taken here stands; a request that was not
 * admitted simply waits again.
 */
export async function unlockAdmission(
  client: KubeClient,
  namespace: string,
  lease: V1Lease,
  next: LeaseRecords & { readonly admitted: boolean; readonly now: Date },
): Promise<void> {
  try {
    await updateLease(client, namespace, withHolder(lease, undefined, next.now, next));
  } catch (error) {
    if (!(error instanceof ConflictError)) throw error;
    if (!next.admitted) throw new SlotUnavailable('admission lost its lock while it decided; retrying');
  }
}

/** Releases the mutex after a failure; if even that fails the lease expires on its own. */
export async function unlockQuietly(
  client: KubeClient,
  namespace: string,
  lease: V1Lease,
  at: { readonly now: Date; readonly dropIntentOf: string | undefined },
): Promise<void> {
  const { now, dropIntentOf } = at;
  if (!lease.spec?.holderIdentity) return;
  try {
    const { [dropIntentOf ?? '']: _dropped, ...kept } = readIntents(lease);
    await updateLease(client, namespace, withHolder(lease, undefined, now, dropIntentOf ? { intents: kept } : {}));
  } catch {
    // expires after MUTEX_SECONDS
  }
}

/** The records an edit of the Lease writes, from the Lease as read; undefined: nothing to change. */
export type LeaseEdit = (lease: V1Lease) => LeaseRecords | undefined;

/**
 * Edits the Lease's records without the mutex (a place in line written or dropped, a released node taken
 * off the admitted ones): only while nobody holds the mutex — a holder's unlock must not meet a changed
 * Lease — and conditional on the Lease as read. A conflict (another waiter wrote first, as a hundred
 * requests entering the line at once do) reads the Lease again and edits that, a few times within
 * milliseconds (retryOnConflict), so that the line forms within one attempt each instead of one Step
 * Functions retry per conflict. `first`: the Lease as the caller just read it, for the first try.
 * Returns whether it wrote.
 */
export async function editWithoutMutex(
  client: KubeClient,
  at: { readonly namespace: string; readonly now: Date; readonly first?: V1Lease | undefined },
  edit: LeaseEdit,
): Promise<boolean> {
  let first = at.first;
  const attempt = async (): Promise<boolean> => {
    const lease = first ?? (await readLease(client, at.namespace, ADMISSION_LEASE));
    first = undefined;
    if (!lease || !isMutexFree(lease, at.now)) return false;
    const changed = edit(lease);
    if (changed === undefined) return false;
    const annotations = { ...lease.metadata?.annotations, ...recordAnnotations(changed) };
    await updateLease(client, at.namespace, { ...lease, metadata: { ...lease.metadata, annotations } });
    return true;
  };
  try {
    return await retryOnConflict(attempt);
  } catch (error) {
    if (isConflict(error)) return false; // still contended: the next attempt writes it
    throw error;
  }
}
