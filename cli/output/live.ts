/**
 * The live display on a terminal: at the bottom, redrawn in place (log-update), one bar per branch with
 * its counts, the phase and elapsed time, and what the run waits for now; above it, scrolling, the same
 * lines as plain output (pods evicted, VMs migrated, phases). Only on a TTY: piped, the plain renderer
 * runs instead (createRenderer decides).
 */
import { createLogUpdate } from 'log-update';
import { isSlotWait } from '../../lib/errors/registry.ts';
import { wordsOf } from '../../lib/workflow/branches/registry.ts';
import { awaitedOf } from './awaited.ts';
import { plainRenderer } from './plain.ts';
import type { ProgressEvent, Renderer } from './renderer.ts';
import type { EvacuationTimeline } from './timeline.ts';

/** What the display draws on: a terminal stream (process.stdout), or a test's stand-in. */
export interface TerminalStream {
  write(text: string): boolean;
  readonly columns?: number;
  readonly rows?: number;
  readonly isTTY?: boolean;
}

export interface LiveOptions {
  readonly start: number;
  /** The title line's command, e.g. `drainbridge evacuate node-1`. */
  readonly title?: string;
  readonly now?: () => number;
  /** Redraws (the elapsed time, how long each wait lasts); a canceller. */
  readonly every?: (ms: number, tick: () => void) => () => void;
}

interface BranchCounts {
  total: number;
  moved: number;
  inFlight: number;
  skipped: number;
  done: boolean;
}

const BAR_WIDTH = 24;

/** `[██████░░░░░░]`: moved of total (an empty branch is full: nothing to move). */
export function bar(moved: number, total: number, width = BAR_WIDTH): string {
  const filled = total === 0 ? width : Math.min(width, Math.round((moved / total) * width));
  return `[${'█'.repeat(filled)}${'░'.repeat(width - filled)}]`;
}

/** The frame drawn at the bottom. Pure. */
export function liveFrame(view: {
  title: string;
  phase: string | undefined;
  elapsedSeconds: number;
  branches: ReadonlyMap<string, BranchCounts>;
  waiting: readonly string[];
  awaited: readonly string[];
  width: number;
}): string {
  const width = Math.max(40, view.width);
  const cut = (line: string) => (line.length > width ? `${line.slice(0, width - 1)}…` : line);
  const lines = [`${view.title} · ${view.phase ?? 'starting'} · ${view.elapsedSeconds.toFixed(0)} s`];
  const nameWidth = Math.max(8, ...[...view.branches.keys()].map((name) => name.length));
  for (const [name, counts] of view.branches) {
    const parts = [`${counts.moved}/${counts.total} ${wordsOf(name).moved}`];
    if (counts.inFlight > 0) parts.push(`${counts.inFlight} in flight`);
    if (counts.skipped > 0) parts.push(`${counts.skipped} skipped`);
    lines.push(
      cut(
        `  ${name.padEnd(nameWidth)} ${bar(counts.moved, counts.total)} ${parts.join(', ')}${counts.done ? ' — done' : ''}`,
      ),
    );
  }
  const waits = [...view.awaited, ...view.waiting];
  if (waits.length > 0) {
    lines.push('  waiting for:');
    for (const wait of waits.slice(0, 6)) lines.push(cut(`    ${wait}`));
    if (waits.length > 6) lines.push(`    … and ${waits.length - 6} more`);
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

function phaseOf(event: ProgressEvent): string | undefined {
  if (event.kind !== 'bus' || event.detailType !== 'Evacuation Progress') return undefined;
  return typeof event.detail.phase === 'string' ? event.detail.phase : undefined;
}

/** A pass's counts go to its bar; a step that waits is shown in the frame while it waits (not scrolled per poll). */
function noteTask(
  event: Extract<ProgressEvent, { kind: 'task' }>,
  branches: Map<string, BranchCounts>,
  waiting: Map<string, string>,
): void {
  const output = event.call.output as { branch?: string; done?: boolean; progress?: Omit<BranchCounts, 'done'> };
  if (event.call.functionKey === 'pass' && output?.branch && output.progress) {
    branches.set(output.branch, { ...output.progress, done: output.done === true });
  }
  if (isWait(event)) waiting.set(event.call.stateName, `${event.call.error?.message}`);
  else waiting.delete(event.call.stateName);
}

export function liveRenderer(stream: TerminalStream, options: LiveOptions): Renderer & { print(line: string): void } {
  const now = options.now ?? Date.now;
  // The cursor stays visible: hiding it would hook the process's signals (restore-cursor), which the
  // commands' own Ctrl-C handling owns. A terminal that reports no size (0×0: some ptys) gets 80×24
  // (log-update draws nothing at all on 0 rows).
  const sized = {
    write: (text: string) => stream.write(text),
    isTTY: stream.isTTY,
    get columns() {
      return stream.columns || 80;
    },
    get rows() {
      return stream.rows || 24;
    },
  };
  const draw = createLogUpdate(sized as unknown as NodeJS.WriteStream, { showCursor: true });
  const branches = new Map<string, BranchCounts>();
  const waiting = new Map<string, string>();
  let phase: string | undefined;
  let timeline: EvacuationTimeline | undefined;
  let closed = false;
  const redraw = () => {
    if (closed) return;
    draw(
      liveFrame({
        title: options.title ?? 'drainbridge',
        phase,
        elapsedSeconds: (now() - options.start) / 1000,
        branches,
        waiting: [...waiting.values()],
        awaited: awaitedOf(timeline, now()),
        width: sized.columns,
      }),
    );
  };
  // The scrolling lines are plain output's, printed above the frame; its heartbeat is the frame itself.
  const lines = plainRenderer((line) => draw.persist(line), { start: options.start, now, every: () => () => {} });
  const stopTimer = (options.every ?? realEvery)(1_000, redraw);
  return {
    event(event) {
      if (closed) return;
      if (event.kind === 'timeline') timeline = event.timeline;
      phase = phaseOf(event) ?? phase;
      if (event.kind === 'task') noteTask(event, branches, waiting);
      if (!isWait(event)) lines.event(event);
      redraw();
    },
    print(line) {
      if (closed) stream.write(`${line}\n`);
      else {
        draw.persist(line);
        redraw();
      }
    },
    close() {
      if (closed) return;
      redraw();
      closed = true;
      stopTimer();
      lines.close();
      // The last frame stays on the screen, as ordinary lines.
      draw.done();
    },
  };
}
