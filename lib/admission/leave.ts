/**
 * A request leaving admission: its place in line dropped when a person stops it, its node taken off the
 * admitted ones when its last hold is released — so the requests behind it see the free slot at once
 * instead of waiting for the Lease's records to expire.
 */
import type { KubeClient } from '../clients/kube/client.ts';
import { editWithoutMutex } from './mutex.ts';
import { readAdmitted } from './records.ts';
import { writePlace } from './wait.ts';

/**
 * A node's last hold was released: the Lease stops counting it among the admitted nodes, so that the
 * requests next in line see the free slot from the Lease alone (waitFromLease). Only while nobody holds
 * the mutex; otherwise, or on a conflict, the next locked decision prunes it. Returns whether it wrote.
 */
export async function noteReleased(
  client: KubeClient,
  namespace: string,
  nodeName: string,
  now: Date,
): Promise<boolean> {
  return editWithoutMutex(client, { namespace, now }, (lease) => {
    const admitted = readAdmitted(lease);
    if (admitted === 'unreadable' || !admitted.includes(nodeName)) return undefined;
    return { admittedNodes: admitted.filter((name) => name !== nodeName) };
  });
}

/**
 * Takes `requestId` off the waiting queue (a person stopped its command): the requests behind it need
 * not wait QUEUE_TTL_SECONDS for its entry to expire. Only while nobody holds the mutex; otherwise, and
 * on a conflict, the entry simply expires. Returns whether it removed the entry.
 */
export async function leaveQueue(
  client: KubeClient,
  namespace: string,
  requestId: string,
  now: Date,
): Promise<boolean> {
  return writePlace(client, { namespace, now }, requestId, undefined);
}
