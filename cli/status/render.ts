/**
 * How `drainbridge status` looks: tables as `kubectl get` draws them (`-o wide`: more columns), the
 * sentences a table has no room for (blockers, the queue, damaged records) below them, or the report
 * itself as JSON or YAML (`-o json|yaml`). Pure.
 */
import { stringify as toYaml } from 'yaml';
import { statusColumns } from '../../lib/branches/registry.ts';
import { describeDriver } from '../../lib/workflow/driver.ts';
import type { BranchStatus, RequestStatus, StatusReport } from './model.ts';

export const OUTPUT_FORMATS = ['wide', 'json', 'yaml'] as const;
export type OutputFormat = 'table' | (typeof OUTPUT_FORMATS)[number];

/** `45s`, `3m12s`, `2h5m`, `3d4h`: kubectl's way of saying how long. */
export function duration(totalSeconds: number): string {
  const s = Math.max(0, Math.round(totalSeconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${s % 60 ? `${s % 60}s` : ''}`;
  if (s < 86_400)
    return `${Math.floor(s / 3600)}h${Math.floor((s % 3600) / 60) ? `${Math.floor((s % 3600) / 60)}m` : ''}`;
  return `${Math.floor(s / 86_400)}d${Math.floor((s % 86_400) / 3600) ? `${Math.floor((s % 86_400) / 3600)}h` : ''}`;
}

/** Rows aligned in columns three spaces apart, as kubectl prints them. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => (row[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, i) => cell.padEnd(widths[i] ?? 0))
      .join('   ')
      .trimEnd();
  return [line(header), ...rows.map(line)];
}

function branchCell(branches: readonly BranchStatus[], name: string): string {
  const branch = branches.find((b) => b.branch === name);
  return branch ? `${branch.moved}/${branch.total}` : '-';
}

function nodeRows(report: StatusReport): string[][] {
  return report.nodes.flatMap((node) => {
    const common = [node.name, node.cordoned ? 'yes' : 'no', node.phase ?? '-'];
    if (node.ledger === 'unreadable') return [[...common, '?', '(its ledger cannot be read)', '', '']];
    if (node.holds.length === 0) return [[...common, '-', '', '', '']];
    return node.holds.map((hold) => [...common, hold.requestId, hold.requester, hold.origin, hold.since]);
  });
}

/** What a wide row says beyond the counts: when it starts, when its record expires, an abort asked for. */
function note(request: RequestStatus): string {
  const notes: string[] = [];
  if (request.paused) notes.push('paused: uncordoned by someone else');
  if (request.startsAt) notes.push(`starts ${request.startsAt}`);
  if (request.rescheduled) {
    const { from, to } = request.rescheduled;
    notes.push(`rescheduled from ${from ?? 'no start'} to ${to ?? 'no start'}`);
  }
  if (request.abortRequestedBy) notes.push(`abort requested by ${request.abortRequestedBy}`);
  if (request.expiresAt) notes.push(`record expires ${request.expiresAt}`);
  if (request.driving === 'abandoned') notes.push('abandoned: no process drives it');
  else if (request.driving === 'driven' && request.driver) {
    const execution = request.driver.execution;
    notes.push(`driver ${request.driver.process ?? execution.slice(execution.lastIndexOf(':') + 1)}`);
  }
  return notes.join('; ');
}

function requestRow(request: RequestStatus, wide: boolean): string[] {
  const inFlight = request.branches.reduce((sum, branch) => sum + branch.inFlight, 0);
  const row = [
    request.requestId,
    request.node,
    request.state,
    request.phase ?? '-',
    request.elapsedSeconds === undefined ? '-' : duration(request.elapsedSeconds),
    ...statusColumns().map((column) => branchCell(request.branches, column.key)),
    String(request.blockers.length),
  ];
  if (!wide) return row;
  return [
    ...row,
    String(inFlight),
    request.requester ?? '-',
    request.origin ?? '-',
    request.since ?? '-',
    note(request),
  ];
}

/** Who drives an evacuation under way, or that nobody does and how to resume it. */
function drivingLine(request: RequestStatus): string[] {
  const driver = request.driver;
  if (request.driving === 'driven' && driver) {
    return [`  driven by ${describeDriver(driver)}, last seen ${duration(driver.idleSeconds)} ago`];
  }
  if (request.driving !== 'abandoned') return [];
  if (!driver) return [`  no process drives this request (none has claimed it) — resume: ${request.resume}`];
  const how = driver.handedBack ? 'stopped and handed the request back' : 'stopped renewing its claim';
  return [
    `  no process has driven this request for ${duration(driver.idleSeconds)} — resume: ${request.resume}`,
    `    (last driven by ${describeDriver(driver)}, which ${how})`,
  ];
}

/** What a notice did to the request: ended on an unreadable source, or its start moved. */
function noticeLines(request: RequestStatus): string[] {
  const lines: string[] = [];
  const unreadable = request.sourceUnreadableEnd;
  if (unreadable)
    lines.push(`  ended on an unreadable source (unreadable since ${unreadable.since}): ${unreadable.message}`);
  if (request.rescheduled) lines.push(`  rescheduled at ${request.rescheduled.at}: ${request.rescheduled.message}`);
  return lines;
}

/** The sentences about one request that is not restored. */
function saidOf(request: RequestStatus): string[] {
  return [
    ...(request.paused ? [`  paused: ${request.paused}`] : []),
    ...noticeLines(request),
    ...request.blockers.map((blocker) => `  blocked: ${blocker}`),
    ...request.waiting.map((waiting) => `  waiting for: ${waiting}`),
    ...(request.lastError ? [`  failed: ${request.lastError}`] : []),
    ...(request.abortRequestedBy ? [`  abort requested by ${request.abortRequestedBy}`] : []),
    ...drivingLine(request),
  ];
}

/**
 * Who drives, blockers, waits, failures and aborts: the sentences behind the table. A restored request
 * is said only when its end needs a look (its notice's source stayed unreadable) or its start had moved.
 */
function problemLines(report: StatusReport): string[] {
  const lines: string[] = [];
  for (const request of report.requests) {
    const said = request.state === 'restored' ? noticeLines(request) : saidOf(request);
    if (said.length > 0) lines.push(`${request.requestId} on ${request.node}:`, ...said);
  }
  return lines;
}

function queueLines(report: StatusReport): string[] {
  if (report.queue.length === 0) return [];
  return [
    'Waiting for a maintenance slot, oldest first:',
    ...report.queue.flatMap((entry) => [
      `  ${entry.position}. ${entry.requestId} for ${entry.node}, since ${entry.since} (${duration(entry.waitingSeconds)})`,
      ...waitingLine(entry, Date.parse(report.time)),
    ]),
  ];
}

/**
 * Why a place waits. A reason decided before the request last refreshed its place from the Lease alone is
 * said as what it is — the last one decided on the nodes, and when — after what holds now: its place in line.
 */
function waitingLine(entry: StatusReport['queue'][number], now: number): string[] {
  if (!entry.why) return [];
  if (!entry.whyStale || !entry.whyAt) return [`     waiting: ${entry.why}`];
  const ago = Math.max(0, Math.round((now - Date.parse(entry.whyAt)) / 1000));
  return [
    `     waiting: in line behind ${entry.position - 1} older request(s); last reason decided on the nodes at ${entry.whyAt} (${duration(ago)} ago), not asked again since (it is asked again nearer the front): ${entry.why}`,
  ];
}

/** The circuit breaker's pause, first of all: nothing new starts until a person resumes admission. */
function pausedLines(report: StatusReport): string[] {
  const paused = report.admissionPaused;
  if (!paused) return [];
  return [
    `ADMISSION PAUSED since ${paused.since}: ${paused.reason}`,
    '  running evacuations go on; waiting requests keep their place. To admit again: drainbridge resume',
  ];
}

function damageLines(report: StatusReport): string[] {
  if (report.damaged.length === 0) return [];
  return [
    'Records drainbridge cannot read (what they are about stops until they are repaired; nothing was changed):',
    ...report.damaged.flatMap((damage) => [`  ${damage.record}: ${damage.problem}`, `    to repair: ${damage.fix}`]),
  ];
}

/** The progress columns are the registry's (lib/branches): PODS, VMS, SERVERS. */
function requestHeader(): string[] {
  const progress = statusColumns().map((column) => column.heading);
  return ['REQUEST', 'NODE', 'STATE', 'PHASE', 'ELAPSED', ...progress, 'BLOCKERS'];
}
const WIDE_COLUMNS = ['IN-FLIGHT', 'REQUESTER', 'ORIGIN', 'SINCE', 'NOTE'];
const NODE_HEADER = ['NODE', 'CORDONED', 'PHASE', 'HELD-BY', 'REQUESTER', 'ORIGIN', 'SINCE'];

/** The human view: nodes and their holds, requests and their progress, then the sentences. */
function tables(report: StatusReport, wide: boolean): string[] {
  const sections: string[][] = [];
  const paused = pausedLines(report);
  if (paused.length > 0) sections.push(paused);
  if (report.nodes.length > 0) sections.push(table(NODE_HEADER, nodeRows(report)));
  if (report.requests.length > 0) {
    sections.push(
      table(
        wide ? [...requestHeader(), ...WIDE_COLUMNS] : requestHeader(),
        report.requests.map((r) => requestRow(r, wide)),
      ),
    );
  }
  for (const lines of [problemLines(report), queueLines(report), damageLines(report)]) {
    if (lines.length > 0) sections.push(lines);
  }
  if (sections.length === 0) {
    sections.push([
      report.node
        ? `node ${report.node}: not in maintenance, and no request of drainbridge's is about it`
        : 'No node is in maintenance, and no request is waiting.',
    ]);
  }
  return sections.flatMap((section, i) => (i === 0 ? section : ['', ...section]));
}

/** The report in `format`, as lines. */
export function renderReport(report: StatusReport, format: OutputFormat): string[] {
  switch (format) {
    case 'json':
      return JSON.stringify(report, null, 2).split('\n');
    case 'yaml':
      return toYaml(report).trimEnd().split('\n');
    case 'wide':
      return tables(report, true);
    case 'table':
      return tables(report, false);
  }
}
