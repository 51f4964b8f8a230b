/**
 * The circuit breaker's side of a failed evacuation (lib/admission/breaker.ts decides): the failure is
 * noted on the admission Lease, and when it trips the breaker people are told — a Warning Event on the
 * node whose failure paused admission (`kubectl describe node`, `kubectl get events`) and the log line.
 * Best effort: the evacuation has failed already, and a breaker that cannot be written must not hide
 * that; what went wrong is logged.
 */
import { noteEvacuationFailed } from '../admission/index.ts';
import type { ResolvedRequest } from '../domain/request.ts';
import type { Logger } from '../log/logger.ts';
import { emitNodeEvent } from '../node/events.ts';
import type { WorkflowDeps } from './workflow-deps.ts';

/** Failures that say nothing about the fleet: a person stopped the evacuation. */
const NOT_COUNTED = new Set(['EvacuationAborted']);

/**
 * Notes the failure of `request` (it held its node: a request that failed while it waited in line never
 * started an evacuation) on the breaker; returns the reason when this failure paused admission.
 */
export async function noteFailureOnBreaker(
  deps: WorkflowDeps,
  request: ResolvedRequest,
  errorName: string,
  tools: { readonly logger: Logger; readonly now: () => Date },
): Promise<string | undefined> {
  const setting = deps.config.breaker;
  if (setting === undefined || NOT_COUNTED.has(errorName)) return undefined;
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
    if (!noted.tripped || noted.reason === undefined) return undefined;
    tools.logger.error('admission paused by the circuit breaker', { reason: noted.reason });
    const node = await deps.kube.getNode(request.nodeName).catch(() => undefined);
    const problem = node
      ? await emitNodeEvent(
          deps.kube,
          node,
          { reason: 'AdmissionPaused', type: 'Warning', message: noted.reason },
          tools.now(),
        )
      : undefined;
    if (problem) tools.logger.warn('could not record the AdmissionPaused event', { reason: problem.message });
    return noted.reason;
  } catch (caught) {
    tools.logger.warn('the circuit breaker could not note the failure', { reason: (caught as Error).message });
    return undefined;
  }
}
