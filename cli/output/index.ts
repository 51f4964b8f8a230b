/**
 * The output of a run, for a command: the renderer it was asked for (plain lines today; a live display
 * and JSON lines later, behind the same `Renderer`), and the outcome events it saw, which the command's
 * closing words are built from.
 */
import type { CommandContext } from '../command.ts';
import { plainRenderer } from './plain.ts';
import { type EventSource, eventSource, type ProgressEvent, type Renderer } from './renderer.ts';

export type { EventSource, ProgressEvent, Renderer } from './renderer.ts';

/** The last detail of each outcome event type seen on the bus (`Evacuation Failed`, `Node Restored`, …). */
export type RecordedOutcomes = ReadonlyMap<string, Readonly<Record<string, unknown>>>;

export interface RunOutput {
  readonly events: EventSource;
  readonly recorded: RecordedOutcomes;
  close(): void;
}

function recording(renderer: Renderer, recorded: Map<string, Readonly<Record<string, unknown>>>): Renderer {
  return {
    event(event: ProgressEvent) {
      if (event.kind === 'bus') recorded.set(event.detailType, event.detail);
      renderer.event(event);
    },
    close: () => renderer.close(),
  };
}

export function createRenderer(
  context: CommandContext,
  options: { start?: number; heartbeatMs?: number } = {},
): RunOutput {
  const recorded = new Map<string, Readonly<Record<string, unknown>>>();
  const renderer = recording(
    plainRenderer(context.out, {
      start: options.start ?? Date.now(),
      ...(options.heartbeatMs !== undefined ? { heartbeatMs: options.heartbeatMs } : {}),
    }),
    recorded,
  );
  return { events: eventSource(renderer), recorded, close: () => renderer.close() };
}
