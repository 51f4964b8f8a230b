/**
 * The workflow's side of record expiry (lib/progress/expiry.ts): the steps that sweep (FinishRestore, and
 * Admit when it takes a hold) and how they tell a request that an execution still claims. A sweep that
 * fails is logged and left to the next one: it never fails the step that ran it.
 */

import type { EvacuationObject } from '../clients/kube/paths.ts';
import type { TaskTools } from '../lambda/task.ts';
import { sweepExpiredRecords } from '../progress/expiry.ts';
import type { WorkflowDeps } from './deps.ts';
import { isLiveOwner, readOwner } from './ownership.ts';

/** Whether an execution claims the record's request at `now`: a fresh owner mark, or one that cannot be read. */
export function claimedAt(record: EvacuationObject, now: Date): boolean {
  try {
    const owner = readOwner(record);
    return owner !== undefined && isLiveOwner(owner, now);
  } catch {
    return true;
  }
}

/** Deletes the Evacuation records whose requests were restored more than DRAINBRIDGE_RECORD_TTL_HOURS ago. */
export async function sweepRecords(deps: WorkflowDeps, tools: TaskTools): Promise<void> {
  const now = tools.now();
  try {
    const result = await sweepExpiredRecords(deps.kube, {
      now,
      ttlHours: deps.config.recordTtlHours,
      stillRunning: (record) => claimedAt(record, now),
    });
    if (result.deleted.length > 0) {
      tools.logger.info('expired Evacuation records deleted', {
        records: result.deleted,
        ttlHours: deps.config.recordTtlHours,
      });
    }
    for (const kept of result.kept) tools.logger.debug('expired Evacuation record kept', { ...kept });
  } catch (error) {
    tools.logger.warn('could not delete expired Evacuation records; the next sweep tries again', {
      reason: error instanceof Error ? error.message : String(error),
    });
  }
}
