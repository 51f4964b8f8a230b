/**
 * `drainbridge report REQUEST_ID [--html FILE] [--svg FILE]`: the picture of one evacuation, from its
 * Evacuation record only — a timeline with the phases on top and one bar per pod, VM and server from
 * asked to gone, PDB waits and blockers marked. Reads; writes nothing to the cluster.
 */
import { writeFileSync } from 'node:fs';
import { isNotFound } from '../../lib/clients/kube/errors.ts';
import { type EvacuationObject, evacuationName } from '../../lib/clients/kube/paths.ts';
import { connect, preflight } from '../cluster.ts';
import { type Command, type CommandContext, processContext, UsageError } from '../command.ts';
import { CLUSTER_FLAGS } from '../common-flags.ts';
import { EXIT } from '../exit-codes.ts';
import { expectPositionals, type FlagSpec, flagValue, parseCommandLine } from '../flags.ts';
import { dataFormatOf, dataOutputFlag, renderData } from '../output/data-format.ts';
import { renderHtml, renderSvg } from '../output/report.ts';
import { type EvacuationTimeline, timelineOf } from '../output/timeline.ts';

const FLAGS: readonly FlagSpec[] = [
  { name: 'html', kind: 'value', value: 'FILE', help: 'write the timeline as a self-contained HTML page' },
  { name: 'svg', kind: 'value', value: 'FILE', help: 'write the timeline as an SVG image' },
  dataOutputFlag('the timeline'),
  ...CLUSTER_FLAGS,
];

/** Seconds between two instants, or '' when either is unknown. */
function took(from: string | undefined, to: string | undefined): string {
  if (!from || !to) return '';
  return ` (${((Date.parse(to) - Date.parse(from)) / 1000).toFixed(1)} s)`;
}

/** The timeline as text, for stdout: the phases, then one line per item. */
export function timelineText(timeline: EvacuationTimeline): string[] {
  const lines = [
    `Evacuation of ${timeline.nodeName} (request ${timeline.requestId}): ${timeline.phase ?? 'no phase yet'}; ${timeline.items.length} item(s)`,
    ...timeline.phases.map((phase) => `  ${phase.at}  ${phase.phase}`),
  ];
  for (const item of timeline.items) {
    const route = item.source || item.target ? ` ${item.source ?? '?'} → ${item.target ?? '?'}` : '';
    const waits = item.waits.length > 0 ? `; waited: ${item.waits.map((w) => w.budget ?? w.code).join(', ')}` : '';
    const blockers = item.blockers.length > 0 ? `; blocked: ${item.blockers.map((b) => b.code).join(', ')}` : '';
    const times = `asked ${item.askedAt ?? '-'}, gone ${item.goneAt ?? '-'}${took(item.askedAt, item.goneAt)}`;
    lines.push(`  ${item.kind} ${item.name}${route}: ${item.state}; ${times}${waits}${blockers}`);
  }
  return lines;
}

function write(flag: string, file: string, text: string): void {
  try {
    writeFileSync(file, text);
  } catch (error) {
    throw new UsageError(
      `--${flag}: cannot write ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    );
  }
}

export const reportCommand: Command = {
  name: 'report',
  summary: 'the timeline of an evacuation (one bar per pod, VM, server; waits, blockers, phases) as HTML or SVG',
  usage: [
    'Usage: drainbridge report REQUEST_ID [--html FILE] [--svg FILE] [-o, --output json|yaml] [--kubeconfig FILE]',
    '                          [--context NAME]',
    '',
    "Reads the request's Evacuation record and draws its timeline: the phases on top, a bar per branch,",
    'then one row per pod, KubeVirt VMI and Nova server from when it was asked to move (eviction accepted,',
    'migration started) to when it was gone, with source → target, the PodDisruptionBudget waits and the',
    'blockers marked. --html writes a self-contained page (the picture and a table of every row; no script,',
    'nothing fetched), --svg the picture alone; without either, the timeline as text on stdout, or with',
    '-o json|yaml as data. Changes nothing.',
  ].join('\n'),
  flags: FLAGS,
  operands: ['REQUEST_ID'],
  exits: ['ok', 'usage', 'notReady', 'refused'],
  async run(argv, context: CommandContext = processContext()) {
    const parsed = parseCommandLine(argv, FLAGS);
    const [requestId = ''] = expectPositionals(parsed, ['REQUEST_ID']);
    const format = dataFormatOf(parsed);
    const cluster = await connect(parsed, context);
    if (!(await preflight(cluster, { operation: 'report' }, context, 'drainbridge report'))) return EXIT.notReady;
    let record: EvacuationObject;
    try {
      record = await cluster.client.getEvacuation(evacuationName(requestId));
    } catch (error) {
      if (!isNotFound(error)) throw error;
      context.err(`drainbridge report: refused: drainbridge has no Evacuation record for request ${requestId}.`);
      return EXIT.refused;
    }
    const timeline = timelineOf(record);
    const html = flagValue(parsed, 'html');
    const svg = flagValue(parsed, 'svg');
    if (html) write('html', html, renderHtml(timeline));
    if (svg) write('svg', svg, `<?xml version="1.0" encoding="UTF-8"?>\n${renderSvg(timeline)}\n`);
    for (const file of [html, svg].filter((f): f is string => f !== undefined)) {
      context.out(
        `wrote ${file}: ${timeline.items.length} row(s), evacuation of ${timeline.nodeName} (${timeline.phase ?? 'no phase yet'})`,
      );
    }
    if (format !== 'text') context.out(renderData(timeline, format));
    else if (!html && !svg) for (const line of timelineText(timeline)) context.out(line);
    for (const reason of timeline.unreadable) context.err(`drainbridge report: left out: ${reason}`);
    return EXIT.ok;
  },
};
