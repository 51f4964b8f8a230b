/**
 * Per case and tool: the spread of wall times and the median request counts over the runs that
 * finished, and the drainbridge/kubectl ratios. Pure.
 */
import { type RequestCounts, totalOf } from './requests.ts';
import type { RunResult, Tool } from './run-case.ts';
import { ratioOf, type Spread, spreadOf } from './stats.ts';

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
  /** drainbridge only: medians of the Evacuate execution's counts. */
  readonly execution?: {
    readonly stateTransitions: number;
    readonly lambdaInvocations: number;
    readonly notYetDone: number;
    readonly historyEvents: number;
  };
}

/** One case: both tools and the ratios drainbridge / kubectl (undefined when either has no successful run). */
export interface CaseSummary {
  readonly case: string;
  readonly kubectl: ToolSummary;
  readonly drainbridge: ToolSummary;
  readonly ratio: {
    readonly wallTime?: number;
    /** When every drainbridge run hit the time limit: its shortest limit over kubectl's median (a lower bound). */
    readonly wallTimeAtLeast?: number;
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

function executionMedians(runs: readonly RunResult[]): ToolSummary['execution'] {
  const executions = runs.flatMap((run) => (run.execution ? [run.execution] : []));
  if (executions.length === 0) return undefined;
  return {
    stateTransitions: medianOf(executions.map((e) => e.stats.stateTransitions)),
    lambdaInvocations: medianOf(executions.map((e) => e.stats.lambdaInvocations)),
    notYetDone: medianOf(executions.map((e) => e.notYetDone)),
    historyEvents: medianOf(executions.map((e) => e.historyEvents)),
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
    const kubectl = summarizeTool('kubectl', mine);
    const drainbridge = summarizeTool('drainbridge', mine);
    const ratio = {
      wallTime: ratioOf(drainbridge.wallSeconds?.median, kubectl.wallSeconds?.median),
      wallTimeAtLeast: lowerBoundRatio(mine, kubectl),
      requests: ratioOf(drainbridge.requests?.total, kubectl.requests?.total),
      evictions: ratioOf(drainbridge.requests?.evictions, kubectl.requests?.evictions),
    };
    return { case: name, kubectl, drainbridge, ratio };
  });
}
