/**
 * The output of a run, for a command: the renderer it was asked for (`--output`: a live display on a
 * terminal, plain lines when piped, JSON lines for scripts), fed with the run's task calls, bus events
 * and — from the Evacuation records the run writes — each item's moves and waits; and the outcome events
 * it saw, which the command's closing words are built from.
 */
import type { RecordUpdate } from '../../lib/progress/index.ts';
import type { CommandContext } from '../command.ts';
import type { FlagSpec, ParsedCommandLine } from '../flags.ts';
import { flagValue } from '../flags.ts';
import { ItemWatch } from './items.ts';
import { jsonMessage, jsonRenderer } from './json.ts';
import { liveRenderer, type TerminalStream } from './live.ts';
import { plainRenderer } from './plain.ts';
import { type EventSource, eventSource, type ProgressEvent, type Renderer } from './renderer.ts';

export type { EventSource, ProgressEvent, Renderer } from './renderer.ts';

/** How a run is shown: `live` on a terminal (plain lines when stdout is not one), `plain`, `json`. */
export type OutputMode = 'live' | 'plain' | 'json';

export const OUTPUT_FLAG: FlagSpec = {
  name: 'output',
  short: 'o',
  kind: 'value',
  value: 'MODE',
  choices: ['auto', 'live', 'plain', 'json'],
  help: 'auto (default: a live display on a terminal, plain lines when piped), live, plain, or json (JSON lines, one per event)',
};

export const OUTPUT_HELP = [
  '  -o, --output MODE  auto (default): a live display on a terminal, plain lines when stdout is not one;',
  '                   plain: lines only; json: one JSON object per line per event, nothing else on stdout',
].join('\n');

/** The mode a command line asks for, on this stdout. */
export function outputModeOf(parsed: ParsedCommandLine, context: Pick<CommandContext, 'interactive'>): OutputMode {
  const asked = flagValue(parsed, OUTPUT_FLAG.name) ?? 'auto';
  if (asked === 'json' || asked === 'plain') return asked;
  return context.interactive ? 'live' : 'plain';
}

/** The last detail of each outcome event type seen on the bus (`Evacuation Failed`, `Node Restored`, …). */
export type RecordedOutcomes = ReadonlyMap<string, Readonly<Record<string, unknown>>>;

export interface RunOutput {
  readonly events: EventSource;
  readonly recorded: RecordedOutcomes;
  /** The command's own line for stdout, said the renderer's way (above the live display; as JSON). */
  out(line: string): void;
  close(): void;
}

export interface RendererOptions {
  readonly mode?: OutputMode;
  /** Where `[+12.3s]` and `elapsedSeconds` count from (ms since the epoch). */
  readonly start?: number;
  readonly heartbeatMs?: number;
  /** The live display's title, e.g. `drainbridge evacuate node-1`. */
  readonly title?: string;
  /** The terminal the live display draws on (process.stdout). */
  readonly terminal?: TerminalStream;
  /**
   * The clock the run's records are written on (the tasks' clock), for how long a wait has lasted: the
   * demo's simulated cluster runs faster than the wall clock. Default: the wall clock.
   */
  readonly recordClock?: () => number;
}

/**
 * The renderer with what it is fed added: outcome events recorded for the closing words, and record
 * updates turned into `item` events (one per change) followed by the `timeline` they lead to.
 */
function feeding(
  renderer: Renderer,
  recorded: Map<string, Readonly<Record<string, unknown>>>,
  now: () => number = Date.now,
): Renderer {
  const watch = new ItemWatch();
  return {
    event(event: ProgressEvent) {
      if (event.kind === 'bus') recorded.set(event.detailType, event.detail);
      renderer.event(event);
    },
    record(update: RecordUpdate) {
      const changes = watch.update(update);
      const at = now();
      for (const change of changes) renderer.event({ kind: 'item', at, change });
      if (watch.timeline) renderer.event({ kind: 'timeline', at, timeline: watch.timeline });
    },
    close: () => renderer.close(),
  };
}

function pick(context: CommandContext, mode: OutputMode, options: RendererOptions, start: number) {
  const timing = {
    start,
    ...(options.heartbeatMs !== undefined ? { heartbeatMs: options.heartbeatMs } : {}),
    ...(options.recordClock ? { recordNow: options.recordClock } : {}),
  };
  if (mode === 'json') {
    // The command's own words are JSON too, also once the run has ended (its closing words).
    const out = (text: string) => context.out(JSON.stringify(jsonMessage(text, Date.now(), start)));
    return { renderer: jsonRenderer(context.out, timing), out };
  }
  if (mode === 'live') {
    const live = liveRenderer(options.terminal ?? process.stdout, {
      start,
      ...(options.title ? { title: options.title } : {}),
      ...(options.recordClock ? { recordNow: options.recordClock } : {}),
    });
    return { renderer: live, out: (line: string) => live.print(line) };
  }
  return { renderer: plainRenderer(context.out, timing), out: context.out };
}

export function createRenderer(context: CommandContext, options: RendererOptions = {}): RunOutput {
  const recorded = new Map<string, Readonly<Record<string, unknown>>>();
  const start = options.start ?? Date.now();
  const chosen = pick(context, options.mode ?? 'plain', options, start);
  const renderer = feeding(chosen.renderer, recorded);
  return { events: eventSource(renderer), recorded, out: chosen.out, close: () => renderer.close() };
}
