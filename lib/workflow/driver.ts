/**
 * Who drives a request's evacuation, read from its Evacuation record and its node: the execution whose
 * owner mark (ownership.ts: its heartbeat, renewed at a step at most every OWNER_REFRESH_SECONDS) is on
 * the record, the process that runs it, and whether it still does. A request that holds its node, whose
 * evacuation has not ended and that no live execution claims is abandoned — a process stopped by Ctrl-C
 * (it handed the request back) or killed (its mark aged past OWNER_TTL_SECONDS) — and stays cordoned
 * and held until someone resumes or restores it. Pure: `drainbridge status` and a second
 * `drainbridge evacuate` of the node read it.
 */
import type { V1Node } from '@kubernetes/client-node';
import type { EvacuationObject } from '../clients/kube/paths.ts';
import { ledgerOf } from '../node/ledger.ts';
import { isLiveOwner, OWNER_TTL_SECONDS, type Owner, readOwner } from './ownership.ts';

/** The execution that drives (or drove last) a request. */
export interface RequestDriver {
  /** The execution's ARN (on AWS, or `arn:aws:states:local:…` when embedded). */
  readonly execution: string;
  /** `pid@host` of the drainbridge process that runs it, for an embedded execution. */
  readonly process?: string;
  /** When it last renewed its mark (ISO 8601). */
  readonly seen: string;
  /** When it handed the request back (Ctrl-C), if it did. */
  readonly handedBack?: string;
  /** Seconds since it last drove the request: since it handed it back, else since it was last seen. */
  readonly idleSeconds: number;
  /** Whether it still claims the request: not handed back, and seen within OWNER_TTL_SECONDS. */
  readonly live: boolean;
}

/** How a request that should be driven is: driven by a live execution, or abandoned. */
export type Driving =
  | { readonly state: 'driven'; readonly driver: RequestDriver }
  | { readonly state: 'abandoned'; readonly driver?: RequestDriver; readonly resume: string }
  /** Nothing drives it, and nothing should: it waits, ended, is being restored, or holds no node. */
  | { readonly state: 'idle'; readonly driver?: RequestDriver };

/** No renewal for longer than this and the request is abandoned (the same age a second execution takes over at). */
export const STALE_AFTER_SECONDS = OWNER_TTL_SECONDS;

const ENDED_PHASES: ReadonlySet<string> = new Set(['NodeDrained', 'Failed']);

/** The command that resumes an abandoned request: the same request again, which claims it at once. */
export function resumeCommandOf(nodeName: string, requestId: string): string {
  return `drainbridge evacuate ${nodeName} --request-id ${requestId}`;
}

function driverFrom(owner: Owner, now: Date): RequestDriver {
  const last = Date.parse(owner.released ?? owner.seen);
  return {
    execution: owner.executionId,
    ...(owner.driver ? { process: owner.driver } : {}),
    seen: owner.seen,
    ...(owner.released ? { handedBack: owner.released } : {}),
    idleSeconds: Math.max(0, Math.round((now.getTime() - last) / 1000)),
    live: isLiveOwner(owner, now),
  };
}

/**
 * Whether the request's evacuation is under way and so needs a driver: its node's ledger holds it, its
 * evacuation has not ended and no Restore of it started. `holds`: whether the ledger holds the request.
 */
export function needsDriver(record: EvacuationObject, holds: boolean): boolean {
  const phase = record.status?.phase ?? '';
  const restore = record.status?.restore;
  return holds && !ENDED_PHASES.has(phase) && !restore?.startedAt && !restore?.finishedAt;
}

/**
 * Who drives the request at `now`. An owner mark that cannot be read throws RecordUnreadable (the caller
 * reports it, with its repair): read as "nobody", a second process would evict beside a live one.
 */
export function drivingOf(record: EvacuationObject, holds: boolean, now: Date): Driving {
  const owner = readOwner(record);
  const driver = owner ? driverFrom(owner, now) : undefined;
  const known = driver ? { driver } : {};
  if (!needsDriver(record, holds)) return { state: 'idle', ...known };
  if (driver?.live) return { state: 'driven', driver };
  return { state: 'abandoned', ...known, resume: resumeCommandOf(record.spec.nodeName, record.spec.requestId) };
}

/** Whether `node`'s ledger holds `requestId` (an unreadable ledger: unknown, read as not). */
export function holdsRequest(node: V1Node | undefined, requestId: string): boolean {
  if (!node) return false;
  const read = ledgerOf(node);
  return read.status === 'ok' && Object.hasOwn(read.ledger.holds, requestId);
}

/** `pid 4242 on host-a` or the execution's name: who drives, in a few words. */
export function describeDriver(driver: RequestDriver): string {
  const name = driver.execution.slice(driver.execution.lastIndexOf(':') + 1);
  if (!driver.process) return `execution ${driver.execution}`;
  const [pid, host] = driver.process.split('@');
  return `process ${pid} on ${host} (execution ${name})`;
}

/** The sentence `drainbridge status` and a second `drainbridge evacuate` print about a request's driver. */
export function drivingSentence(driving: Driving): string | undefined {
  if (driving.state === 'driven') {
    return `driven by ${describeDriver(driving.driver)}, last seen ${driving.driver.idleSeconds} s ago`;
  }
  if (driving.state !== 'abandoned') return undefined;
  const last = driving.driver;
  if (!last) return `no process drives this request (none has claimed it) — resume: ${driving.resume}`;
  const how = last.handedBack ? 'stopped and handed the request back' : 'stopped renewing its claim';
  return `no process has driven this request for ${last.idleSeconds} s — resume: ${driving.resume} (last driven by ${describeDriver(last)}, which ${how})`;
}
