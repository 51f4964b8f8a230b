/**
 * Every error name drainbridge throws, and what each means to the state machines and to the people on
 * call — one registry. Step Functions matches Retry/Catch on the name (Lambda reports `err.name` as the
 * error type), the failure metric and the log level follow `expected`, and a test checks every
 * `ErrorEquals` list of the packaged state machines against this table (test/unit/errors/registry.test.ts),
 * as well as that every `this.name = '…'` in lib/ is listed here.
 */

/**
 * How the state machines handle an error thrown by a task:
 * - `transient`: retried with backoff by every Task state (it may pass on its own);
 * - `transient-after-start`: retried by every Task after ResolveTarget, not by ResolveTarget itself (the
 *   execution's first contact with the cluster: failing there is configuration, reported at once);
 * - `poll`: a branch pass made no progress; its pass state retries it (Step Functions polling);
 * - `wait`: Admit catches it into a wait that a freed slot wakes (WaitForSlot, WaitInLine) — or, behind another
 *   execution of the same request, which nothing wakes, retries it — until the request is admitted;
 * - `rewait`: WaitInLine could not park its wake-up token; it catches the error into WaitForSlot (a short wait);
 * - `cancel` / `skip`: caught into their own end states (Cancelled, Skipped);
 * - `fail`: caught by `States.ALL` (RecordFailure in Evacuate, Rejected at ResolveTarget);
 * - `none`: never leaves a task (CLI parsing, patterns checked at packaging, internal wrappers).
 */
export type ErrorHandling =
  | 'transient'
  | 'transient-after-start'
  | 'poll'
  | 'wait'
  | 'rewait'
  | 'cancel'
  | 'skip'
  | 'fail'
  | 'none';

export interface ErrorSpec {
  readonly handling: ErrorHandling;
  /**
   * Part of normal operation, not a failure: logged at INFO and not counted in the `StepFailures` metric
   * (the alarm), e.g. every NotYetDone poll and every duplicate delivery.
   */
  readonly expected: boolean;
  /** What it means, for the README and for whoever reads the alarm. */
  readonly meaning: string;
}

export const ERROR_REGISTRY = {
  NotYetDone: { handling: 'poll', expected: true, meaning: 'a branch pass made no progress yet (polling)' },
  SlotUnavailable: {
    handling: 'wait',
    expected: true,
    meaning:
      'no maintenance slot is free yet; near the front of the line, the request sleeps until a slot frees (woken) or 10 s pass',
  },
  AdmissionBusy: {
    handling: 'wait',
    expected: true,
    meaning:
      'another request holds the admission lock while it decides; admission is tried again within 1–8 s (full jitter), then waits as SlotUnavailable',
  },
  WaitingInLine: {
    handling: 'wait',
    expected: true,
    meaning: 'no maintenance slot is coming soon (further back in line); admission is tried again every minute',
  },
  RequestRunningElsewhere: {
    handling: 'wait',
    expected: true,
    meaning:
      'another execution of the same request runs (or its claim has not expired); admission is tried again every 0–10 s',
  },
  TokenNotParked: {
    handling: 'rewait',
    expected: true,
    meaning:
      'WaitInLine could not park its wake-up token (no place on the Lease yet, or the admission lock was held): it waits in WaitForSlot instead (10 s), not a minute',
  },
  SkipEvent: {
    handling: 'skip',
    expected: true,
    meaning: 'a duplicate delivery or a late duplicate of a released request, dropped',
  },
  EvacuationCancelled: {
    handling: 'cancel',
    expected: true,
    meaning: "a Restore released this request's hold while its Evacuate ran",
  },
  EvacuationAborted: {
    handling: 'fail',
    expected: true,
    meaning: 'an operator aborted the evacuation (drainbridge abort); the safe state is kept',
  },
  EvacuationRefused: {
    handling: 'fail',
    expected: false,
    meaning: 'a safety blocker (etcd quorum) refuses the evacuation before the node is cordoned; nothing was changed',
  },
  TransientError: { handling: 'transient', expected: false, meaning: 'an external call failed in a way that may pass' },
  ConflictError: { handling: 'transient', expected: false, meaning: 'a write lost an optimistic-concurrency race' },
  ClusterUnreachable: {
    handling: 'transient-after-start',
    expected: false,
    meaning: 'the Kubernetes API could not be reached on the first call (configuration)',
  },
  DeadlineExceeded: { handling: 'fail', expected: false, meaning: "the request's deadline or the maximum time passed" },
  EvacuationFailed: { handling: 'fail', expected: false, meaning: 'the evacuation cannot continue' },
  RecordUnreadable: {
    handling: 'fail',
    expected: false,
    meaning: 'a record drainbridge keeps in the cluster is damaged; an operator must repair it',
  },
  InvalidInput: { handling: 'fail', expected: false, meaning: 'an input that can never succeed' },
  TargetNotFound: { handling: 'fail', expected: false, meaning: 'the target names no node' },
  ConfigError: { handling: 'fail', expected: false, meaning: 'the configuration cannot work' },
  KubeApiError: { handling: 'fail', expected: false, meaning: 'the Kubernetes API refused a call (403, 404, 422, …)' },
  OpenStackHttpError: { handling: 'fail', expected: false, meaning: 'an OpenStack API refused a call' },
  NovaActionError: { handling: 'fail', expected: false, meaning: 'a Nova server action failed' },
  DrainbridgeError: { handling: 'fail', expected: false, meaning: 'the base class (never thrown as such)' },
  NoticeParseError: { handling: 'fail', expected: false, meaning: 'a cloud maintenance notice that cannot be read' },
  SelectorParseError: { handling: 'none', expected: false, meaning: 'a label selector that cannot be parsed' },
  PatternProblem: { handling: 'none', expected: false, meaning: 'an EventBridge pattern that cannot be compiled' },
  PutEventsError: {
    handling: 'none',
    expected: false,
    meaning: "drainbridge run's bus endpoint refuses a PutEvents call (answered to the caller as EventBridge would)",
  },
  NothingToWatch: {
    handling: 'none',
    expected: false,
    meaning: "the forwarder's informer: a list gave no resourceVersion to watch from (retried by the informer)",
  },
} as const satisfies Record<string, ErrorSpec>;

export type ErrorName = keyof typeof ERROR_REGISTRY;

/** The registry's entry for a name, or undefined for a name drainbridge does not throw. */
export function errorSpec(name: string): ErrorSpec | undefined {
  return Object.hasOwn(ERROR_REGISTRY, name) ? ERROR_REGISTRY[name as ErrorName] : undefined;
}

/** Whether an error of this name is part of normal operation (no metric, INFO log). */
export function isExpectedError(name: string): boolean {
  return errorSpec(name)?.expected === true;
}

/** Whether an error of this name means "waiting for a maintenance slot" (next in line or further back). */
export function isSlotWait(name: string | undefined): boolean {
  return name !== undefined && errorSpec(name)?.handling === 'wait';
}

/**
 * Whether a step that failed with this name was only waiting — polling (`poll`), waiting for a slot
 * (`wait`), or a wait that could not park its token (`rewait`) — and so is no step failure to warn about.
 */
export function isWaitingStep(name: string | undefined): boolean {
  const handling = name === undefined ? undefined : errorSpec(name)?.handling;
  return handling === 'poll' || handling === 'wait' || handling === 'rewait';
}
