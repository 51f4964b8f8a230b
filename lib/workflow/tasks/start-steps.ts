/**
 * PlanStart: for a request with notBefore, when its evacuation starts (start-time.ts) on an estimate of
 * the node's evacuation (estimate.ts). The Evacuate machine then waits on the timestamp this returns
 * (a Wait state with TimestampPath) and either starts or plans again. Before admission: it changes no
 * node (except to restore one for a notice moved far away, under the notice policy's restore gap:
 * reschedule-restore.ts); it records the start in the request's Evacuation record and publishes Evacuation Progress
 * (phase MaintenanceScheduled, `timing`) when the start or the estimate changed.
 */

import type { EvacuationStart } from '../../clients/kube/paths.ts';
import { SkipEvent } from '../../errors/index.ts';
import type { TaskSpec, TaskTools } from '../../lambda/task.ts';
import type { Estimate } from '../../model/estimate.ts';
import type { ResolvedRequest } from '../../model/request.ts';
import { readNodeOrFail } from '../../node/hold.ts';
import { readLedger } from '../../node/ledger.ts';
import { depsFromEnvironment, type WorkflowDeps } from '../deps.ts';
import { estimateNode } from '../estimate-observe.ts';
import { progressEvent } from '../outcomes.ts';
import { lateWarning, planStart, waitTimestamp } from '../start-time.ts';
import { TaskInput } from '../state.ts';
import { restoreForReschedule, restorePending } from './reschedule-restore.ts';

/** What PlanStart hands the machine (at `$.start`): when its Wait ends, and whether the evacuation starts then. */
export interface PlannedStart {
  /** When the Wait state ends (the start, or earlier to plan again). */
  readonly waitUntil: string;
  /** True when the wait ends at the start (the Choice after it admits). */
  readonly final: boolean;
  /** When the evacuation starts (the machine makes it `startedAt`). */
  readonly startAt: string;
  readonly estimateSeconds: number;
  readonly late: boolean;
}

/** A maintenance that ended before it started leaves a tombstone (lib/node): nothing to wait for. */
async function assertNotEnded(deps: WorkflowDeps, request: ResolvedRequest): Promise<void> {
  const node = await readNodeOrFail(deps.kube, request.nodeName);
  if (readLedger(node).released[request.requestId]) {
    throw new SkipEvent(
      `request ${request.requestId} ended before its evacuation started; node ${request.nodeName} is left alone`,
    );
  }
}

/** The estimate, or none when the cluster (or Nova) cannot be planned now: starting on the margin alone beats not starting. */
async function estimateOrNone(deps: WorkflowDeps, request: ResolvedRequest, tools: TaskTools): Promise<Estimate> {
  try {
    return await estimateNode(deps.config, deps.kube, { name: request.nodeName, options: request.drain });
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    tools.logger.warn('evacuation estimate failed; starting on the margin alone', { reason });
    return { seconds: 0, branches: [{ branch: 'pods', seconds: 0, basis: `no estimate: ${reason}` }] };
  }
}

function sameStart(a: EvacuationStart | undefined, b: EvacuationStart): boolean {
  return a?.startAt === b.startAt && a.estimateSeconds === b.estimateSeconds && a.late === b.late;
}

/** Keeps the start in the record and announces it when it changed. */
async function recordStart(deps: WorkflowDeps, input: TaskInput, start: EvacuationStart, at: Date): Promise<void> {
  const record = await deps.progress.ensure(input.request, at);
  if (sameStart(record.status?.start, start)) return;
  await deps.progress.recordStart(input.request.requestId, start);
  if (!record.status?.phase) await deps.progress.setPhase(input.request.requestId, 'MaintenanceScheduled', at);
  await deps.publisher.publish('Evacuation Progress', {
    ...progressEvent(input.request, input.executionId, { phase: 'MaintenanceScheduled', progress: {}, blockers: [] }),
    timing: start,
  });
}

/**
 * A request that arrives again with a later notice revision (a rescheduled notice) moves the start of the
 * waiting evacuation, or — started already — is noted and leaves the node drained, or, under the notice
 * policy's restore gap, restores the node and plans the evacuation again; an execution for an older
 * revision, or one that moves nothing, ends here before it plans (lib/progress/reschedule.ts). The record
 * is written before the node is restored: stopped in between, the node stays drained (the safe side)
 * until the retry finishes the restore (restorePending).
 */
async function followRevision(deps: WorkflowDeps, input: TaskInput, tools: TaskTools): Promise<void> {
  const { request } = input;
  const now = tools.now();
  const record = await deps.progress.ensure(request, now);
  const policy = { restoreGapSeconds: deps.config.startTiming.noticeRestoreGapSeconds };
  const verdict = await deps.progress.reviseStart(request, now, policy);
  if (verdict.kind === 'current') {
    if (await restorePending(deps, input, record)) await restoreForReschedule(deps, input, tools);
    return;
  }
  if (verdict.kind === 'superseded' || verdict.kind === 'unchanged') throw new SkipEvent(verdict.message);
  const { message } = verdict.reschedule;
  tools.logger.warn('maintenance rescheduled', { requestId: request.requestId, ...verdict.reschedule });
  if (verdict.kind === 'kept') throw new SkipEvent(message);
  if (verdict.kind === 'restore') await restoreForReschedule(deps, input, tools);
}

export const planStartTask: TaskSpec<TaskInput, PlannedStart, WorkflowDeps> = {
  name: 'planStart',
  input: TaskInput,
  deps: depsFromEnvironment,
  run: async (input, deps, tools) => {
    const { request } = input;
    if (!request.notBefore) throw new Error('planStart needs a request with notBefore');
    await assertNotEnded(deps, request);
    await followRevision(deps, input, tools);
    const estimate = await estimateOrNone(deps, request, tools);
    const now = tools.now();
    const { marginSeconds } = deps.config.startTiming;
    const decision = planStart({
      notBefore: new Date(request.notBefore),
      now,
      estimateSeconds: estimate.seconds,
      marginSeconds,
    });
    const start: EvacuationStart = {
      notBefore: request.notBefore,
      startAt: waitTimestamp(decision.startAt),
      estimateSeconds: estimate.seconds,
      marginSeconds,
      late: decision.late,
      basis: estimate.branches.map((b) => b.basis),
      ...(decision.late ? { warning: lateWarning(request.nodeName, decision, estimate.seconds) } : {}),
    };
    tools.logger.info('evacuation start planned', { ...start, final: decision.final });
    if (start.warning) tools.logger.warn(start.warning);
    await recordStart(deps, input, start, now);
    return {
      waitUntil: waitTimestamp(decision.waitUntil),
      final: decision.final,
      startAt: start.startAt,
      estimateSeconds: estimate.seconds,
      late: decision.late,
    };
  },
};
