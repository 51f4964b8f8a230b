/**
 * An operator's abort of a request, in one place for every caller (`drainbridge abort`, tests): the mark on
 * its Evacuation record, which the evacuation sees at its next step, and — for a request still waiting for
 * a slot — its place in the admission queue taken away: a waiting request decides from the admission Lease
 * alone (lib/admission, waitFromLease) and reads its record only once it has no place there.
 */
import { leaveQueue } from '../admission/index.ts';
import type { KubeClient } from '../clients/kube/client.ts';
import type { EvacuationProgressStore } from '../progress/evacuation-store.ts';

export interface AbortTarget {
  readonly requestId: string;
  /** The node the caller means: a request for another node is refused. */
  readonly nodeName?: string;
  readonly by: string;
  readonly at: Date;
}

/**
 * Marks the request aborted (InvalidInput, nothing written, when no such request runs or holds its node),
 * then takes it off the queue. The second is best effort: while another request holds the admission mutex,
 * or where the caller may not write the Lease, the request still sees the mark once its place is written
 * again under the mutex (at most two minutes later).
 */
export async function abortRequest(
  clients: { readonly kube: KubeClient; readonly progress: EvacuationProgressStore; readonly namespace: string },
  target: AbortTarget,
): Promise<void> {
  await clients.progress.requestAbort(target.requestId, target.by, target.at, target.nodeName);
  await leaveQueue(clients.kube, clients.namespace, target.requestId, target.at).catch(() => false);
}
