/**
 * Turns what `drainbridge run` sees into notifications: the workflow's outcome events on its bus
 * (started: the first phase of an evacuation proper; succeeded; failed; restored; the circuit breaker's
 * `Admission Paused`, and `Admission Resumed` after `drainbridge resume`) and its pass steps' blockers, which the bus does not
 * carry for pods. A branch blocked for `blockedAfterMs` without a pass clearing it is told once per
 * blocked spell, naming the blockers. Pure bookkeeping over a `send` that never waits.
 */
import type { Notification, NotificationEvent } from './message.ts';

/** The phases that mean an evacuation is under way (before them it is scheduled or waiting in line). */
const STARTED_PHASES: ReadonlySet<string> = new Set(['NodeCordoning', 'NodeCordoned', 'NodeDraining']);
/** The circuit breaker's bus events (lib/bus/contracts): paused by failures, resumed by a person. */
export const ADMISSION_PAUSED = 'Admission Paused';
export const ADMISSION_RESUMED = 'Admission Resumed';

/** What the subscription reads of a task call (embedded/executor.ts's TaskCall). */
export interface ObservedTask {
  readonly executionId: string;
  readonly functionKey: string;
  readonly output?: unknown;
  readonly error?: { readonly name: string; readonly message: string };
}

interface Evacuation {
  node: string;
  requestId: string;
  started: boolean;
  /** Each branch's current blockers. */
  readonly blockers: Map<string, readonly string[]>;
  timer: NodeJS.Timeout | undefined;
  told: boolean;
}

type Detail = Readonly<Record<string, unknown>>;

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function reasonsOf(blockers: unknown): string[] {
  if (!Array.isArray(blockers)) return [];
  return blockers.map((b) => (typeof b === 'string' ? b : text((b as Detail | null)?.reason))).filter((r) => r !== '');
}

/** A pass's branch and blockers from its NotYetDone message (`pods: 1/3 moved, 0 in flight; blocked: …`). */
function waitingBlockers(message: string): { branch: string; blockers: string[] } | undefined {
  const branch = /^([a-z]+): /.exec(message)?.[1];
  if (!branch) return undefined;
  const at = message.indexOf('; blocked: ');
  return { branch, blockers: at < 0 ? [] : message.slice(at + '; blocked: '.length).split('; ') };
}

export class NotificationSubscription {
  readonly #send: (notification: Notification) => void;
  readonly #blockedAfterMs: number;
  readonly #evacuations = new Map<string, Evacuation>();

  constructor(send: (notification: Notification) => void, blockedAfterMs: number) {
    this.#send = send;
    this.#blockedAfterMs = blockedAfterMs;
  }

  /** One event the process published on its bus. */
  onBusEvent(detailType: string, detail: unknown): void {
    const fields = (detail ?? {}) as Detail;
    if (detailType === ADMISSION_PAUSED) {
      this.#notify('AdmissionPaused', undefined, fields, { reason: text(fields.reason) });
      return;
    }
    if (detailType === ADMISSION_RESUMED) {
      // Fleet-wide: its requestId names the resume, not an evacuation, so the message names no request.
      this.#notify('AdmissionResumed', undefined, {}, { reason: resumedReason(fields) });
      return;
    }
    const executionId = text(fields.executionId);
    const evacuation = this.#track(executionId, fields);
    if (detailType === 'Evacuation Progress') this.#progress(evacuation, executionId, fields);
    else if (detailType === 'Evacuation Succeeded') this.#end(executionId, evacuation, 'EvacuationSucceeded', {});
    else if (detailType === 'Evacuation Failed') {
      const error = (fields.error ?? {}) as Detail;
      this.#end(executionId, evacuation, 'EvacuationFailed', {
        reason: text(error.message),
        blockers: reasonsOf(fields.blockers),
      });
    } else if (detailType === 'Node Restored')
      this.#end(executionId, evacuation, 'NodeRestored', restoredReason(fields));
  }

  /** One task call of the embedded executor: a pass's blockers. */
  onTask(call: ObservedTask): void {
    if (call.functionKey !== 'pass') return;
    const evacuation = this.#evacuations.get(call.executionId);
    if (!evacuation) return;
    const output = call.output as { branch?: unknown; blockers?: unknown } | undefined;
    if (output && typeof output.branch === 'string') {
      this.#setBlockers(evacuation, call.executionId, output.branch, reasonsOf(output.blockers));
    } else if (call.error?.name === 'NotYetDone') {
      const waiting = waitingBlockers(call.error.message);
      if (waiting) this.#setBlockers(evacuation, call.executionId, waiting.branch, waiting.blockers);
    }
  }

  /** Cancels the blocked timers (the process stops). */
  stop(): void {
    for (const evacuation of this.#evacuations.values()) clearTimeout(evacuation.timer);
    this.#evacuations.clear();
  }

  #track(executionId: string, fields: Detail): Evacuation {
    const known = this.#evacuations.get(executionId);
    const node = text(fields.nodeName);
    const requestId = text(fields.requestId);
    if (known) {
      known.node ||= node;
      known.requestId ||= requestId;
      return known;
    }
    const fresh: Evacuation = { node, requestId, started: false, blockers: new Map(), timer: undefined, told: false };
    if (executionId) this.#evacuations.set(executionId, fresh);
    return fresh;
  }

  #progress(evacuation: Evacuation, executionId: string, fields: Detail): void {
    if (!evacuation.started && STARTED_PHASES.has(text(fields.phase))) {
      evacuation.started = true;
      this.#notify('EvacuationStarted', executionId, evacuation, {});
    }
    const blockers = reasonsOf(fields.blockers);
    if (blockers.length > 0) this.#setBlockers(evacuation, executionId, 'progress', blockers);
  }

  #setBlockers(evacuation: Evacuation, executionId: string, branch: string, blockers: readonly string[]): void {
    if (blockers.length > 0) evacuation.blockers.set(branch, blockers);
    else evacuation.blockers.delete(branch);
    if (evacuation.blockers.size === 0) {
      clearTimeout(evacuation.timer);
      evacuation.timer = undefined;
      evacuation.told = false;
      return;
    }
    if (evacuation.timer || evacuation.told) return;
    evacuation.timer = setTimeout(() => {
      evacuation.timer = undefined;
      evacuation.told = true;
      this.#notify('EvacuationBlocked', executionId, evacuation, {
        blockers: [...evacuation.blockers.values()].flat(),
      });
    }, this.#blockedAfterMs);
    evacuation.timer.unref();
  }

  #end(executionId: string, evacuation: Evacuation, event: NotificationEvent, extra: Partial<Notification>): void {
    clearTimeout(evacuation.timer);
    this.#evacuations.delete(executionId);
    this.#notify(event, executionId, evacuation, extra);
  }

  #notify(
    event: NotificationEvent,
    executionId: string | undefined,
    about: { readonly node?: unknown; readonly nodeName?: unknown; readonly requestId?: unknown },
    extra: Partial<Notification>,
  ): void {
    this.#send({
      event,
      node: text(about.node) || text(about.nodeName),
      requestId: text(about.requestId),
      executionId: executionId ?? '',
      blockers: [],
      reason: '',
      time: new Date().toISOString(),
      ...extra,
    });
  }
}

/** `by alice@host (paused since 2026-11-28T12:00:00Z: 2 evacuations failed within 1d: …)`. */
function resumedReason(fields: Detail): string {
  const since = text(fields.pausedAt) ? ` since ${text(fields.pausedAt)}` : '';
  const why = text(fields.reason);
  return `by ${text(fields.requester) || 'someone'} (paused${since}${why ? `: ${why}` : ''})`;
}

/** Why a restore left the node as it is, when it did (other holds, something changed by someone else). */
function restoredReason(fields: Detail): Partial<Notification> {
  const parts: string[] = [];
  if (fields.lastHold === false) parts.push('other holds remain: the node stays cordoned for them');
  const leftAlone = Array.isArray(fields.leftAlone) ? fields.leftAlone.filter((x) => typeof x === 'string') : [];
  if (leftAlone.length > 0) parts.push(`left alone: ${leftAlone.join(', ')}`);
  return { reason: parts.join('; ') };
}
