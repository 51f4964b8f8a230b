/**
 * The safety blockers that refuse an evacuation before its node is cordoned, whatever asked for it (the
 * CLI, a NodeMaintenance, a notice, a window): as NMO's webhook refuses a NodeMaintenance whose node's
 * loss would cost etcd quorum. The blocker goes on the request's record (the `pods` branch, where
 * `drainbridge plan` reports it) so that Evacuation Failed names it with its code; the node is not touched.
 */

import type { V1Node } from '@kubernetes/client-node';
import { observeQuorumBlocker } from '../branches/pods/quorum-guard.ts';
import { EvacuationRefused } from '../errors/index.ts';
import type { ResolvedRequest } from '../model/request.ts';
import { ledgerOf } from '../node/ledger.ts';
import type { WorkflowDeps } from './deps.ts';

const NOTHING_MOVED = { total: 0, moved: 0, inFlight: 0, skipped: 0 } as const;

/**
 * Throws EvacuationRefused when a safety blocker holds for `node` (as just read) now. Only for a node the
 * request does not hold yet, nor was released from (a late duplicate is dropped by the caller). Reads
 * the etcd pods (and the nodes only where they stand in for the members);
 * writes nothing but the refused request's record.
 */
export async function refuseIfUnsafe(
  deps: Pick<WorkflowDeps, 'kube' | 'progress'>,
  request: ResolvedRequest,
  node: V1Node,
  now: Date,
): Promise<void> {
  const ledger = ledgerOf(node);
  const { requestId } = request;
  // An unreadable ledger is for admission to report (RecordUnreadable), before anything is written.
  if (ledger.status !== 'ok') return;
  if (Object.hasOwn(ledger.ledger.holds, requestId) || Object.hasOwn(ledger.ledger.released, requestId)) return;
  const blocker = await observeQuorumBlocker(deps.kube, node);
  if (!blocker) return;
  await deps.progress.ensure(request);
  await deps.progress.recordProgress(requestId, 'pods', {
    progress: NOTHING_MOVED,
    blockers: [blocker],
    timing: { now, done: false },
  });
  throw new EvacuationRefused(`node ${request.nodeName} was not cordoned: [${blocker.code}] ${blocker.reason}`);
}
