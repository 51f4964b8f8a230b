/**
 * Health gates: what admission asks before it admits a node, beyond its slots and limits — kured's
 * blockers for a fleet. Asked only for a request about to be admitted (not for every one waiting behind
 * it), again at each of its retries while one is closed (it keeps its place in line), never once its node
 * is held: a started evacuation finishes.
 *
 *   gate.ts            the Gate interface; running gates with their timeouts, failing closed
 *   registry.ts        kind → the module that builds it
 *   alerts.ts          Prometheus alerts (kured's filters, label matchers)
 *   promql.ts          a PromQL expression that must be empty or zero
 *   prometheus-api.ts  the Prometheus HTTP API client
 *   alertmanager.ts    Alertmanager's active alerts, silences and inhibitions honoured (same filters)
 *   alertmanager-api.ts  the Alertmanager API v2 client
 *   cluster.ts         NotReady nodes, PodDisruptionBudgets at zero, the node's failure domain
 *   http.ts            a URL answering 200
 *   observed.ts        each round of verdicts told to the metrics (run's /metrics, EMF on Lambda)
 *
 * DRAINBRIDGE_GATES' schema (one per kind, validated before anything starts) and the label matchers are
 * lib/model/gate-spec.ts and label-matchers.ts: the configuration reads them, and it sits below admission.
 */
import type { V1Node } from '@kubernetes/client-node';
import type { KubeClient } from '../../clients/kube/client.ts';
import type { GateSpec } from '../../model/gate-spec.ts';
import { blockingReason, type NamedVerdict, runGates } from './gate.ts';
import { gatesOf } from './registry.ts';

export { type GateSpec, gateSpecs } from '../../model/gate-spec.ts';
export type { NamedVerdict } from './gate.ts';
export { type GateListener, type GateObservation, onGateVerdicts } from './observed.ts';

/** Every configured gate's verdict on admitting `node` now (none configured: none). */
export function checkGates(
  specs: readonly GateSpec[] | undefined,
  at: { readonly client: KubeClient; readonly node: V1Node; readonly now: Date },
): Promise<NamedVerdict[]> {
  if (!specs || specs.length === 0) return Promise.resolve([]);
  return runGates(gatesOf(specs), at);
}

/** Why `node` may not be admitted now by the gates, or undefined when every gate is open. */
export async function gateReason(
  specs: readonly GateSpec[] | undefined,
  at: { readonly client: KubeClient; readonly node: V1Node; readonly now: Date },
): Promise<string | undefined> {
  return blockingReason(await checkGates(specs, at));
}
