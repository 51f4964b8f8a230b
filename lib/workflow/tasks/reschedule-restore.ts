/**
 * A cloud notice moved later after its node was drained, and the new start is more than the notice
 * policy's gap away (`DRAINBRIDGE_NOTICE_RESTORE_GAP_SECONDS`, lib/progress/reschedule.ts): the node goes
 * back into service until it is evacuated again for the new start. The Restore machine's own steps
 * (release the hold, undo each branch's prepare), without ending the request: the hold is released
 * without a tombstone, so the same request takes the node again at its new start. Only what drainbridge
 * changed is undone — a person's cordon stays (lib/node/ledger.ts) — and nothing when other requests
 * still hold the node.
 */
import { noteReleased } from '../../admission/index.ts';
import type { EvacuationObject } from '../../clients/kube/paths.ts';
import type { TaskTools } from '../../lambda/task.ts';
import { readNodeOrFail, releaseHold, setPhase } from '../../node/hold.ts';
import { ledgerOf } from '../../node/ledger.ts';
import type { WorkflowDeps } from '../deps.ts';
import { restoredEvent } from '../outcomes.ts';
import type { TaskInput } from '../state.ts';
import { ledgerSettings } from './evacuate-steps.ts';
import { restoreBranchesTask } from './outcome-steps.ts';

/** Restores the node for the request's rescheduled start (idempotent: a retry finds the hold released and redoes only the branches). */
export async function restoreForReschedule(deps: WorkflowDeps, input: TaskInput, tools: TaskTools): Promise<void> {
  const { request } = input;
  const now = tools.now();
  const result = await releaseHold(deps.kube, request.nodeName, request.requestId, {
    now,
    ledger: ledgerSettings(deps.config, request.origin),
    keepRequest: true,
  });
  if (result.nodeGone) return;
  if (!result.last) {
    tools.logger.warn('rescheduled: hold released, other requests still hold the node', {
      requestId: request.requestId,
    });
    return;
  }
  await setPhase(deps.kube, request.nodeName, 'NodeUncordoned', now);
  await noteReleased(deps.kube, deps.config.namespace, request.nodeName, now).catch((caught: unknown) => {
    tools.logger.warn('could not note the free slot on the admission Lease', { reason: (caught as Error).message });
  });
  const branches = await restoreBranchesTask.run(input, deps, tools);
  // Told like any restore (a node back in service), and that the request goes on: consumers that count
  // one Node Restored per request see a second one after its final Restore.
  const until = `restored until its rescheduled start${request.notBefore ? ` (${request.notBefore})` : ''}; request ${request.requestId} evacuates it again before then`;
  await deps.publisher.publish(
    'Node Restored',
    restoredEvent(request, input.executionId, {
      lastHold: true,
      uncordoned: result.restored.uncordoned,
      novaServiceEnabled: branches.restoredFields.novaServiceEnabled ?? false,
      leftAlone: [...branches.leftAlone, until],
    }),
  );
  tools.logger.warn('node restored until its rescheduled start', {
    requestId: request.requestId,
    restored: result.restored,
    abortedMigrations: branches.abortedMigrations,
    leftAlone: branches.leftAlone,
  });
}

/**
 * A restore for a reschedule recorded but not done: the record was written (the move, the phase back to
 * MaintenanceScheduled) and the task stopped before it released the node. The retried PlanStart finds the
 * revision current, the last move `restored`, and the hold still there — and finishes the restore.
 */
export async function restorePending(deps: WorkflowDeps, input: TaskInput, record: EvacuationObject): Promise<boolean> {
  const status = record.status;
  if (status?.phase !== 'MaintenanceScheduled' || status.reschedules?.at(-1)?.outcome !== 'restored') return false;
  const ledger = ledgerOf(await readNodeOrFail(deps.kube, input.request.nodeName));
  return ledger.status === 'ok' && Object.hasOwn(ledger.ledger.holds, input.request.requestId);
}
