/**
 * One measured run: a fresh simulated cluster for the case, one tool drains the node, then the request
 * log is counted and the node is checked (nothing drainable may be left on it).
 */
import { matchesAll, parseSelector } from '../../lib/kube/selectors.ts';
import { startDrainbridgeCluster } from '../../sim/drainbridge.ts';
import type { Simulator } from '../../sim/index.ts';
import type { BenchCase } from './cases.ts';
import { type DrainbridgeOutcome, runDrainbridgeEvacuation } from './drainbridge.ts';
import { runKubectlDrain } from './kubectl.ts';
import { countByUser, type RequestCounts } from './requests.ts';

export type Tool = 'kubectl' | 'drainbridge';

/** One run of one tool on one fresh cluster. */
export interface RunResult {
  readonly tool: Tool;
  readonly case: string;
  readonly repetition: number;
  readonly ok: boolean;
  readonly wallMs: number;
  /** Pods still on the node that the drain should have removed (0 for a complete drain). */
  readonly podsLeft: number;
  /** Pods that left the node during the run. */
  readonly podsMoved: number;
  /** Requests by user during the run (the tool's own user; controllers do not use HTTP). */
  readonly requests: Record<string, RequestCounts>;
  /** drainbridge only: the Evacuate execution's counts. */
  readonly execution?: Pick<DrainbridgeOutcome, 'stats' | 'historyEvents' | 'notYetDone'>;
  /** Why the run failed, empty when ok. */
  readonly failure: string;
  /** Stopped by the time limit: `wallMs` is a lower bound of the time to drained. */
  readonly timedOut: boolean;
}

const PODS = { group: '', resource: 'pods' };

interface PodView {
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: { kind: string; controller?: boolean }[];
  };
  status?: { phase?: string };
}

/** Pods (namespace/name) on `node` that a drain with `podSelector` must remove: not DaemonSet, mirror or finished. */
function drainablePods(sim: Simulator, node: string, podSelector: string): string[] {
  const requirements = parseSelector(podSelector);
  return (sim.store.list(PODS, { fieldSelector: `spec.nodeName=${node}` }).items as unknown as PodView[])
    .filter((pod) => matchesAll(requirements, pod.metadata.labels))
    .filter((pod) => !pod.metadata.ownerReferences?.some((owner) => owner.controller && owner.kind === 'DaemonSet'))
    .filter((pod) => pod.metadata.annotations?.['kubernetes.io/config.mirror'] === undefined)
    .filter((pod) => pod.status?.phase !== 'Succeeded' && pod.status?.phase !== 'Failed')
    .map((pod) => `${pod.metadata.namespace}/${pod.metadata.name}`);
}

/** Runs `tool` on a fresh cluster for `benchCase`; the cluster is stopped before this resolves. */
export async function runOnce(
  benchCase: BenchCase,
  tool: Tool,
  repetition: number,
  settings: { kubectl: string; timeoutMs: number },
): Promise<RunResult> {
  const cluster = await startDrainbridgeCluster({ scenario: benchCase.scenario, speed: benchCase.speed });
  try {
    const { sim } = cluster;
    const before = drainablePods(sim, benchCase.node, benchCase.drainOptions.podSelector);
    const mark = sim.requestLog.mark();
    const base = { tool, case: benchCase.name, repetition };
    let outcome: {
      ok: boolean;
      wallMs: number;
      failure: string;
      timedOut: boolean;
      execution?: RunResult['execution'];
      endedAt: number;
    };
    if (tool === 'kubectl') {
      const run = await runKubectlDrain(settings.kubectl, cluster.adminKubeconfigPath, benchCase.node, {
        flags: benchCase.kubectlFlags,
        timeoutMs: settings.timeoutMs,
      });
      const failure = run.ok ? '' : `exit ${run.exitCode}${run.timedOut ? ' (time limit)' : ''}: ${run.stderrTail}`;
      outcome = { ok: run.ok, wallMs: run.wallMs, failure, timedOut: run.timedOut, endedAt: Date.now() };
    } else {
      const run = await runDrainbridgeEvacuation(cluster.kubeconfigPath, benchCase.node, {
        drain: benchCase.drainOptions,
        timeoutMs: settings.timeoutMs,
      });
      const { stats, historyEvents, notYetDone } = run;
      outcome = {
        ok: run.ok,
        wallMs: run.wallMs,
        failure: run.failure,
        timedOut: run.timedOut,
        execution: { stats, historyEvents, notYetDone },
        endedAt: run.endedAt,
      };
    }
    // Only what the tool asked while it was measured (an aborted execution may still be retrying).
    const { endedAt, ...measured } = outcome;
    const requests = countByUser(sim.requestLog.all({ since: mark }).filter((record) => record.at <= endedAt));
    const left = drainablePods(sim, benchCase.node, benchCase.drainOptions.podSelector);
    const moved = before.filter((name) => !left.includes(name)).length;
    return { ...base, ...measured, requests, podsLeft: left.length, podsMoved: moved };
  } finally {
    await cluster.stop();
  }
}
