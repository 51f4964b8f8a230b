/**
 * The output layer of the commands that run a state machine (evacuate, restore, demo): everything a
 * person or a script sees of a run arrives as a `ProgressEvent`, and one `Renderer` decides how it looks.
 * Today: plain lines (plain.ts) with a heartbeat while waiting. Built to take, without changing the
 * producers, a live display on a terminal and `--output json` (one JSON line per event).
 */
import type { TaskCall } from '../../embedded/executor.ts';

export type ProgressEvent =
  /** A task call of a state machine: its output, or the error it ended with (NotYetDone included). */
  | { readonly kind: 'task'; readonly at: number; readonly call: TaskCall }
  /** An event put on the bus: the request itself, and every outcome (progress, succeeded, failed, restored). */
  | {
      readonly kind: 'bus';
      readonly at: number;
      readonly detailType: string;
      readonly detail: Readonly<Record<string, unknown>>;
    }
  /** The command's own words: what it does next, an operator's hint, the node's state at the end. */
  | { readonly kind: 'note'; readonly at: number; readonly text: string };

export interface Renderer {
  event(event: ProgressEvent): void;
  /** Stops timers and flushes; the renderer prints nothing afterwards. */
  close(): void;
}

/** Builds events with the time they happened (the clock is injectable for tests). */
export function eventSource(renderer: Renderer, now: () => number = Date.now) {
  return {
    task: (call: TaskCall) => renderer.event({ kind: 'task', at: now(), call }),
    bus: (detailType: string, detail: unknown) =>
      renderer.event({ kind: 'bus', at: now(), detailType, detail: detail as Record<string, unknown> }),
    note: (text: string) => renderer.event({ kind: 'note', at: now(), text }),
  };
}

export type EventSource = ReturnType<typeof eventSource>;
