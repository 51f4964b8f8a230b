/**
 * The few named errors drainbridge throws. Step Functions Retry/Catch match on `error.name`
 * (Lambda reports `err.name` as errorType), so every class sets an explicit, stable `name`.
 */

/** Base for drainbridge's errors: a stable name and an optional cause. */
export class DrainbridgeError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'DrainbridgeError';
  }
}

/** One field that failed validation: a dotted path and what is wrong with it. */
export interface FieldProblem {
  readonly path: string;
  readonly message: string;
}

/**
 * Input that can never succeed (a bad event, a bad invocation). Not retried. Nothing was changed.
 * The message names every bad field.
 */
export class InvalidInput extends DrainbridgeError {
  readonly problems: readonly FieldProblem[];
  constructor(what: string, problems: readonly FieldProblem[]) {
    super(`${what}: ${problems.map((p) => (p.path ? `${p.path}: ${p.message}` : p.message)).join('; ')}`);
    this.name = 'InvalidInput';
    this.problems = problems;
  }
}

/** Configuration that cannot work; lists every problem, with secret values redacted. */
export class ConfigError extends DrainbridgeError {
  readonly problems: readonly FieldProblem[];
  constructor(problems: readonly FieldProblem[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p.path}: ${p.message}`).join('\n')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

/**
 * A reconcile pass made no progress and is not done: the workflow retries it with backoff.
 * Expected, not a failure — it is excluded from the failure metric.
 */
export class NotYetDone extends DrainbridgeError {
  constructor(message: string) {
    super(message);
    this.name = 'NotYetDone';
  }
}

/** The request's deadline or an option timeout passed. Not retried; the workflow leaves the safe state. */
export class DeadlineExceeded extends DrainbridgeError {
  constructor(message: string) {
    super(message);
    this.name = 'DeadlineExceeded';
  }
}

/**
 * No maintenance slot is free for this node yet, and the request is near the front of the line (the next
 * round of releases admits it): the workflow retries admission every few seconds, oldest request first.
 */
export class SlotUnavailable extends DrainbridgeError {
  constructor(message: string) {
    super(message);
    this.name = 'SlotUnavailable';
  }
}

/**
 * Another request holds the admission lock for the moment it takes to decide (a few API calls), and this
 * one has no place near the back of the line to wait on. Admit's own Retry asks again within 1–8 s with
 * full jitter, so requests that arrive together pass the lock one after another instead of all waiting
 * out WaitForSlot's 10 s and meeting at the lock again; when those retries run out it waits as a
 * SlotUnavailable. A SlotUnavailable to everything that catches one.
 */
export class AdmissionBusy extends SlotUnavailable {
  constructor(message: string) {
    super(message);
    this.name = 'AdmissionBusy';
  }
}

/**
 * WaitInLine could not park its wake-up token — the request has no place on the Lease yet, or the write
 * kept losing to the admission mutex — so no freed slot could wake it during its minute's fallback:
 * WaitInLine catches this into WaitForSlot, which tries to park again and falls back after 10 s. A
 * request simply too far back to park still sleeps its minute.
 */
export class TokenNotParked extends DrainbridgeError {
  constructor(message: string) {
    super(message);
    this.name = 'TokenNotParked';
  }
}

/**
 * No slot is coming soon: the request waits further back in line (at least twice as many requests wait
 * ahead of it as there are slots) or on a label-selector limit. It sleeps in WaitInLine: woken by the
 * watch of the admission Lease when a slot comes to it, else it asks again within a minute. A
 * SlotUnavailable to everything that catches one.
 */
export class WaitingInLine extends SlotUnavailable {
  constructor(message: string) {
    super(message);
    this.name = 'WaitingInLine';
  }
}

/**
 * Another execution of the same request runs (or was killed and its claim has not expired yet): this one
 * waits for it to end. Nothing on the admission Lease changes when it does — no watch can wake it — so it
 * is retried every 0–10 s (Admit's Retry), as every wait was before wake-ups: a process re-run after a
 * crash takes over within seconds of the old claim's expiry, not at a minute's fallback.
 */
export class RequestRunningElsewhere extends WaitingInLine {
  constructor(message: string) {
    super(message);
    this.name = 'RequestRunningElsewhere';
  }
}

/** The target names no node (or an ambiguous one). Not retried. */
/**
 * The one wording of a node that does not exist, in every command and log: `node "x" not found`
 * (kubectl says `nodes "x" not found`).
 */
export function nodeNotFound(nodeName: string): string {
  return `node "${nodeName}" not found`;
}

export class TargetNotFound extends DrainbridgeError {
  constructor(message: string) {
    super(message);
    this.name = 'TargetNotFound';
  }
}

/**
 * An input to acknowledge and drop (a duplicate of a finished request, an event for a node we do not
 * manage). Not an error for alarms; the caller returns normally after logging why.
 */
export class SkipEvent extends DrainbridgeError {
  constructor(message: string) {
    super(message);
    this.name = 'SkipEvent';
  }
}

/** An optimistic-concurrency conflict (HTTP 409, stale resourceVersion). Retried by re-reading. */
export class ConflictError extends DrainbridgeError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ConflictError';
  }
}

/**
 * A failure of an external system that may pass (timeouts, 5xx, 429 without a budget cause, connection
 * resets). Retried with backoff by `withRetry`, and by the workflow when it escapes a step.
 */
export class TransientError extends DrainbridgeError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TransientError';
  }
}

/** The evacuation cannot continue (node deleted, no nova-compute service, migration failures over the limit). */
export class EvacuationFailed extends DrainbridgeError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'EvacuationFailed';
  }
}

/**
 * This request's hold was released (a Restore ran) while its Evacuate was still running: the Evacuate
 * stops without recording a failure, because the node has already been restored.
 */
export class EvacuationCancelled extends DrainbridgeError {
  constructor(message: string) {
    super(message);
    this.name = 'EvacuationCancelled';
  }
}

/**
 * A safety blocker refuses the evacuation before the node is touched (etcd quorum: lib/branches/pods/quorum.ts).
 * Not retried; the workflow records the failure, the node is left as it was (not cordoned by drainbridge).
 */
export class EvacuationRefused extends DrainbridgeError {
  constructor(message: string) {
    super(message);
    this.name = 'EvacuationRefused';
  }
}

/** An operator asked to stop (`drainbridge abort`): the evacuation fails and keeps the safe state. */
export class EvacuationAborted extends DrainbridgeError {
  constructor(message: string) {
    super(message);
    this.name = 'EvacuationAborted';
  }
}

/**
 * A record drainbridge keeps in the cluster (the node's ledger, the admission queue, a request's owner
 * claim or branch state) that this build cannot read: not JSON, the wrong shape, or a newer format.
 * Never read as empty — that lost holds and uncordoned nodes under maintenance (issue 12). It is a
 * blocker: nothing more is done to what the record is about until an operator repairs it
 * (`drainbridge repair NODE`). Not retried: re-reading the same bytes cannot cure it.
 */
export class RecordUnreadable extends DrainbridgeError {
  /** What the record is and where it lives (`ledger (node annotation drainbridge.io/ledger)`). */
  readonly record: string;
  /** The node it concerns, when it concerns one. */
  readonly nodeName: string | undefined;
  /** Why it cannot be read (the first schema problem, `not JSON (…)`, a newer version). */
  readonly reason: string;
  constructor(record: { what: string; reason: string; nodeName?: string }) {
    const node = record.nodeName ?? 'NODE';
    super(
      `${record.reason} — drainbridge will not act on node ${node} until an operator repairs the record (drainbridge repair ${node})`,
    );
    this.name = 'RecordUnreadable';
    this.record = record.what;
    this.nodeName = record.nodeName;
    this.reason = record.reason;
  }
}

/**
 * The Kubernetes API could not be reached at all on this client's first call (connection refused, no
 * such host, a TLS certificate that does not match): almost always configuration, so it is reported at
 * once instead of retried for a minute. Once the client has had an answer, the same faults are a
 * TransientError (the cluster was working and failed: worth retrying).
 */
export class ClusterUnreachable extends DrainbridgeError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ClusterUnreachable';
  }
}

export {
  ERROR_REGISTRY,
  type ErrorHandling,
  type ErrorName,
  errorSpec,
  isExpectedError,
  isSlotWait,
} from './registry.ts';
