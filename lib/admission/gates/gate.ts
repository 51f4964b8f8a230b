/**
 * A health gate: one question admission asks before it admits a node ("is the fleet healthy enough to
 * take the next one?"), as kured's `RebootBlocker.isBlocked()`. Each kind is one module (alerts.ts,
 * promql.ts, http.ts, cluster.ts) behind this interface; the registry (registry.ts) builds them from the
 * configuration. Running them (runGates) gives each its timeout and turns every failure to answer into a
 * closed gate that says why: a gate that cannot be evaluated blocks.
 */
import type { V1Node } from '@kubernetes/client-node';
import type { KubeClient } from '../../clients/kube/client.ts';
import { reportGateVerdicts } from './observed.ts';

export interface GateContext {
  readonly client: KubeClient;
  /** The node about to be admitted, as read. */
  readonly node: V1Node;
  readonly now: Date;
  /** Aborted when the gate's timeout passes: a gate passes it on to its requests. */
  readonly signal: AbortSignal;
}

/** What one gate says: go, or blocked and why (`blocked by alert KubeNodeNotReady{node="node-7"}`). */
export type GateVerdict =
  | { readonly open: true; readonly why: string }
  | { readonly open: false; readonly why: string };

export interface Gate {
  /** As configured, else its kind: shown before its reason. */
  readonly name: string;
  readonly timeoutSeconds: number;
  check(context: GateContext): Promise<GateVerdict>;
}

export interface NamedVerdict {
  readonly gate: string;
  readonly open: boolean;
  readonly why: string;
}

export const open = (why: string): GateVerdict => ({ open: true, why });
export const blocked = (why: string): GateVerdict => ({ open: false, why });

/** A verdict, and whether the gate failed to answer (for the metrics: observed.ts). */
interface RunVerdict extends NamedVerdict {
  readonly failed: boolean;
}

/** The gate's verdict within its timeout; a timeout, an error or garbage is a closed gate naming it. */
async function runGate(gate: Gate, context: Omit<GateContext, 'signal'>): Promise<RunVerdict> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<GateVerdict>((resolve) => {
    timer = setTimeout(() => {
      controller.abort();
      resolve(blocked(`could not be evaluated within its ${gate.timeoutSeconds}s timeout (fails closed)`));
    }, gate.timeoutSeconds * 1000);
  });
  try {
    const verdict = await Promise.race([gate.check({ ...context, signal: controller.signal }), timedOut]);
    return { gate: gate.name, ...verdict, failed: controller.signal.aborted };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { gate: gate.name, open: false, why: `could not be evaluated (fails closed): ${message}`, failed: true };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Every gate's verdict, asked at once (each within its own timeout), in configuration order; the metrics
 * hear them (observed.ts).
 */
export async function runGates(gates: readonly Gate[], context: Omit<GateContext, 'signal'>): Promise<NamedVerdict[]> {
  const verdicts = await Promise.all(gates.map((gate) => runGate(gate, context)));
  const at = new Date();
  reportGateVerdicts(verdicts.map(({ gate, open, failed }) => ({ gate, open, failed, at })));
  return verdicts.map(({ failed: _failed, ...verdict }) => verdict);
}

/** The first closed gate as the reason a request waits (`gate alerts: blocked by alert …`); undefined when all are open. */
export function blockingReason(verdicts: readonly NamedVerdict[]): string | undefined {
  const closed = verdicts.filter((verdict) => !verdict.open);
  if (closed.length === 0) return undefined;
  const first = closed[0] as NamedVerdict;
  const more =
    closed.length > 1 ? ` (and ${closed.length - 1} more gate(s) closed: \`drainbridge plan\` shows them)` : '';
  return `health gate ${first.gate}: ${first.why}${more}`;
}
