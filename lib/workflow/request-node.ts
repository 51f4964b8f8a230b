/**
 * One request id names one node. A request id whose Evacuation record names another node (`evacuate
 * node-3 --request-id REUSE` while REUSE holds node-2, or a source reusing an id) is refused at the first
 * step, before anything is written: taken as a new request it would wait in line behind its own namesake
 * until its timeout, and its failure or Restore would be written on the other node's record.
 */

import type { KubeClient } from '../clients/kube/client.ts';
import { isNotFound } from '../clients/kube/errors.ts';
import { type EvacuationObject, evacuationName } from '../clients/kube/paths.ts';
import { SkipEvent } from '../errors/index.ts';

/** The node another request's record under `requestId` names, when it is not `nodeName`. Pure. */
export function otherNodeOf(record: EvacuationObject | undefined, nodeName: string): string | undefined {
  const named = record?.spec?.nodeName;
  return named && named !== nodeName ? named : undefined;
}

/** The refusal's sentence (the CLI says the same before it starts anything). */
export function reusedIdMessage(requestId: string, otherNode: string, nodeName: string): string {
  return `request ${requestId} already names node ${otherNode} (its Evacuation record), not ${nodeName}: one request id names one node; use another id`;
}

/** Throws SkipEvent when `requestId`'s record names a node other than `nodeName`. */
export async function refuseReusedRequestId(client: KubeClient, requestId: string, nodeName: string): Promise<void> {
  let record: EvacuationObject | undefined;
  try {
    record = await client.getEvacuation(evacuationName(requestId));
  } catch (error) {
    if (isNotFound(error)) return;
    throw error;
  }
  const other = otherNodeOf(record, nodeName);
  if (other) throw new SkipEvent(reusedIdMessage(requestId, other, nodeName));
}
