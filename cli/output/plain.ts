/**
 * Plain lines, for pipes and logs as much as for terminals: one line when something changes (a phase,
 * a branch's counts, what blocks it, a pod evicted, a VM migrated), never a line per poll; while the run
 * waits, a line again every `heartbeatMs` naming what it waits for and how long, so silence never means
 * "stuck?". Wording comes from embedded/progress.ts, which every branch's lines go through.
 */
import { busLine, itemLine, taskLine, waitLine } from '../../embedded/progress.ts';
import { isSlotWait } from '../../lib/errors/registry.ts';
import { awaitedOf } from './awaited.ts';
import type { ItemChange } from './items.ts';
import type { ProgressEvent, Renderer } from './renderer.ts';
import type { EvacuationTimeline } from './timeline.ts';

export interface PlainOptions {
  /** Where `[+12.3s]` counts from (ms since the epoch). */
  readonly start: number;
  /**
   * Say what the run waits for after this long without output. Default 8 s: checked every second, so no
   * silence lasts 10 s even on a busy machine.
   */
  readonly heartbeatMs?: number;
  readonly now?: () => number;
  /** The clock the records are written on, for how long a wait has lasted (the demo's simulated one). */
  readonly recordNow?: () => number;
  /** The timer (tests pass a fake); returns a canceller. */
  readonly every?: (ms: number, tick: () => void) => () => void;
}

export const DEFAULT_HEARTBEAT_MS = 8_000;

function realEvery(ms: number, tick: () => void): () => void {
  const timer = setInterval(tick, Math.max(250, Math.min(ms, 1_000)));
  timer.unref();
  return () => clearInterval(timer);
}

function isWaiting(event: ProgressEvent): boolean {
  return event.kind === 'task' && (event.call.error?.name === 'NotYetDone' || isSlotWait(event.call.error?.name));
}

function lineOf(event: ProgressEvent): string | undefined {
  if (event.kind === 'note') return event.text;
  if (event.kind === 'bus') return busLine(event.detailType, event.detail as Record<string, unknown>);
  if (event.kind === 'task') return taskLine(event.call);
  return undefined;
}

/**
 * The line for an item's change, or undefined when the branch's own lines say it already: a pod's moves
 * are said one by one (as kubectl does); of the waits, a VM's or server's each, a budget's only when it
 * begins to hold pods back (not once per pod behind it); blockers are in the waiting lines.
 */
export function itemChangeLine(change: ItemChange, heldBudgets: Set<string>): string | undefined {
  switch (change.change) {
    case 'asked':
    case 'gone':
      return itemLine(change.item, change.change, change.deletes);
    case 'wait': {
      const budget = change.span.budget;
      if (budget === undefined) return change.item.kind === 'pod' ? undefined : waitLine(change.item, change.span);
      if (heldBudgets.has(budget)) return undefined;
      heldBudgets.add(budget);
      return `PodDisruptionBudget ${budget} holds back pod ${change.item.name} (evicted as soon as it allows)`;
    }
    default:
      return undefined;
  }
}

/** Budgets that hold a pod back now (a line is said when one starts to). */
function budgetsHolding(timeline: EvacuationTimeline): Set<string> {
  const held = new Set<string>();
  for (const item of timeline.items) {
    const open = item.waits.find((span) => span.to === undefined);
    if (item.state !== 'gone' && open?.budget) held.add(open.budget);
  }
  return held;
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
  let timeline: EvacuationTimeline | undefined;
  let heldBudgets = new Set<string>();
  const emit = (line: string, at: number) => {
    write(`[+${seconds(at - options.start)}] ${line}`);
    lastWrittenAt = now();
  };
  const stopTimer = (options.every ?? realEvery)(heartbeatMs, () => {
    const at = now();
    if (closed || at - lastWrittenAt < heartbeatMs) return;
    const longest = [...waiting.values()].sort((a, b) => a.since - b.since)[0];
    if (longest) {
      emit(`still ${longest.line} (for ${Math.round((at - longest.since) / 1000)} s)`, at);
      return;
    }
    // Within a pass that waits on its watches (pods terminating, a budget's hold): what it waits for.
    const awaited = awaitedOf(timeline, (options.recordNow ?? now)());
    if (awaited.length > 0) emit(`still waiting — ${awaited.join('; ')}`, at);
  });
  const onRecord = (event: Extract<ProgressEvent, { kind: 'timeline' | 'item' }>) => {
    if (event.kind === 'timeline') {
      timeline = event.timeline;
      heldBudgets = budgetsHolding(event.timeline);
      return;
    }
    const line = itemChangeLine(event.change, heldBudgets);
    if (line) emit(line, event.at);
  };
  return {
    event(event) {
      if (closed) return;
      if (event.kind === 'timeline' || event.kind === 'item') {
        onRecord(event);
        return;
      }
      // A note (an operator's hint) is always said, and does not make the next equal progress line news.
      if (event.kind === 'note') {
        emit(event.text, event.at);
        return;
      }
      const line = lineOf(event);
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
