/**
 * The output layer of the commands that run a state machine (evacuate, restore, demo): everything a
 * person or a script sees of a run arrives as a `ProgressEvent`, and one `Renderer` decides how it looks:
 * plain lines (plain.ts), a live display on a terminal (live.ts) or JSON lines (json.ts).
 */
import type { TaskCall } from '../../embedded/executor.ts';
import type { RecordUpdate } from '../../lib/progress/index.ts';
import type { ItemChange } from './items.ts';
import type { EvacuationTimeline } from './timeline.ts';

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
  | { readonly kind: 'note'; readonly at: number; readonly text: string }
  /** An item's move or wait, or a blocker, from the Evacuation record (items.ts). */
  | { readonly kind: 'item'; readonly at: number; readonly change: ItemChange }
  /** The Evacuation record as it stands now, as a timeline (after its item events). */
  | { readonly kind: 'timeline'; readonly at: number; readonly timeline: EvacuationTimeline };

export interface Renderer {
  event(event: ProgressEvent): void;
  /** Record updates, turned into `item` and `timeline` events (createRenderer does it for every renderer). */
  record?(update: RecordUpdate): void;
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
    /** A record written, or a pass's round (the EvacuationProgressStore's watch); read by createRenderer. */
    record: (update: RecordUpdate) => renderer.record?.(update),
  };
}

export type EventSource = ReturnType<typeof eventSource>;
