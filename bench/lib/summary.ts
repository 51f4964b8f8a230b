/**
 * Per case and tool: the spread of wall times and the median request counts over the runs that
 * finished, the physical floor, and the ratios drainbridge / kubectl and drainbridge / floor. Pure.
 */
import { billedStateTransitions } from '../../embedded/executor.ts';
import type { EvacuationCost } from './cost.ts';
import type { PhysicalFloor } from './floor.ts';
import { type RequestCounts, type RequestKinds, totalOf } from './requests.ts';
import type { RunResult, Tool } from './run-case.ts';
import { ratioOf, type Spread, spreadOf } from './stats.ts';

/** Medians of a drainbridge evacuation's execution counts (a continued chain added up). */
export interface ExecutionSummary {
  readonly stateTransitions: number;
  readonly retries: number;
  /** States entered + retries: what Step Functions Standard bills. */
  readonly billedTransitions: number;
  readonly lambdaInvocations: number;
  readonly notYetDone: number;
  readonly historyEvents: number;
  /** Seconds spent in Lambda handlers, added up (billed as GB-seconds). */
  readonly lambdaSeconds: number;
  readonly executions: number;
  /** Events put on the bus and log bytes (functions' lines + Lambda's own), medians. */
  readonly events: number;
  readonly logBytes: number;
  /** The AWS bill per 1,000 evacuations at list prices, each line the median over the runs. */
  readonly cost: EvacuationCost;
}

/** One tool's figures on one case. */
export interface ToolSummary {
  readonly tool: Tool;
  readonly runs: number;
  readonly ok: number;
  /** The API users the tool's requests came from (each tool runs as its own user). */
  readonly users: readonly string[];
  /** The run that moved fewest pods (failed runs included), as moved / drainable at the start. */
  readonly worstMoved: { readonly moved: number; readonly of: number } | undefined;
  /** Wall time to drained in seconds, over the successful runs. */
  readonly wallSeconds: Spread | undefined;
  /** Median per run of each request count (all users added up), over the successful runs. */
  readonly requests: RequestCounts | undefined;
  /** Median per run of each request kind, over the successful runs. */
  readonly kinds: RequestKinds;
  /** Median requests and non-eviction writes per pod moved. */
  readonly perMovedPod: { readonly requests: number; readonly writes: number } | undefined;
  /** drainbridge only: medians of the Evacuate execution's counts. */
  readonly execution?: ExecutionSummary;
}

/** One case: every tool, the floor and the ratios (undefined when a side has no successful run). */
export interface CaseSummary {
  readonly case: string;
  readonly floor: PhysicalFloor | undefined;
  readonly kubectl: ToolSummary;
  readonly drainbridge: ToolSummary;
  readonly oracle: ToolSummary;
  readonly ratio: {
    readonly wallTime?: number;
    /** When every drainbridge run hit the time limit: its shortest limit over kubectl's median (a lower bound). */
    readonly wallTimeAtLeast?: number;
    /** drainbridge's median wall time over the floor. */
    readonly wallTimeToFloor?: number;
    /** kubectl's median wall time over the floor. */
    readonly kubectlToFloor?: number;
    /** The oracle's median over the floor: ≈ 1 when the floor is right. */
    readonly oracleToFloor?: number;
    readonly requests?: number;
    readonly evictions?: number;
  };
}

function medianOf(values: readonly number[]): number {
  return spreadOf(values)?.median ?? 0;
}

function medianCounts(runs: readonly RunResult[]): RequestCounts | undefined {
  if (runs.length === 0) return undefined;
  const totals = runs.map((run) => totalOf(run.requests));
  const first = totals[0] as RequestCounts;
  const out = { ...first };
  for (const key of Object.keys(first) as (keyof RequestCounts)[]) out[key] = medianOf(totals.map((t) => t[key]));
  return out;
}

function medianKinds(runs: readonly RunResult[]): RequestKinds {
  const kinds = new Set(runs.flatMap((run) => Object.keys(run.kinds)));
  const out: RequestKinds = {};
  for (const kind of kinds) out[kind] = medianOf(runs.map((run) => run.kinds[kind] ?? 0));
  return out;
}

function perMovedPod(runs: readonly RunResult[]): ToolSummary['perMovedPod'] {
  const moved = runs.filter((run) => run.podsMoved > 0);
  if (moved.length === 0) return undefined;
  return {
    requests: medianOf(moved.map((run) => totalOf(run.requests).total / run.podsMoved)),
    writes: medianOf(moved.map((run) => totalOf(run.requests).writes / run.podsMoved)),
  };
}

/** Each line of the bill, the median over the runs (the total is the median of the totals). */
export function medianCost(costs: readonly EvacuationCost[]): EvacuationCost {
  const pick = (key: keyof EvacuationCost) => medianOf(costs.map((cost) => cost[key]));
  return {
    stepFunctions: pick('stepFunctions'),
    lambdaDuration: pick('lambdaDuration'),
    lambdaRequests: pick('lambdaRequests'),
    eventBridge: pick('eventBridge'),
    logs: pick('logs'),
    total: pick('total'),
    gbSeconds: pick('gbSeconds'),
    logBytes: pick('logBytes'),
  };
}

function executionMedians(runs: readonly RunResult[]): ExecutionSummary | undefined {
  const executions = runs.flatMap((run) => (run.execution ? [run.execution] : []));
  if (executions.length === 0) return undefined;
  const median = (pick: (e: (typeof executions)[number]) => number) => medianOf(executions.map(pick));
  return {
    stateTransitions: median((e) => e.stats.stateTransitions),
    retries: median((e) => e.stats.retries),
    billedTransitions: median((e) => billedStateTransitions(e.stats)),
    lambdaInvocations: median((e) => e.stats.lambdaInvocations),
    notYetDone: median((e) => e.notYetDone),
    historyEvents: median((e) => e.historyEvents),
    lambdaSeconds: median((e) => e.stats.lambdaMilliseconds / 1000),
    executions: median((e) => e.executions),
    events: median((e) => e.usage.events),
    logBytes: median((e) => e.cost.logBytes),
    cost: medianCost(executions.map((e) => e.cost)),
  };
}

function summarizeTool(tool: Tool, runs: readonly RunResult[]): ToolSummary {
  const mine = runs.filter((run) => run.tool === tool);
  const ok = mine.filter((run) => run.ok);
  const execution = executionMedians(ok);
  const worst = [...mine].sort((a, b) => a.podsMoved - b.podsMoved)[0];
  return {
    tool,
    runs: mine.length,
    ok: ok.length,
    users: [...new Set(mine.flatMap((run) => Object.keys(run.requests)))],
    worstMoved: worst ? { moved: worst.podsMoved, of: worst.podsMoved + worst.podsLeft } : undefined,
    wallSeconds: spreadOf(ok.map((run) => run.wallMs / 1000)),
    requests: medianCounts(ok),
    kinds: medianKinds(ok),
    perMovedPod: perMovedPod(ok),
    ...(execution ? { execution } : {}),
  };
}

function lowerBoundRatio(runs: readonly RunResult[], kubectl: ToolSummary): number | undefined {
  const mine = runs.filter((run) => run.tool === 'drainbridge');
  if (mine.length === 0 || !mine.every((run) => run.timedOut)) return undefined;
  return ratioOf(Math.min(...mine.map((run) => run.wallMs / 1000)), kubectl.wallSeconds?.median);
}

/** The summary of every case in `runs`, in order of first appearance. */
export function summarize(runs: readonly RunResult[]): CaseSummary[] {
  const cases = [...new Set(runs.map((run) => run.case))];
  return cases.map((name) => {
    const mine = runs.filter((run) => run.case === name);
    const [kubectl, drainbridge, oracle] = (['kubectl', 'drainbridge', 'oracle'] as const).map((tool) =>
      summarizeTool(tool, mine),
    ) as [ToolSummary, ToolSummary, ToolSummary];
    const floor = mine[0]?.floor;
    const floorSeconds = floor?.wallSeconds;
    const ratio = {
      wallTime: ratioOf(drainbridge.wallSeconds?.median, kubectl.wallSeconds?.median),
      wallTimeAtLeast: lowerBoundRatio(mine, kubectl),
      wallTimeToFloor: ratioOf(drainbridge.wallSeconds?.median, floorSeconds),
      kubectlToFloor: ratioOf(kubectl.wallSeconds?.median, floorSeconds),
      oracleToFloor: ratioOf(oracle.wallSeconds?.median, floorSeconds),
      requests: ratioOf(drainbridge.requests?.total, kubectl.requests?.total),
      evictions: ratioOf(drainbridge.requests?.evictions, kubectl.requests?.evictions),
    };
    return { case: name, floor, kubectl, drainbridge, oracle, ratio };
  });
}
