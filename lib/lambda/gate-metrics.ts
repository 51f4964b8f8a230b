/**
 * The health gates' verdicts as CloudWatch metrics on Lambda: one EMF line per gate per round, in the
 * `drainbridge` namespace with the dimension `gate` — `GateOpen` (1 open, 0 closed, failing closed
 * included) and `GateEvaluationErrors` (1 when the gate could not be evaluated). No API call, no extra IAM:
 * the Admit function's log stream carries them, as `StepFailures` (middleware.ts). `drainbridge run` has
 * the same as Prometheus metrics (embedded/run/metrics.ts).
 */
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { type GateObservation, onGateVerdicts } from '../admission/index.ts';
import { isLambdaRuntime } from '../log/sink.ts';

export const GATE_METRICS = { open: 'GateOpen', errors: 'GateEvaluationErrors', dimension: 'gate' } as const;

/** A gate listener (onGateVerdicts) that publishes each verdict at once through `metrics`. */
export function gateVerdictsToEmf(metrics: Metrics): (observations: readonly GateObservation[]) => void {
  return (observations) => {
    // One document per gate, both metrics under its dimension (singleMetric() would publish at the first
    // addMetric and drop the second's dimension); publishing clears the dimension for the next gate.
    for (const { gate, open, failed } of observations) {
      metrics.addDimension(GATE_METRICS.dimension, gate);
      metrics.addMetric(GATE_METRICS.open, MetricUnit.Count, open ? 1 : 0);
      metrics.addMetric(GATE_METRICS.errors, MetricUnit.Count, failed ? 1 : 0);
      metrics.publishStoredMetrics();
    }
  };
}

/**
 * On Lambda, the Admit function's gate verdicts become EMF lines. Elsewhere nothing: `drainbridge run`, which
 * runs the same handler, has them on its /metrics (embedded/run/metrics.ts).
 */
export function publishGateVerdictsOnLambda(): void {
  if (!isLambdaRuntime()) return;
  onGateVerdicts(gateVerdictsToEmf(new Metrics({ namespace: 'drainbridge', serviceName: 'drainbridge' })));
}
