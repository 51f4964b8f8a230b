/**
 * A second `drainbridge evacuate` of a node another request evacuates: it follows that request instead
 * of starting its own — reads the request's record and node every FOLLOW_INTERVAL_MS, prints what changed
 * (phase, progress per branch, blockers, who drives it) and ends with the request's outcome. Reads only;
 * when the request's driver stops (Ctrl-C or killed elsewhere), it hands the request back to the caller
 * to resume it here.
 */
import type { V1Node } from '@kubernetes/client-node';
import type { MaintenanceRequestedEvent } from '../../lib/bus/contracts/index.ts';
import type { KubeClient } from '../../lib/clients/kube/client.ts';
import { isNotFound } from '../../lib/clients/kube/errors.ts';
import { type EvacuationObject, evacuationName } from '../../lib/clients/kube/paths.ts';
import { describeDriver } from '../../lib/workflow/driver.ts';
import { planResume } from '../../lib/workflow/resume.ts';
import type { CommandContext } from '../command.ts';
import { EXIT, type ExitCode, exitForSignal } from '../exit-codes.ts';
import { describeNode } from '../node-state.ts';
import { type RequestStatus, statusReport, withoutClock } from '../status/model.ts';

/** How often the followed request is read (two gets). */
export const FOLLOW_INTERVAL_MS = 2_000;

export type FollowEnd =
  | { readonly kind: 'exit'; readonly code: ExitCode }
  | { readonly kind: 'resume'; readonly detail: MaintenanceRequestedEvent };

export interface FollowTarget {
  readonly client: KubeClient;
  readonly nodeName: string;
  readonly requestId: string;
  /** `json`: one JSON document per line (the request as `drainbridge status -o json` has it). */
  readonly json: boolean;
  readonly intervalMs?: number;
}

interface Read {
  readonly node: V1Node;
  readonly record: EvacuationObject;
  readonly request: RequestStatus;
}

async function readRequest(target: FollowTarget): Promise<Read | undefined> {
  try {
    const [node, record] = await Promise.all([
      target.client.getNode(target.nodeName),
      target.client.getEvacuation(evacuationName(target.requestId)),
    ]);
    const report = statusReport({
      at: new Date(),
      nodes: [node],
      records: [record],
      lease: undefined,
      recordTtlHours: 0,
    });
    const request = report.requests.find((r) => r.requestId === target.requestId);
    return request ? { node, record, request } : undefined;
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

/** One line of what the followed request is doing. Pure. */
export function followLine(request: RequestStatus): string {
  const branches = request.branches.map((b) => `${b.branch} ${b.moved}/${b.total}`).join(', ');
  const blockers = request.blockers.length > 0 ? `; blocked: ${request.blockers.join('; ')}` : '';
  const driver = request.driving === 'driven' && request.driver ? `; driven by ${describeDriver(request.driver)}` : '';
  return `request ${request.requestId}: ${request.state}, phase ${request.phase ?? '-'}${branches ? `; ${branches}` : ''}${blockers}${driver}`;
}

interface Outcome {
  readonly code: ExitCode;
  /** The closing words, given the node's state as read at the end (cli/node-state.ts). */
  words(state: string): string[];
}

/** How the followed request ended, if it did: its exit status and closing words. Pure. */
export function outcomeOf(
  target: { nodeName: string; requestId: string },
  read: Read | undefined,
): Outcome | undefined {
  const { nodeName, requestId } = target;
  const restore = `To end the maintenance: drainbridge restore ${nodeName} --request-id ${requestId}`;
  if (!read)
    return {
      code: EXIT.failed,
      words: (state) => [`request ${requestId} is gone (its record was deleted); ${state}.`],
    };
  const { request } = read;
  if (request.state !== 'held') {
    return {
      code: EXIT.failed,
      words: (state) => [`request ${requestId} no longer evacuates node ${nodeName} (${request.state}); ${state}.`],
    };
  }
  if (request.phase === 'NodeDrained') {
    return { code: EXIT.ok, words: (state) => [`evacuated by request ${requestId}: ${state}.`, restore] };
  }
  if (request.phase !== 'Failed') return undefined;
  const why = request.lastError ? `: ${request.lastError}` : '';
  return { code: EXIT.failed, words: (state) => [`request ${requestId} failed${why}.`, `${state}.`, restore] };
}

/** Waits `ms`, or less when a signal comes. */
function pause(ms: number, stop: { wake?: () => void }): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    stop.wake = () => {
      clearTimeout(timer);
      resolve();
    };
  });
}

/**
 * Follows the request until it ends (its outcome's exit status), its driver stops (`resume`), or a
 * signal ends the following (the request goes on under its driver).
 */
export async function followRequest(target: FollowTarget, context: CommandContext): Promise<FollowEnd> {
  const stop: { signal?: NodeJS.Signals; wake?: () => void } = {};
  const release = context.onInterrupt((signal) => {
    stop.signal = signal;
    stop.wake?.();
  });
  const seen = { shown: '' };
  try {
    for (;;) {
      const end = await lookOnce(target, context, seen);
      if (end) return end;
      await pause(target.intervalMs ?? FOLLOW_INTERVAL_MS, stop);
      if (stop.signal) {
        context.err(
          `drainbridge evacuate: ${stop.signal}: stopped following request ${target.requestId}; it goes on under its driver (drainbridge status ${target.nodeName}).`,
        );
        return { kind: 'exit', code: exitForSignal(stop.signal) };
      }
    }
  } finally {
    release();
  }
}

/** One look at the request: prints what changed; says how the following ends, if it does now. */
async function lookOnce(
  target: FollowTarget,
  context: CommandContext,
  seen: { shown: string },
): Promise<FollowEnd | undefined> {
  const read = await readRequest(target);
  if (read) seen.shown = show(read.request, seen.shown, target, context);
  const outcome = outcomeOf(target, read);
  if (outcome) {
    const state = (await describeNode(target.client, target.nodeName, target.requestId)).sentence;
    for (const line of outcome.words(state)) (outcome.code === EXIT.ok ? context.out : context.err)(line);
    return { kind: 'exit', code: outcome.code };
  }
  if (read?.request.driving !== 'abandoned') return undefined;
  const resume = planResume(read.record, read.node);
  return resume.action === 'evacuate' ? { kind: 'resume', detail: resume.detail } : undefined;
}

/** Prints the request when something other than the clock changed; returns what was shown. */
function show(request: RequestStatus, shown: string, target: FollowTarget, context: CommandContext): string {
  const key = JSON.stringify(withoutClock({ time: '', nodes: [], requests: [request], queue: [], damaged: [] }));
  if (key === shown) return shown;
  context.out(target.json ? JSON.stringify({ following: request }) : followLine(request));
  return key;
}
