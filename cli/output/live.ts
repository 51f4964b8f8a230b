/**
 * The live display on a terminal: at the bottom, redrawn in place (frame.ts), the run's title with its
 * phase and elapsed time, one bar per branch that has work, and what the run waits for now; above it,
 * scrolling into the scrollback, the same lines as plain output (pods evicted, VMs migrated, phases).
 * Only on a TTY: piped, the plain renderer runs instead (createRenderer decides).
 *
 * A frame belongs to one run of a state machine: it starts with the run's first step and ends with its
 * outcome (evacuation succeeded or failed, node restored), where it stays on the screen as ordinary
 * lines; what the command prints afterwards (its closing words, the demo's summary) goes below it and
 * no frame is drawn again until another run starts (the demo's restore).
 */

import { wordsOf } from '../../lib/branches/registry.ts';
import { isSlotWait } from '../../lib/errors/registry.ts';
import { awaitedOf } from './awaited.ts';
import { type TerminalStream, terminalFrame } from './frame.ts';
import { plainRenderer } from './plain.ts';
import type { ProgressEvent, Renderer } from './renderer.ts';
import type { EvacuationTimeline } from './timeline.ts';

export type { TerminalStream } from './frame.ts';

export interface LiveOptions {
  readonly start: number;
  /** The title line's command, e.g. `drainbridge evacuate node-1`. */
  readonly title?: string;
  readonly now?: () => number;
  /** The clock the records are written on, for how long a wait has lasted (the demo's simulated one). */
  readonly recordNow?: () => number;
  /** Redraws (the elapsed time, how long each wait lasts); a canceller. */
  readonly every?: (ms: number, tick: () => void) => () => void;
}

export interface BranchCounts {
  readonly total: number;
  readonly moved: number;
  readonly inFlight: number;
  readonly skipped: number;
  readonly done: boolean;
}

const BAR_WIDTH = 24;

/** Waits listed under "waiting for:" before `… and N more` (the frame must fit the terminal). */
const WAITS_SHOWN = 6;

/** `[██████░░░░░░]`: moved of total (an empty branch is full: nothing to move). */
export function bar(moved: number, total: number, width = BAR_WIDTH): string {
  const filled = total === 0 ? width : Math.min(width, Math.round((moved / total) * width));
  return `[${'█'.repeat(filled)}${'░'.repeat(width - filled)}]`;
}

export interface FrameView {
  readonly title: string;
  readonly phase: string | undefined;
  readonly elapsedSeconds: number;
  /** The branches to draw, in order (those with work; liveRenderer chooses). */
  readonly branches: ReadonlyMap<string, BranchCounts>;
  /** What the run waits for, each once. */
  readonly waits: readonly string[];
  readonly width: number;
  /** Lines the frame may take (the terminal's rows less one: the frame never outgrows the screen). */
  readonly height?: number;
}

function barLine(name: string, counts: BranchCounts, nameWidth: number): string {
  const parts = [`${counts.moved}/${counts.total} ${wordsOf(name).moved}`];
  if (counts.inFlight > 0) parts.push(`${counts.inFlight} in flight`);
  if (counts.skipped > 0) parts.push(`${counts.skipped} skipped`);
  const done = counts.done ? ' — done' : '';
  return `  ${name.padEnd(nameWidth)} ${bar(counts.moved, counts.total)} ${parts.join(', ')}${done}`;
}

/** Up to `room` lines, the last saying how many more there were. */
function within(lines: readonly string[], room: number, more: (n: number) => string): string[] {
  if (lines.length <= room) return [...lines];
  if (room <= 0) return [];
  return [...lines.slice(0, room - 1), more(lines.length - room + 1)];
}

/** The frame drawn at the bottom, at most `height` lines. Pure. */
export function liveFrame(view: FrameView): string {
  const width = Math.max(40, view.width);
  const cut = (line: string) => (line.length > width ? `${line.slice(0, width - 1)}…` : line);
  const height = Math.max(1, view.height ?? Number.POSITIVE_INFINITY);
  const lines = [`${view.title} · ${view.phase ?? 'starting'} · ${view.elapsedSeconds.toFixed(0)} s`];
  const nameWidth = Math.max(8, ...[...view.branches.keys()].map((name) => name.length));
  const bars = [...view.branches].map(([name, counts]) => cut(barLine(name, counts, nameWidth)));
  lines.push(...within(bars, height - 1, (n) => `  … and ${n} more branches`));
  const room = Math.min(WAITS_SHOWN, height - lines.length - 1);
  if (view.waits.length > 0 && room > 0) {
    lines.push('  waiting for:');
    lines.push(...within(view.waits, room, (n) => `    … and ${n} more`).map((wait) => cut(`    ${wait}`)));
  }
  return lines.join('\n');
}

function realEvery(ms: number, tick: () => void): () => void {
  const timer = setInterval(tick, ms);
  timer.unref();
  return () => clearInterval(timer);
}

function isWait(event: ProgressEvent): boolean {
  return event.kind === 'task' && (event.call.error?.name === 'NotYetDone' || isSlotWait(event.call.error?.name));
}

/** The outcome events that end a run, and the word its title ends with. */
const OUTCOMES: Readonly<Record<string, string>> = {
  'Evacuation Succeeded': 'done',
  'Evacuation Failed': 'failed',
  'Node Restored': 'done',
};

function phaseOf(event: ProgressEvent): string | undefined {
  if (event.kind !== 'bus') return undefined;
  if (OUTCOMES[event.detailType]) return OUTCOMES[event.detailType];
  if (event.detailType !== 'Evacuation Progress') return undefined;
  return typeof event.detail.phase === 'string' ? event.detail.phase : undefined;
}

/** A branch's counts from the record (laid over with the pass's latest round): moves and waits as they stand. */
function countsFromTimeline(timeline: EvacuationTimeline): Map<string, BranchCounts> {
  const counts = new Map<string, BranchCounts>();
  for (const branch of timeline.branches) {
    if (!branch.reported) continue;
    const items = timeline.items.filter((item) => item.branch === branch.name && item.blockers.length === 0);
    const gone = items.filter((item) => item.state === 'gone').length;
    const moving = items.filter((item) => item.state === 'moving').length;
    const moved = Math.max(branch.moved, gone);
    counts.set(branch.name, {
      total: Math.max(branch.total, moved),
      moved,
      inFlight: items.length > 0 ? moving : branch.inFlight,
      skipped: branch.skipped,
      done: branch.finishedAt !== undefined,
    });
  }
  return counts;
}

/** Whether a branch has work to show: something to move or moving, or a blocker keeping it from done. */
function hasWork(counts: BranchCounts, blocked: boolean): boolean {
  return counts.total > 0 || counts.inFlight > 0 || (!counts.done && blocked);
}

/**
 * The steps of an Evacuate (admission, the passes): a run that takes them drains the node, and its frame
 * shows the record's branches and waits. A Restore reads the same record but moves nothing: its frame
 * shows none of them (an evacuation stopped midway would otherwise look as if it still ran).
 */
const DRAINING_STEPS: ReadonlySet<string> = new Set(['admit', 'prepareBranches', 'pass']);

/** One run's frame: what it shows, and since when. */
class RunView {
  readonly counts = new Map<string, BranchCounts>();
  /** Branches drawn so far: a branch with work stays drawn once done. */
  readonly drawn = new Set<string>();
  /** Steps that wait (NotYetDone, a maintenance slot), by state: their words while the record says nothing. */
  readonly waiting = new Map<string, { readonly message: string; readonly slot: boolean }>();
  readonly executions = new Set<string>();
  phase: string | undefined;
  /** The record as this run drains the node: a Restore's run reads it too, but moves nothing. */
  timeline: EvacuationTimeline | undefined;
  #latest: EvacuationTimeline | undefined;
  #draining = false;

  readonly startedAt: number;

  constructor(startedAt: number) {
    this.startedAt = startedAt;
  }

  note(event: ProgressEvent): void {
    if (event.kind === 'timeline') this.noteTimeline(event.timeline);
    if (event.kind === 'task') this.noteTask(event);
    this.phase = phaseOf(event) ?? this.phase;
  }

  noteTask(event: Extract<ProgressEvent, { kind: 'task' }>): void {
    const { call } = event;
    this.executions.add(call.executionId);
    const output = call.output as { branch?: string; done?: boolean; progress?: Omit<BranchCounts, 'done'> };
    if (DRAINING_STEPS.has(call.functionKey)) this.#drains();
    if (call.functionKey === 'pass' && output?.branch && output.progress) {
      this.counts.set(output.branch, { ...output.progress, done: output.done === true });
    }
    if (isWait(event)) {
      this.waiting.set(call.stateName, { message: `${call.error?.message}`, slot: isSlotWait(call.error?.name) });
    } else this.waiting.delete(call.stateName);
  }

  noteTimeline(timeline: EvacuationTimeline): void {
    this.#latest = timeline;
    if (this.#draining) this.#apply(timeline);
  }

  #drains(): void {
    this.#draining = true;
    if (this.#latest) this.#apply(this.#latest);
  }

  #apply(timeline: EvacuationTimeline): void {
    this.timeline = timeline;
    for (const [name, counts] of countsFromTimeline(timeline)) this.counts.set(name, counts);
  }

  /** The bars to draw: branches with work, in the order they were first seen. */
  bars(): Map<string, BranchCounts> {
    const blocked = new Set(
      (this.timeline?.branches ?? []).filter((b) => b.blockers.some((s) => s.to === undefined)).map((b) => b.name),
    );
    for (const item of this.timeline?.items ?? []) {
      if (item.blockers.some((span) => span.to === undefined)) blocked.add(item.branch);
    }
    for (const [name, counts] of this.counts) if (hasWork(counts, blocked.has(name))) this.drawn.add(name);
    return new Map([...this.counts].filter(([name]) => this.drawn.has(name)));
  }

  /**
   * What the run waits for, each once: the record's account (pods terminating, budgets, migrations,
   * blockers — a blocker gone is gone from it) and a maintenance slot; a step's own words only when
   * there is no record to read (they repeat what the record says, and stay until the step runs again).
   */
  waits(now: number): string[] {
    const steps = [...this.waiting.values()];
    const slots = steps.filter((wait) => wait.slot).map((wait) => wait.message);
    const own = this.timeline ? awaitedOf(this.timeline, now) : steps.filter((w) => !w.slot).map((w) => w.message);
    return [...new Set([...slots, ...own])];
  }
}

export function liveRenderer(stream: TerminalStream, options: LiveOptions): Renderer & { print(line: string): void } {
  const now = options.now ?? Date.now;
  const frame = terminalFrame(stream);
  const title = options.title ?? 'drainbridge';
  let run: RunView | undefined;
  let runs = 0;
  // The record as last seen: written before a run's first step ends (its first step writes it).
  let latest: EvacuationTimeline | undefined;
  // Executions whose run ended: a late step of theirs does not draw their frame again.
  const ended = new Set<string>();
  let closed = false;
  const frameText = (view: RunView) =>
    liveFrame({
      title,
      phase: view.phase,
      elapsedSeconds: (now() - view.startedAt) / 1000,
      branches: view.bars(),
      waits: view.waits((options.recordNow ?? now)()),
      width: frame.columns - 1,
      height: frame.rows - 1,
    });
  const redraw = () => {
    if (!closed && run) frame.show(frameText(run));
  };
  const endRun = () => {
    if (!run) return;
    frame.show(frameText(run));
    frame.finish();
    for (const execution of run.executions) ended.add(execution);
    run = undefined;
  };
  // The scrolling lines are plain output's, printed above the frame; its heartbeat is the frame itself.
  const lines = plainRenderer((line) => frame.print(line, run ? frameText(run) : undefined), {
    start: options.start,
    now,
    every: () => () => {},
  });
  const startRun = (event: ProgressEvent) => {
    if (run || event.kind !== 'task' || ended.has(event.call.executionId)) return;
    // The first run counts from the command's start; a later one (the demo's restore) from its first step.
    run = new RunView(runs === 0 ? options.start : event.at);
    runs++;
    if (latest) run.noteTimeline(latest);
  };
  const stopTimer = (options.every ?? realEvery)(1_000, redraw);
  return {
    event(event) {
      if (closed) return;
      if (event.kind === 'timeline') latest = event.timeline;
      startRun(event);
      if (run) run.note(event);
      if (!isWait(event)) lines.event(event);
      if (event.kind === 'bus' && OUTCOMES[event.detailType]) endRun();
      else redraw();
    },
    print(line) {
      if (closed) stream.write(`${line}\n`);
      else frame.print(line, run ? frameText(run) : undefined);
    },
    close() {
      if (closed) return;
      endRun();
      closed = true;
      stopTimer();
      lines.close();
    },
  };
}
