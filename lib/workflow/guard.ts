/**
 * Checks every evacuation step makes before doing anything: is the request still wanted, and is
 * there still time. Cheap (one node read) and the reason a Restore or an abort takes effect at the
 * next pass, on AWS and embedded alike, without stopping executions from outside.
 */
import type { V1Node } from '@kubernetes/client-node';
import type { KubeClient } from '../clients/kube/client.ts';
import { DeadlineExceeded, EvacuationAborted, EvacuationCancelled } from '../errors/index.ts';
import type { ResolvedRequest } from '../model/request.ts';
import { readNodeOrFail } from '../node/hold.ts';
import { readLedger } from '../node/ledger.ts';

/**
 * The instant after which the evacuation gives up: the request's deadline or the configured maximum,
 * whichever comes first (the maximum keeps every execution inside Step Functions' history limit).
 */
export function giveUpAt(request: ResolvedRequest, startedAt: string, maxEvacuationHours: number): Date {
  const maximum = Date.parse(startedAt) + maxEvacuationHours * 3600_000;
  return new Date(request.deadline ? Math.min(Date.parse(request.deadline), maximum) : maximum);
}

/** Throws DeadlineExceeded when `now` is past the request's deadline (or the default maximum). Pure. */
export function checkDeadline(
  request: ResolvedRequest,
  startedAt: string,
  maxEvacuationHours: number,
  now: Date,
): void {
  const limit = giveUpAt(request, startedAt, maxEvacuationHours);
  if (now.getTime() > limit.getTime()) {
    const what = request.deadline
      ? `the request's deadline ${request.deadline}`
      : `the maximum evacuation time of ${maxEvacuationHours} h`;
    // No word on the node's state here: before admission nothing was touched, after it the safe state
    // is kept. Whoever reports the failure reads the node and says which (cli/node-state.ts).
    throw new DeadlineExceeded(`evacuation of node ${request.nodeName} passed ${what}`);
  }
}

/**
 * Throws EvacuationCancelled when this request's hold is gone (a Restore ran), EvacuationAborted when
 * an operator asked to stop (`abortedBy`, read from the request's Evacuation record). Pure.
 */
export function checkStillWanted(node: V1Node, request: ResolvedRequest, abortedBy?: string): void {
  if (!readLedger(node).holds[request.requestId]) {
    throw new EvacuationCancelled(
      `request ${request.requestId} no longer holds node ${request.nodeName} (restored or released); stopping`,
    );
  }
  if (abortedBy !== undefined) {
    throw new EvacuationAborted(
      `evacuation of node ${request.nodeName} aborted by ${abortedBy}; the node stays cordoned`,
    );
  }
}

/** Reads the node and runs both checks; returns the node for the caller. */
export async function guardStep(
  client: KubeClient,
  request: ResolvedRequest,
  timing: { startedAt: string; maxEvacuationHours: number; now: Date; abortedBy?: string },
): Promise<V1Node> {
  const node = await readNodeOrFail(client, request.nodeName);
  checkStillWanted(node, request, timing.abortedBy);
  checkDeadline(request, timing.startedAt, timing.maxEvacuationHours, timing.now);
  return node;
}
