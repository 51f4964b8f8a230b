/**
 * `--output json`: one JSON object per line per event, nothing else on stdout — for scripts. Every
 * object has `type`, `at` (ISO 8601) and `elapsedSeconds` (since the command started); the types:
 *
 *   message     the command's own words (`text`): what it does, the end state, an operator's hint
 *   event       an event on the bus (`detailType`, `detail`: the contracts of lib/bus/contracts)
 *   progress    a branch's pass (`branch`, `total`, `moved`, `inFlight`, `skipped`, `done`, `blockers`)
 *   waiting     a step found nothing to do yet (`state`, `message`); `slot`: true while waiting for a slot
 *   step-failed a step ended with an error (`state`, `error`: {name, message})
 *   item        a pod, VMI or server (`change`: asked | gone | wait | wait-ended; `item`: kind, name, id,
 *               branch, askedAt, goneAt, source, target; `span` for waits)
 *   blocker     a blocker reported or cleared (`change`: started | ended; `branch`, `span`)
 *   heartbeat   nothing said for `heartbeatMs`: what the run waits for (`awaiting`: phrases)
 */

import { isSlotWait } from '../../lib/errors/registry.ts';
import type { ItemTimeline } from '../../lib/model/timeline.ts';
import { awaitedOf } from './awaited.ts';
import type { ItemChange } from './items.ts';
import { DEFAULT_HEARTBEAT_MS } from './plain.ts';
import type { ProgressEvent, Renderer } from './renderer.ts';
import type { EvacuationTimeline } from './timeline.ts';

export interface JsonOptions {
  readonly start: number;
  readonly heartbeatMs?: number;
  readonly now?: () => number;
  /** The clock the records are written on, for how long a wait has lasted (the demo's simulated one). */
  readonly recordNow?: () => number;
  readonly every?: (ms: number, tick: () => void) => () => void;
}

function realEvery(ms: number, tick: () => void): () => void {
  const timer = setInterval(tick, Math.max(250, Math.min(ms, 1_000)));
  timer.unref();
  return () => clearInterval(timer);
}

/** A `message` line: the command's own words. */
export function jsonMessage(text: string, at: number, start: number): Record<string, unknown> {
  return { type: 'message', text, at: new Date(at).toISOString(), elapsedSeconds: (at - start) / 1000 };
}

function itemFields(item: ItemTimeline) {
  const { waits: _waits, blockers: _blockers, ...fields } = item;
  return fields;
}

function fromChange(change: ItemChange): Record<string, unknown> {
  switch (change.change) {
    case 'asked':
    case 'gone':
      return { type: 'item', change: change.change, item: itemFields(change.item) };
    case 'wait':
    case 'wait-ended':
      return { type: 'item', change: change.change, item: itemFields(change.item), span: change.span };
    case 'blocker':
    case 'blocker-ended':
      return {
        type: 'blocker',
        change: change.change === 'blocker' ? 'started' : 'ended',
        branch: change.branch,
        span: change.span,
      };
  }
}

interface PassOutput {
  branch?: string;
  done?: boolean;
  progress?: Record<string, number>;
  blockers?: string[];
  detail?: string[];
}

/** The object for an event, or undefined for what scripts need not see (a step's plain output). */
export function jsonOf(event: ProgressEvent): Record<string, unknown> | undefined {
  switch (event.kind) {
    case 'note':
      return { type: 'message', text: event.text };
    case 'bus':
      return { type: 'event', detailType: event.detailType, detail: event.detail };
    case 'item':
      return fromChange(event.change);
    case 'timeline':
      return undefined;
    case 'task': {
      const { call } = event;
      const waited = waitMessage(call);
      if (waited !== undefined) {
        const slot = isSlotWait(call.error?.name);
        return { type: 'waiting', state: call.stateName, message: waited, ...(slot ? { slot } : {}) };
      }
      if (call.error) {
        return {
          type: 'step-failed',
          state: call.stateName,
          error: { name: call.error.name, message: call.error.message },
        };
      }
      const output = call.output as PassOutput | undefined;
      if (call.functionKey !== 'pass' || !output?.branch || !output.progress) return undefined;
      return {
        type: 'progress',
        branch: output.branch,
        ...output.progress,
        done: output.done === true,
        blockers: output.blockers ?? [],
        ...(output.detail?.length ? { detail: output.detail } : {}),
      };
    }
  }
}

function waitMessage(call: Extract<ProgressEvent, { kind: 'task' }>['call']): string | undefined {
  const waits = call.error?.name === 'NotYetDone' || isSlotWait(call.error?.name);
  return waits ? call.error?.message : undefined;
}

/** Whether a step's wait is news (not the same message again); keeps the last per step. */
function isNews(lastWaitBy: Map<string, string>, state: string, message: string | undefined): boolean {
  if (message === undefined) {
    lastWaitBy.delete(state);
    return true;
  }
  if (lastWaitBy.get(state) === message) return false;
  lastWaitBy.set(state, message);
  return true;
}

/** Prints each event as one JSON line; repeats nothing; beats while something is awaited. */
export function jsonRenderer(write: (line: string) => void, options: JsonOptions): Renderer {
  const now = options.now ?? Date.now;
  const heartbeatMs = options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS;
  let timeline: EvacuationTimeline | undefined;
  let lastWrittenAt = now();
  let lastWaiting: string | undefined;
  // A step that keeps finding nothing to do says so once, until it says something else.
  const lastWaitBy = new Map<string, string>();
  let closed = false;
  const emit = (object: Record<string, unknown>, at: number) => {
    const stamped = { ...object, at: new Date(at).toISOString(), elapsedSeconds: (at - options.start) / 1000 };
    write(JSON.stringify(stamped));
    lastWrittenAt = now();
  };
  const stopTimer = (options.every ?? realEvery)(heartbeatMs, () => {
    const at = now();
    if (closed || at - lastWrittenAt < heartbeatMs) return;
    const awaiting = [...(lastWaiting ? [lastWaiting] : []), ...awaitedOf(timeline, (options.recordNow ?? now)())];
    if (awaiting.length > 0) emit({ type: 'heartbeat', awaiting }, at);
  });
  return {
    event(event) {
      if (closed) return;
      if (event.kind === 'timeline') timeline = event.timeline;
      if (event.kind === 'task') {
        lastWaiting = waitMessage(event.call);
        if (!isNews(lastWaitBy, event.call.stateName, lastWaiting)) return;
      }
      const object = jsonOf(event);
      if (object) emit(object, event.at);
    },
    close() {
      closed = true;
      stopTimer();
    },
  };
}
