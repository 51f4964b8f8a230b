/**
 * A cloud notice's deadline is when the instance goes down (a GCE preemption: 30 s after the notice, an
 * EC2 spot interruption: two minutes, an Azure Preempt: about 30 s). A pod whose grace period outlasts
 * it would be killed mid-shutdown by the power-off, so its eviction asks for the time that is left
 * instead (as AWS Node Termination Handler's `--pod-termination-grace-period` does for spot), and the
 * cut is reported (a node Event, eviction-pass.ts). Requests of other origins keep their grace periods:
 * their deadline is when drainbridge gives up, not when the node goes. Pure.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { NOTICE_PROVIDERS } from '../../model/notice.ts';
import type { ResolvedRequest } from '../../model/request.ts';

/** Kubernetes' default terminationGracePeriodSeconds. */
const KUBERNETES_DEFAULT_GRACE_SECONDS = 30;

/** Seconds a cut grace period ends before the deadline, so that the drain sees the pods gone before the power-off. */
export const GRACE_MARGIN_SECONDS = 3;

export interface GraceFit {
  /** The grace period to ask for: the request's (-1: the pod's own), or the time left when that was shorter. */
  readonly seconds: number;
  /** Set when cut: the grace period the pod would have had. */
  readonly cutFrom?: number;
}

function isCloudNotice(request: ResolvedRequest): boolean {
  return (NOTICE_PROVIDERS as readonly string[]).includes(request.origin);
}

/** The grace period one eviction asks for (see the module comment). */
export function fitGrace(pod: V1Pod, request: ResolvedRequest, now: Date): GraceFit {
  const asked = request.drain.gracePeriodSeconds;
  if (!request.deadline || !isCloudNotice(request)) return { seconds: asked };
  const wanted = asked >= 0 ? asked : (pod.spec?.terminationGracePeriodSeconds ?? KUBERNETES_DEFAULT_GRACE_SECONDS);
  const left = Math.floor((Date.parse(request.deadline) - now.getTime()) / 1000);
  const fits = left - GRACE_MARGIN_SECONDS;
  if (wanted <= fits) return { seconds: asked };
  // Never 0 (an immediate kill): at least one second to react to SIGTERM, even past the deadline.
  return { seconds: Math.max(1, fits), cutFrom: wanted };
}

/** The node Event's sentence for the cuts of one round. */
export function graceCutMessage(
  request: ResolvedRequest,
  cuts: readonly { readonly pod: string; readonly from: number; readonly to: number }[],
): string {
  const listed = cuts.map((cut) => `${cut.pod} ${cut.from}→${cut.to} s`).join(', ');
  const text = `grace periods cut to fit the instance's deadline ${request.deadline} (${request.reason}): ${listed}`;
  return text.length <= 1024 ? text : `${text.slice(0, 1021)}...`;
}
