/**
 * The reconcile pass: the one shape every evacuation branch (pods, Nova, KubeVirt) implements.
 *
 * A pass is stateless between calls. Each call:
 *   1. observes the current state (the cluster, Nova) and the progress it persisted last time;
 *   2. starts whatever may start now (evictions, live migrations) within its limits;
 *   3. persists progress where the next pass can read it (the progress record);
 *   4. returns — at once, or after following what it started for a bounded time (the pods pass waits on
 *      watches for pods to leave and budgets to free up, the Nova pass polls its migrations; both at
 *      most 30 s, well inside the function's timeout), acting again as soon as something frees up.
 *
 * The workflow calls it again: straight away when it `progressed`, or after a Step Functions Retry
 * backoff when it throws `NotYetDone` because nothing changed (see lib/workflow). Completion is decided
 * there, never by a pass that sleeps until the branch is done.
 */
import type { RecordFormat } from '../util/json-record.ts';
import type { Blocker, BranchName } from './plan.ts';
import type { ResolvedRequest } from './request.ts';

/** Counts a person reads in progress lines and `kubectl get evacuations`. */
export interface BranchProgress {
  /** Items the branch must move, as first planned plus anything that arrived since. */
  readonly total: number;
  /** Items that have left the node (evicted and gone, migrated and verified). */
  readonly moved: number;
  /** Items whose move is under way (terminating pods, running migrations). */
  readonly inFlight: number;
  /** Items skipped on purpose (DaemonSet and mirror pods). */
  readonly skipped: number;
}

/** One VM's move, as the `Evacuation Progress` event reports it (KubeVirt VMIs). */
export interface VmMove {
  /** `namespace/name`. */
  readonly name: string;
  /** waiting, migrating, retry-wait, restarting, external, blocked, moved, left. */
  readonly status: string;
  /** Migrations drainbridge started for it. */
  readonly attempts: number;
  readonly migration?: string;
  /** The migration's phase (Pending … Running, Succeeded, Failed). */
  readonly phase?: string;
  readonly sourceNode: string;
  readonly targetNode?: string;
  /** Seconds since the migration was first seen (to its end, once it ended). */
  readonly elapsedSeconds?: number;
}

export interface PassResult {
  /** The branch has nothing left to do: every item has moved or is skipped. */
  readonly done: boolean;
  /** Something changed in this pass (an eviction, a migration started or finished, a pod went away). */
  readonly progressed: boolean;
  readonly progress: BranchProgress;
  /** What currently stops the branch from finishing. A blocker alone does not fail the evacuation. */
  readonly blockers: readonly Blocker[];
  /**
   * What the branch waits for that is not a blocker yet (a KubeVirt VMI whose external controller moves
   * it): reported as a blocker only if the evacuation gives up at its deadline.
   */
  readonly waiting?: readonly Blocker[];
  /** One line per item in flight, for progress lines (`vms/app-1 Running node-1 → node-2 (40 s)`). */
  readonly detail?: readonly string[];
  /** Per-VM moves (the KubeVirt branch): published in an `Evacuation Progress` event when the pass progressed. */
  readonly vms?: readonly VmMove[];
  /**
   * A limit (the drain's `--timeout`, `--skip-wait-for-delete-timeout`, the request's deadline) comes due
   * within the pass's next wait: the workflow calls it again at once, not after a retry's backoff that
   * could carry the drain tens of seconds past the limit.
   */
  readonly callAgainNow?: boolean;
}

/**
 * What a pass that fails on named items (every attempt of a server exhausted) knows at that moment: the
 * workflow records it before the evacuation fails, so that Evacuation Failed — built from the record —
 * names them even when they all failed within one pass.
 */
export interface PassFailure {
  readonly progress: BranchProgress;
  readonly blockers: readonly Blocker[];
}

/** The PassFailure an error thrown by a pass carries (`passFailure`), if any. */
export function passFailureOf(error: unknown): PassFailure | undefined {
  const failure = (error as { passFailure?: PassFailure } | null | undefined)?.passFailure;
  return failure && Array.isArray(failure.blockers) ? failure : undefined;
}

export interface PassInput {
  readonly request: ResolvedRequest;
  /** The instant the pass runs at; injected so that planning stays pure and testable. */
  readonly now: Date;
  /** When the evacuation started (ISO 8601), for option timeouts such as the drain `--timeout`. */
  readonly startedAt: string;
  /**
   * Throws when the request must stop (restored, aborted, taken over by another execution) — the checks
   * the workflow makes before every step. A pass that goes on within itself asks before it starts
   * anything after its first round.
   */
  readonly stillWanted?: () => Promise<void>;
  /**
   * Publishes a round's progress while the pass goes on within itself (a migration started or ended), so
   * that what the workflow publishes per pass (Evacuation Progress with `vms`) still comes per move; the
   * pass's last round is published by the workflow when it returns.
   */
  readonly reportProgress?: (result: PassResult) => Promise<void>;
}

/** One branch of an evacuation, driven pass by pass. */
export interface ReconcilePass {
  readonly branch: BranchName;
  run(input: PassInput): Promise<PassResult>;
}

/**
 * Where passes keep what the next pass needs (per-pod backoff, per-server migration ids). Keyed by
 * request and branch; `version` is an optimistic-concurrency token (a resourceVersion) so that two
 * overlapping executions cannot both write from a stale read.
 */
export interface ProgressStore {
  /**
   * The branch's state, checked against its format (lib/util/json-record.ts); a state that does not
   * match throws RecordUnreadable — never read as a fresh start.
   */
  read<S>(
    requestId: string,
    branch: BranchName,
    format: RecordFormat<S>,
  ): Promise<{ state: S; version: string } | undefined>;
  /** Writes `state`; throws `ConflictError` when `expectedVersion` no longer matches. */
  write<S>(requestId: string, branch: BranchName, state: S, expectedVersion: string | undefined): Promise<string>;
}
