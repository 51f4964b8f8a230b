/** Plain-text rendering of the summary: one table per case, then the ratios. Pure. */
import type { BenchCase } from './cases.ts';
import type { CaseSummary, ToolSummary } from './summary.ts';

const HEADER = [
  'tool',
  'ok',
  'moved (worst)',
  'median s',
  'min s',
  'max s',
  'requests',
  'discovery',
  'reads',
  'writes',
  'evictions (ok / 429)',
  'failed',
];

function seconds(value: number | undefined): string {
  return value === undefined ? '-' : value.toFixed(1);
}

function count(value: number | undefined): string {
  return value === undefined ? '-' : String(Math.round(value));
}

function row(summary: ToolSummary): string[] {
  const wall = summary.wallSeconds;
  const req = summary.requests;
  const evictions = req
    ? `${count(req.evictions)} (${count(req.evictionsAccepted)} / ${count(req.evictionsRefused)})`
    : '-';
  return [
    summary.tool,
    `${summary.ok}/${summary.runs}`,
    summary.worstMoved ? `${summary.worstMoved.moved}/${summary.worstMoved.of}` : '-',
    seconds(wall?.median),
    seconds(wall?.min),
    seconds(wall?.max),
    count(req?.total),
    count(req?.discovery),
    count(req?.reads),
    count(req?.writes),
    evictions,
    count(req?.failed),
  ];
}

/** Columns padded to their widest cell; numbers right-aligned. */
export function renderColumns(rows: readonly (readonly string[])[]): string {
  const widths = (rows[0] ?? []).map((_, column) => Math.max(...rows.map((r) => (r[column] ?? '').length)));
  return rows
    .map((r) =>
      r
        .map((cell, column) => (column === 0 ? cell.padEnd(widths[column] ?? 0) : cell.padStart(widths[column] ?? 0)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

function ratio(value: number | undefined): string {
  return value === undefined ? 'n/a' : `${value.toFixed(2)}×`;
}

/** The text block of one case. */
export function renderCase(summary: CaseSummary, benchCase: BenchCase | undefined): string {
  const lines = [`## ${summary.case}${benchCase ? ` — node ${benchCase.node}: ${benchCase.description}` : ''}`];
  if (benchCase) lines.push(`   kubectl drain ${benchCase.node} ${benchCase.kubectlFlags.join(' ')}`);
  lines.push(renderColumns([HEADER, row(summary.kubectl), row(summary.drainbridge)]));
  const users = [summary.kubectl, summary.drainbridge].map((tool) => `${tool.tool} as ${tool.users.join(', ') || '-'}`);
  lines.push(`requests: medians per run, from the simulator's request log; ${users.join('; ')}`);
  const execution = summary.drainbridge.execution;
  if (execution) {
    lines.push(
      `drainbridge Evacuate execution (median): ${execution.stateTransitions} state transitions, ` +
        `${execution.lambdaInvocations} Lambda invocations (${execution.notYetDone} of them NotYetDone polls), ` +
        `≈${execution.historyEvents} history events`,
    );
  }
  const { wallTime, wallTimeAtLeast, requests, evictions } = summary.ratio;
  const wall =
    wallTime === undefined && wallTimeAtLeast !== undefined
      ? `≥ ${wallTimeAtLeast.toFixed(1)}× (no drainbridge run finished within the time limit)`
      : ratio(wallTime);
  lines.push(
    `ratio drainbridge / kubectl: wall time ${wall}, API requests ${ratio(requests)}, eviction requests ${ratio(evictions)}`,
  );
  return lines.join('\n');
}
