/**
 * `drainbridge status [NODE] [--watch] [-o wide|json|yaml]`: what drainbridge is doing in the cluster —
 * nodes in maintenance and who holds them, each request's phase, progress per branch, blockers and
 * elapsed time, the admission queue, and records it cannot read. Reads only (get/list); `--watch`
 * re-reads every WATCH_INTERVAL_MS and prints again when something other than the clock changed.
 */
import { connect, preflight } from '../cluster.ts';
import { type Command, type CommandContext, processContext, UsageError } from '../command.ts';
import { CLUSTER_FLAGS } from '../common-flags.ts';
import { presentError } from '../errors.ts';
import { EXIT, type ExitCode } from '../exit-codes.ts';
import { type FlagSpec, flagValue, isOn, parseCommandLine } from '../flags.ts';
import { type StatusReport, statusReport, withoutClock } from '../status/model.ts';
import { OUTPUT_FORMATS, type OutputFormat, renderReport } from '../status/render.ts';
import { readSnapshot, type SnapshotSource } from '../status/snapshot.ts';

/** How often `--watch` re-reads: polling (a list of the held nodes, one of the records, one Lease get). */
export const WATCH_INTERVAL_MS = 2_000;

const FLAGS: readonly FlagSpec[] = [
  {
    name: 'watch',
    short: 'w',
    kind: 'switch',
    help: `read again every ${WATCH_INTERVAL_MS / 1000} s and print again when something changed (Ctrl-C ends it)`,
  },
  {
    name: 'output',
    short: 'o',
    kind: 'value',
    value: 'FORMAT',
    choices: OUTPUT_FORMATS,
    help: 'wide (more columns), json or yaml (the report as data)',
  },
  ...CLUSTER_FLAGS,
];

/** Clears a terminal and puts the cursor home, as `watch` does between two screens. */
const CLEAR_SCREEN = '\u001b[H\u001b[2J';

function print(report: StatusReport, format: OutputFormat, context: CommandContext, watching: boolean): void {
  if (!watching) {
    for (const line of renderReport(report, format)) context.out(line);
    return;
  }
  // Watching: one JSON document per line (JSON lines), YAML documents, or the tables again under a header.
  if (format === 'json') {
    context.out(JSON.stringify(report));
    return;
  }
  if (format === 'yaml') {
    context.out('---');
    for (const line of renderReport(report, format)) context.out(line);
    return;
  }
  const header = `drainbridge status${report.node ? ` ${report.node}` : ''} at ${report.time} (every ${WATCH_INTERVAL_MS / 1000} s; Ctrl-C to stop)`;
  context.out(context.interactive ? `${CLEAR_SCREEN}${header}` : `\n${header}`);
  context.out('');
  for (const line of renderReport(report, format)) context.out(line);
}

/** Polls until SIGINT/SIGTERM; a read that fails is said once (until it works again) and tried again. */
async function watch(
  source: SnapshotSource,
  node: string | undefined,
  format: OutputFormat,
  context: CommandContext,
): Promise<ExitCode> {
  let stopped = false;
  let wake: (() => void) | undefined;
  const release = context.onInterrupt(() => {
    stopped = true;
    wake?.();
  });
  let shown: string | undefined;
  let failing: string | undefined;
  try {
    while (!stopped) {
      try {
        const report = statusReport(await readSnapshot(source, node));
        failing = undefined;
        const key = JSON.stringify(withoutClock(report));
        if (key !== shown) print(report, format, context, true);
        shown = key;
      } catch (error) {
        const message = presentError(error).message;
        if (message !== failing)
          context.err(`drainbridge status: ${message}; reading again every ${WATCH_INTERVAL_MS / 1000} s`);
        failing = message;
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, WATCH_INTERVAL_MS);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    return EXIT.ok;
  } finally {
    release();
  }
}

export const statusCommand: Command = {
  name: 'status',
  summary: 'what drainbridge is doing: nodes in maintenance, holds, progress, blockers, the queue; changes nothing',
  usage: [
    'Usage: drainbridge status [NODE] [--watch] [--output wide|json|yaml] [--kubeconfig FILE] [--context NAME]',
    '',
    'Reads the cluster and shows, for every node drainbridge holds (or NODE): who holds it (request,',
    'requester, origin, since when) and its phase; for every request drainbridge knows of — held, waiting',
    'for a maintenance slot or its start, restored and not yet expired — its phase, progress per branch',
    '(PODS, KubeVirt VMS, Nova SERVERS: moved/total), blockers and elapsed time; the admission queue; and',
    'any record drainbridge cannot read, with the `drainbridge repair` that rewrites it. For an evacuation',
    'under way, who drives it (process and execution; its mark is renewed about every 30 s) or, when nobody has for',
    'over 120 s or it was stopped by Ctrl-C: "no process has driven this request for N — resume: …".',
    'Changes nothing.',
    '  -w, --watch          read again every 2 s (polling) and print again when something changed;',
    '                       Ctrl-C ends it (exit 0). With -o json: one JSON document per line',
    '  -o, --output FORMAT  wide: more columns (in flight, requester, origin, since, notes);',
    '                       json or yaml: the report as data, for scripts',
  ].join('\n'),
  flags: FLAGS,
  operands: ['NODE'],
  exits: ['ok', 'usage', 'notReady'],
  async run(argv, context: CommandContext = processContext()) {
    const parsed = parseCommandLine(argv, FLAGS);
    if (parsed.positional.length > 1) {
      throw new UsageError(
        `unexpected arguments ${parsed.positional
          .slice(1)
          .map((p) => `"${p}"`)
          .join(' ')}`,
      );
    }
    const node = parsed.positional[0];
    const format = (flagValue(parsed, 'output') ?? 'table') as OutputFormat;
    const cluster = await connect(parsed, context);
    if (!(await preflight(cluster, { operation: 'status' }, context, 'drainbridge status'))) return EXIT.notReady;
    const source = {
      client: cluster.client,
      namespace: cluster.config.namespace,
      recordTtlHours: cluster.config.recordTtlHours,
    };
    if (isOn(parsed, 'watch')) return watch(source, node, format, context);
    print(statusReport(await readSnapshot(source, node)), format, context, false);
    return EXIT.ok;
  },
};
