/**
 * One measured run: a fresh simulated cluster for the case, one tool drains the node, then the request
 * log is counted and the node is checked (nothing drainable may be left on it).
 */
import { startDrainbridgeCluster } from '../../sim/drainbridge.ts';
import type { BenchCase } from './cases.ts';
import { drainablePods, floorInputs } from './cluster-view.ts';
import { costOf, type EvacuationCost, lambdaMemoryMb } from './cost.ts';
import { type DrainbridgeOutcome, runDrainbridgeEvacuation } from './drainbridge.ts';
import { type PhysicalFloor, physicalFloor } from './floor.ts';
import { runKubectlDrain } from './kubectl.ts';
import { runOracleDrain } from './oracle.ts';
import { countByUser, countKinds, type RequestCounts, type RequestKinds } from './requests.ts';

/** kubectl drain, a drainbridge evacuation, or the oracle that checks the physical floor. */
export type Tool = 'kubectl' | 'drainbridge' | 'oracle';

/** A drainbridge run's Evacuate execution: its counts, what it used and the bill at list prices. */
export type ExecutionCounts = Pick<
  DrainbridgeOutcome,
  'stats' | 'historyEvents' | 'notYetDone' | 'executions' | 'usage'
> & {
  readonly cost: EvacuationCost;
};

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
  /** The same requests by kind (`verb resource`), every user added up. */
  readonly kinds: RequestKinds;
  /** The physical floor of this run's fresh cluster (the same for every run of a case). */
  readonly floor: PhysicalFloor;
  /** drainbridge only: the Evacuate execution's counts and what AWS would bill for them. */
  readonly execution?: ExecutionCounts;
  /** Why the run failed, empty when ok. */
  readonly failure: string;
  /** Stopped by the time limit: `wallMs` is a lower bound of the time to drained. */
  readonly timedOut: boolean;
}

interface Outcome {
  ok: boolean;
  wallMs: number;
  failure: string;
  timedOut: boolean;
  execution?: RunResult['execution'];
  endedAt: number;
}

type Cluster = Awaited<ReturnType<typeof startDrainbridgeCluster>>;

async function runTool(
  cluster: Cluster,
  benchCase: BenchCase,
  tool: Tool,
  settings: { kubectl: string; timeoutMs: number },
): Promise<Outcome> {
  if (tool === 'kubectl') {
    const run = await runKubectlDrain(settings.kubectl, cluster.adminKubeconfigPath, benchCase.node, {
      flags: benchCase.kubectlFlags,
      timeoutMs: settings.timeoutMs,
    });
    const failure = run.ok ? '' : `exit ${run.exitCode}${run.timedOut ? ' (time limit)' : ''}: ${run.stderrTail}`;
    return { ok: run.ok, wallMs: run.wallMs, failure, timedOut: run.timedOut, endedAt: Date.now() };
  }
  if (tool === 'oracle') {
    const podSelector = benchCase.drainOptions.podSelector;
    return runOracleDrain(cluster, benchCase.node, { podSelector, timeoutMs: settings.timeoutMs });
  }
  const run = await runDrainbridgeEvacuation(cluster.kubeconfigPath, benchCase.node, {
    drain: benchCase.drainOptions,
    timeoutMs: settings.timeoutMs,
  });
  const { stats, historyEvents, notYetDone, executions, usage } = run;
  const cost = costOf(usage, lambdaMemoryMb());
  return {
    ok: run.ok,
    wallMs: run.wallMs,
    failure: run.failure,
    timedOut: run.timedOut,
    execution: { stats, historyEvents, notYetDone, executions, usage, cost },
    endedAt: run.endedAt,
  };
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
    const podSelector = benchCase.drainOptions.podSelector;
    const before = drainablePods(sim, benchCase.node, podSelector);
    const inputs = floorInputs(sim, benchCase.node, podSelector);
    const floor = physicalFloor(inputs.pods, inputs.budgets, inputs.timings);
    const mark = sim.requestLog.mark();
    const outcome = await runTool(cluster, benchCase, tool, settings);
    // Only what the tool asked while it was measured (an aborted execution may still be retrying).
    const { endedAt, ...measured } = outcome;
    const records = sim.requestLog.all({ since: mark }).filter((record) => record.at <= endedAt);
    const left = drainablePods(sim, benchCase.node, podSelector);
    const moved = before.filter((name) => !left.includes(name)).length;
    const base = { tool, case: benchCase.name, repetition, floor };
    return {
      ...base,
      ...measured,
      requests: countByUser(records),
      kinds: countKinds(records),
      podsLeft: left.length,
      podsMoved: moved,
    };
  } finally {
    await cluster.stop();
  }
}
