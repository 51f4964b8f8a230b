/**
 * The end of a request that never held its node, written on its Evacuation record: its window closed
 * before it was started, its cordon was lifted while it waited, or the CLI that asked for it was stopped
 * while it waited. Such a request has nothing to restore and perhaps no Restore ever comes, so its record
 * says how and why it ended (status.outcome, outcomeReason, endedAt) and it leaves the admission line —
 * else `kubectl get evacuations` shows it waiting for ever and its place blocks the line until it expires.
 */
import type { V1Node } from '@kubernetes/client-node';
import { leaveQueue } from '../admission/index.ts';
import type { KubeClient } from '../clients/kube/client.ts';
import type { NeverHeldEnd } from '../clients/kube/paths.ts';
import type { ResolvedRequest } from '../model/request.ts';
import { readLedger } from '../node/ledger.ts';
import { EvacuationProgressStore } from '../progress/evacuation-store.ts';

/** Whether `request` is a window's and its window has closed (admission then starts it no more). */
export function windowClosed(request: Pick<ResolvedRequest, 'window'>, now: Date): boolean {
  return request.window !== undefined && now.getTime() >= Date.parse(request.window.closesAt);
}

/**
 * How admission's SkipEvent (`why`) ends `request`, judged on the node as admission read it: undefined when
 * the skip ends nothing of this request (a late duplicate of one that held the node and was released).
 */
export function neverHeldEndOf(
  request: ResolvedRequest,
  node: V1Node,
  now: Date,
  why: string,
): NeverHeldEnd | undefined {
  if (readLedger(node).released[request.requestId] || readLedger(node).holds[request.requestId]) return undefined;
  if (windowClosed(request, now)) return { outcome: 'not-started', why };
  if (request.origin === 'cordon' && node.spec?.unschedulable !== true) return { outcome: 'withdrawn', why };
  return undefined;
}

/**
 * Ends `request`, which holds nothing: it leaves the admission line, and its own record (not that of a
 * reused id naming another node) says how it ended. A record already ended is left as it is.
 */
export async function endNeverHeld(
  deps: { readonly kube: KubeClient; readonly progress: EvacuationProgressStore; readonly namespace: string },
  request: Pick<ResolvedRequest, 'requestId' | 'nodeName'>,
  end: NeverHeldEnd,
  now: Date,
): Promise<void> {
  await leaveQueue(deps.kube, deps.namespace, request.requestId, now);
  const record = await deps.progress.find(request.requestId);
  if (!record || record.spec.nodeName !== request.nodeName || record.status?.endedAt !== undefined) return;
  await deps.progress.markEnded(request.requestId, now, end);
}

/**
 * Ends `request` as withdrawn when it still only waited for a slot — its record shows no phase past
 * MaintenanceScheduled, no Restore and no end — e.g. the `drainbridge evacuate` that drove it was stopped
 * (Ctrl-C) and handed it back. Returns whether it did. The same id run again takes its place anew.
 */
export async function withdrawWaiting(
  cluster: { readonly client: KubeClient; readonly namespace: string },
  request: Pick<ResolvedRequest, 'requestId' | 'nodeName'>,
  why: string,
  now: Date,
): Promise<boolean> {
  const { client, namespace } = cluster;
  const progress = new EvacuationProgressStore(client);
  const status = (await progress.find(request.requestId))?.status;
  if (!status || status.restore || status.endedAt !== undefined) return false;
  if (status.phase !== undefined && status.phase !== 'MaintenanceScheduled') return false;
  await endNeverHeld({ kube: client, progress, namespace }, request, { outcome: 'withdrawn', why }, now);
  return true;
}
