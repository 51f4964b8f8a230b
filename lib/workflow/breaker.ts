/**
 * The circuit breaker's side of a failed evacuation (lib/admission/breaker.ts decides): the failure is
 * noted on the admission Lease, and when it trips the breaker people are told — `Admission Paused` on the
 * bus, a Warning Event on the node whose failure paused admission (`kubectl describe node`,
 * `kubectl get events`) and an error in the log. Best effort: the evacuation has failed already, and a
 * breaker that cannot be written must not hide that; what went wrong is logged. And the other way:
 * `drainbridge resume` writes only the Lease (it runs anywhere, with no bus at hand), so the first Admit
 * step after it publishes `Admission Resumed` on the workflow's bus — EventBridge on AWS, `drainbridge
 * run`'s own bus embedded — once (announceResume).
 */
import type { V1Lease } from '@kubernetes/client-node';
import { type BreakerRecord, claimResumeAnnouncement, noteEvacuationFailed } from '../admission/index.ts';
import type { WorkflowDeps } from '../branches/contract/workflow-deps.ts';
import type { Logger } from '../log/logger.ts';
import type { ResolvedRequest } from '../model/request.ts';
import { emitNodeEvent } from '../node/kube-events.ts';
import { pausedEvent } from './outcomes.ts';

/** Failures that say nothing about the fleet: a person stopped the evacuation. */
const NOT_COUNTED = new Set(['EvacuationAborted']);

type Tools = { readonly logger: Logger; readonly now: () => Date };

/**
 * Notes the failure of `request` (it held its node: a request that failed while it waited in line never
 * started an evacuation) on the breaker, and tells people when this failure paused admission.
 */
export async function noteFailureOnBreaker(
  deps: WorkflowDeps,
  failed: { readonly request: ResolvedRequest; readonly executionId: string; readonly errorName: string },
  tools: Tools,
): Promise<void> {
  const setting = deps.config.breaker;
  const { request, errorName } = failed;
  if (setting === undefined || NOT_COUNTED.has(errorName)) return;
  try {
    const failure = {
      at: tools.now().toISOString(),
      requestId: request.requestId,
      node: request.nodeName,
      error: errorName,
    };
    const noted = await noteEvacuationFailed(deps.kube, deps.config.namespace, failure, { setting, clock: tools.now });
    if (!noted.recorded)
      tools.logger.warn(
        'the circuit breaker could not note the failure (the admission Lease stayed locked or is gone)',
      );
    if (noted.paused) await tellPaused(deps, { ...failed, paused: noted.paused }, tools);
  } catch (caught) {
    tools.logger.warn('the circuit breaker could not note the failure', { reason: (caught as Error).message });
  }
}

/** The log, `Admission Paused` on the bus and a Warning Event on the node. */
async function tellPaused(
  deps: WorkflowDeps,
  tripped: { readonly request: ResolvedRequest; readonly executionId: string; readonly paused: BreakerRecord },
  tools: Tools,
): Promise<void> {
  const { request, paused } = tripped;
  const reason = paused.reason ?? 'the circuit breaker tripped';
  tools.logger.error('admission paused by the circuit breaker', { reason });
  const failures = paused.failures.map((seen) => ({
    requestId: seen.requestId,
    nodeName: seen.node,
    error: seen.error,
    at: seen.at,
  }));
  await deps.publisher.publish(
    'Admission Paused',
    pausedEvent(request, tripped.executionId, {
      pausedAt: paused.pausedAt ?? tools.now().toISOString(),
      reason,
      failures,
    }),
  );
  const node = await deps.kube.getNode(request.nodeName).catch(() => undefined);
  const event = { reason: 'AdmissionPaused' as const, type: 'Warning' as const, message: reason };
  const problem = node ? await emitNodeEvent(deps.kube, node, event, tools.now()) : undefined;
  if (problem) tools.logger.warn('could not record the AdmissionPaused event', { reason: problem.message });
}

/**
 * Publishes `Admission Resumed` when `drainbridge resume` closed the breaker and nobody announced it yet
 * (`lease`: the admission Lease as the Admit step read it; nothing else is read unless one is due). Best
 * effort: a request waiting for admission must not fail on an announcement.
 */
export async function announceResume(deps: WorkflowDeps, lease: V1Lease | undefined, tools: Tools): Promise<void> {
  try {
    const resumed = await claimResumeAnnouncement(deps.kube, deps.config.namespace, { lease, now: tools.now() });
    if (resumed?.resumedAt === undefined) return;
    tools.logger.info('admission resumed', { resumedBy: resumed.resumedBy });
    await deps.publisher.publish('Admission Resumed', {
      version: '1',
      requestId: `admission-resumed.${Date.parse(resumed.resumedAt)}`,
      requester: resumed.resumedBy ?? 'drainbridge resume',
      resumedAt: resumed.resumedAt,
      ...(resumed.resumedFrom ? { pausedAt: resumed.resumedFrom.pausedAt } : {}),
      reason: resumed.resumedFrom?.reason ?? 'admission was paused by the circuit breaker',
    });
  } catch (caught) {
    tools.logger.warn('could not announce that admission resumed', { reason: (caught as Error).message });
  }
}
