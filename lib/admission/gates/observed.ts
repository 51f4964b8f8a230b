/**
 * Who hears each round of gate verdicts: `drainbridge run`'s /metrics (embedded/run/metrics.ts) and, on
 * Lambda, the Admit function's EMF lines (lib/lambda/gate-metrics.ts). A listener per process, registered
 * at start; a listener that throws is ignored — a metric never changes an admission.
 */

/** One gate's answer as a metric needs it. */
export interface GateObservation {
  readonly gate: string;
  readonly open: boolean;
  /** The gate could not be evaluated (timeout, error, garbage): closed, failing closed. */
  readonly failed: boolean;
  readonly at: Date;
}

export type GateListener = (observations: readonly GateObservation[]) => void;

const listeners = new Set<GateListener>();

/** Calls `listener` with every round of verdicts this process evaluates; returns its removal. */
export function onGateVerdicts(listener: GateListener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** Tells every listener (runGates calls it). */
export function reportGateVerdicts(observations: readonly GateObservation[]): void {
  if (observations.length === 0) return;
  for (const listener of listeners) {
    try {
      listener(observations);
    } catch {
      // A metric never stands in the way of an admission.
    }
  }
}
