/** Builds the outcome events' details from what the workflow knows (pure). */

import type {
  AdmissionPausedEvent,
  EvacuationFailedEvent,
  EvacuationProgressEvent,
  EvacuationSucceededEvent,
  NodeRestoredEvent,
  Phase,
} from '../bus/contracts/contracts.ts';
import type { BranchProgress } from '../model/pass.ts';
import type { Blocker, BranchName } from '../model/plan.ts';
import type { ResolvedRequest } from '../model/request.ts';

type Common = Pick<
  EvacuationSucceededEvent,
  'version' | 'requestId' | 'requester' | 'target' | 'nodeName' | 'executionId'
>;

function common(request: ResolvedRequest, executionId: string): Common {
  return {
    version: '1',
    requestId: request.requestId,
    requester: request.requester,
    target: request.target as Common['target'],
    nodeName: request.nodeName,
    executionId,
  };
}

export type ProgressByBranch = Partial<Record<BranchName, BranchProgress>>;

export function progressEvent(
  request: ResolvedRequest,
  executionId: string,
  update: { phase: Phase; progress: ProgressByBranch; blockers: readonly Blocker[] },
): EvacuationProgressEvent {
  return {
    ...common(request, executionId),
    phase: update.phase,
    progress: update.progress,
    blockers: [...update.blockers],
  };
}

export function succeededEvent(
  request: ResolvedRequest,
  executionId: string,
  outcome: { progress: ProgressByBranch; startedAt: string; now: Date },
): EvacuationSucceededEvent {
  const durationSeconds = Math.max(0, (outcome.now.getTime() - Date.parse(outcome.startedAt)) / 1000);
  return { ...common(request, executionId), progress: outcome.progress, durationSeconds };
}

export function failedEvent(
  request: ResolvedRequest,
  executionId: string,
  failure: { phase: Phase; error: { name: string; message: string }; blockers: readonly Blocker[] },
): EvacuationFailedEvent {
  return {
    ...common(request, executionId),
    phase: failure.phase,
    error: failure.error,
    blockers: [...failure.blockers],
  };
}

/** The circuit breaker tripped on `request`'s failure (lib/workflow/breaker.ts publishes it). */
export function pausedEvent(
  request: ResolvedRequest,
  executionId: string,
  paused: Pick<AdmissionPausedEvent, 'pausedAt' | 'reason' | 'failures'>,
): AdmissionPausedEvent {
  return { ...common(request, executionId), ...paused, failures: [...paused.failures] };
}

export function restoredEvent(
  request: ResolvedRequest,
  executionId: string,
  restored: Pick<NodeRestoredEvent, 'lastHold' | 'uncordoned' | 'novaServiceEnabled' | 'leftAlone'>,
): NodeRestoredEvent {
  return { ...common(request, executionId), ...restored };
}

/**
 * Step Functions hands a caught error to the next state as `{ Error, Cause }`, where Cause is the
 * Lambda error serialised as JSON (`{"errorType","errorMessage",…}`) or plain text.
 */
export function errorFromCatch(caught: { Error?: string; Cause?: string }): { name: string; message: string } {
  const name = caught.Error ?? 'Error';
  const cause = caught.Cause ?? '';
  try {
    const parsed = JSON.parse(cause) as { errorMessage?: unknown };
    if (typeof parsed.errorMessage === 'string') return { name, message: parsed.errorMessage };
  } catch {
    // not JSON: a plain-text cause
  }
  return { name, message: cause || name };
}
