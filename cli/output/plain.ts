/**
 * Plain lines, for pipes and logs as much as for terminals: one line when something changes (a phase,
 * a branch's counts, what blocks it), never a line per poll; while the run waits, the waiting line again
 * every `heartbeatMs` with how long it has waited, so silence never means "stuck?". Wording comes from
 * embedded/progress.ts, which every branch's lines go through.
 */
import { busLine, taskLine } from '../../embedded/progress.ts';
import type { ProgressEvent, Renderer } from './renderer.ts';

export interface PlainOptions {
  /** Where `[+12.3s]` counts from (ms since the epoch). */
  readonly start: number;
  /** Repeat the waiting line after this long without output. Default 10 s. */
  readonly heartbeatMs?: number;
  readonly now?: () => number;
  /** The timer (tests pass a fake); returns a canceller. */
  readonly every?: (ms: number, tick: () => void) => () => void;
}

const DEFAULT_HEARTBEAT_MS = 10_000;

function realEvery(ms: number, tick: () => void): () => void {
  const timer = setInterval(tick, Math.max(250, Math.min(ms, 1_000)));
  timer.unref();
  return () => clearInterval(timer);
}

function isWaiting(event: ProgressEvent): boolean {
  return (
    event.kind === 'task' && (event.call.error?.name === 'NotYetDone' || event.call.error?.name === 'SlotUnavailable')
  );
}

function lineOf(event: ProgressEvent): string | undefined {
  if (event.kind === 'note') return event.text;
  if (event.kind === 'bus') return busLine(event.detailType, event.detail as Record<string, unknown>);
  return taskLine(event.call);
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)}s`;
}

type Waits = Map<string, { line: string; since: number }>;

/** A source waits while its answers are waiting lines; any other answer (printed or not) ends the wait. */
function noteWait(waits: Waits, source: string, waitingLine: string | undefined, at: number): void {
  if (!waitingLine) waits.delete(source);
  else if (waits.get(source)?.line !== waitingLine) waits.set(source, { line: waitingLine, since: at });
}

export function plainRenderer(write: (line: string) => void, options: PlainOptions): Renderer {
  const now = options.now ?? Date.now;
  const heartbeatMs = options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS;
  // The last line per source (a branch's pass state, a bus event type): parallel branches interleave,
  // and one branch's unchanged line is no news because another branch printed in between.
  const lastBySource = new Map<string, string>();
  let lastWrittenAt = now();
  // What each source waits for, and since when: a branch that moves on stops waiting, the others do not.
  const waiting: Waits = new Map();
  let closed = false;
  const emit = (line: string, at: number) => {
    write(`[+${seconds(at - options.start)}] ${line}`);
    lastWrittenAt = now();
  };
  const stopTimer = (options.every ?? realEvery)(heartbeatMs, () => {
    const at = now();
    const longest = [...waiting.values()].sort((a, b) => a.since - b.since)[0];
    if (closed || !longest || at - lastWrittenAt < heartbeatMs) return;
    emit(`still ${longest.line} (for ${Math.round((at - longest.since) / 1000)} s)`, at);
  });
  return {
    event(event) {
      if (closed) return;
      const line = lineOf(event);
      // A note (an operator's hint) is always said, and does not make the next equal progress line news.
      if (event.kind === 'note') {
        if (line) emit(line, event.at);
        return;
      }
      const source = event.kind === 'task' ? event.call.stateName : event.detailType;
      noteWait(waiting, source, isWaiting(event) ? line : undefined, event.at);
      if (!line || lastBySource.get(source) === line) return;
      lastBySource.set(source, line);
      emit(line, event.at);
    },
    close() {
      closed = true;
      stopTimer();
    },
  };
}
