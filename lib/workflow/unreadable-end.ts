/**
 * A Restore for a request the node agent ended because the notice's source stayed unreadable past the
 * notice's end or the configured limit (lib/sources/clouds/unreadable.ts; the Maintenance Ended carries
 * `unreadableSince`): the maintenance may not be over at all, so this is said where an operator looks —
 * a Warning Event on the node (`kubectl describe node`), the Evacuation record (`drainbridge status`
 * shows it) and a log line. The agent logged and counted it too (drainbridge_notice_unreadable_ends_total).
 * Best effort: a report that cannot be written never stops the Restore.
 */

import type { TaskTools } from '../lambda/task.ts';
import type { ResolvedRequest } from '../model/request.ts';
import { readNodeOrFail } from '../node/hold.ts';
import { emitNodeEvent } from '../node/kube-events.ts';
import type { WorkflowDeps } from './deps.ts';

/** The sentence for the node Event and `status`. Pure. */
export function unreadableEndMessage(request: ResolvedRequest, since: string): string {
  const text = `maintenance request ${request.requestId} ended because its notice's source has been unreadable since ${since} (${request.reason}); the maintenance may not be over — check the source (the node agent's log) before relying on node ${request.nodeName}`;
  return text.length <= 1024 ? text : `${text.slice(0, 1021)}...`;
}

export async function reportUnreadableEnd(
  deps: WorkflowDeps,
  request: ResolvedRequest,
  tools: TaskTools,
): Promise<void> {
  const since = request.unreadableSince;
  if (!since) return;
  const message = unreadableEndMessage(request, since);
  tools.logger.warn('maintenance ended on an unreadable notice source', { requestId: request.requestId, since });
  try {
    await deps.progress.recordSourceUnreadable(request.requestId, { since, message }, tools.now());
    const node = await readNodeOrFail(deps.kube, request.nodeName);
    const failed = await emitNodeEvent(
      deps.kube,
      node,
      { reason: 'NoticeSourceUnreadable', message, type: 'Warning' },
      tools.now(),
    );
    if (failed) tools.logger.warn('could not write the node Event', { reason: failed.message });
  } catch (error) {
    tools.logger.warn('could not report the unreadable source', { reason: (error as Error).message });
  }
}
