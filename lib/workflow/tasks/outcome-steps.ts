/** Steps that end an evacuation (success or failure) and the Restore machine's steps. */
import { z } from 'zod';
import { leaveQueue, noteReleased } from '../../admission/index.ts';
import type { BranchRestored } from '../../branches/contract/branch.ts';
import { cancelBranches, restoreBranches } from '../../branches/registry.ts';
import type { Phase } from '../../bus/contracts/contracts.ts';
import { EvacuationFailed, RecordUnreadable } from '../../errors/index.ts';
import type { TaskSpec } from '../../lambda/task.ts';
import { BLOCKER_CODES, type Blocker, type BlockerCode } from '../../model/plan.ts';
import { type BranchSpan, shortReason } from '../../model/timeline.ts';
import { readNodeOrFail, releaseHold, setPhase } from '../../node/hold.ts';
import { ledgerOf, readLedger } from '../../node/ledger.ts';
import { reportBlocked } from '../blocked.ts';
import { noteFailureOnBreaker } from '../breaker.ts';
import { depsFromEnvironment, type WorkflowDeps } from '../deps.ts';
import { errorFromCatch, failedEvent, restoredEvent, succeededEvent } from '../outcomes.ts';
import { sweepRecords } from '../record-expiry.ts';
import { TaskInput } from '../state.ts';
import { reportUnreadableEnd } from '../unreadable-end.ts';
import { advancePhase, ledgerSettings } from './evacuate-steps.ts';

export const finishEvacuationTask: TaskSpec<TaskInput, { phase: Phase }, WorkflowDeps> = {
  name: 'finishEvacuation',
  input: TaskInput,
  deps: depsFromEnvironment,
  run: async (input, deps, tools) => {
    await advancePhase(deps, input, 'NodeDrained', tools);
    const record = await deps.progress.ensure(input.request, tools.now());
    const progress = Object.fromEntries(
      Object.entries(record.status?.branches ?? {}).map(([branch, s]) => [
        branch,
        { total: s.total ?? 0, moved: s.moved ?? 0, inFlight: s.inFlight ?? 0, skipped: s.skipped ?? 0 },
      ]),
    );
    const event = succeededEvent(input.request, input.executionId, {
      progress,
      startedAt: input.startedAt,
      now: tools.now(),
    });
    await deps.publisher.publish('Evacuation Succeeded', event);
    return { phase: 'NodeDrained' };
  },
};

const FailInput = TaskInput.extend({
  error: z.looseObject({ Error: z.string().optional(), Cause: z.string().optional() }),
});
type FailInput = TaskInput & { readonly error: { Error?: string; Cause?: string } };

type RecordedBranch = { blockers?: string[]; waiting?: string[]; blockerSpans?: BranchSpan[] };

/**
 * The branches' blockers with their codes: the record keeps each blocker's sentence, and its code on the
 * blocker's open span (a sentence no open span matches is `Other`).
 */
function blockersOf(branches: readonly RecordedBranch[], withWaiting: boolean): Blocker[] {
  return branches.flatMap((branch) => {
    const open = (branch.blockerSpans ?? []).filter((span) => span.to === undefined);
    const codeOf = (reason: string): BlockerCode => {
      const span = open.find((candidate) => candidate.reason === shortReason(reason));
      return BLOCKER_CODES.find((code) => code === span?.code) ?? 'Other';
    };
    // What was only waited for (External VMIs) becomes a blocker when the evacuation gives up at its deadline.
    const reasons = [...(branch.blockers ?? []), ...(withWaiting ? (branch.waiting ?? []) : [])];
    return reasons.map((reason): Blocker => ({ code: codeOf(reason), reason }));
  });
}

/**
 * Writes phase Failed on the node when `request` holds it; says whether it does. A damaged ledger is left
 * exactly as it is (no phase written to a node drainbridge cannot read): `unknown`. A node gone holds nothing.
 */
async function markNodeFailedIfHeld(
  deps: WorkflowDeps,
  request: TaskInput['request'],
  now: Date,
): Promise<'held' | 'not held' | 'unknown'> {
  try {
    const read = ledgerOf(await readNodeOrFail(deps.kube, request.nodeName));
    if (read.status !== 'ok') return 'unknown';
    if (!read.ledger.holds[request.requestId]) return 'not held';
    await setPhase(deps.kube, request.nodeName, 'Failed', now);
    return 'held';
  } catch (caught) {
    if (!(caught instanceof EvacuationFailed)) throw caught;
    return 'not held';
  }
}

/**
 * Records the failure and publishes Evacuation Failed. Changes nothing else: the node stays cordoned,
 * nova-compute stays disabled and the hold is kept until a Restore — the safe state. A node that is
 * gone, or that this request no longer holds, gets no phase written.
 */
export const failEvacuationTask: TaskSpec<FailInput, { phase: Phase }, WorkflowDeps> = {
  name: 'failEvacuation',
  input: FailInput,
  deps: depsFromEnvironment,
  run: async (input, deps, tools) => {
    const error = errorFromCatch(input.error);
    tools.logger.warn('evacuation failed', { errorType: error.name, reason: error.message });
    // An operator's abort also stops drainbridge's live migrations; the VMs stay where they are.
    if (error.name === 'EvacuationAborted')
      await cancelBranches(deps, [input.request.requestId], input.request.nodeName);
    if (error.name === 'RecordUnreadable') {
      const problems = await reportBlocked(
        deps,
        input.request,
        { error: error.name, message: error.message },
        tools.now(),
      );
      for (const problem of problems)
        tools.logger.warn('could not report the blocked request', { reason: problem.message });
    }
    const hold = await markNodeFailedIfHeld(deps, input.request, tools.now());
    // A request that failed while it waited for a slot leaves the line now (else it blocks it for minutes).
    await leaveQueue(deps.kube, deps.config.namespace, input.request.requestId, tools.now()).catch(
      (caught: unknown) => {
        tools.logger.warn('could not leave the admission queue', { reason: (caught as Error).message });
      },
    );
    const record = await deps.progress.ensure(input.request, tools.now());
    await deps.progress.setPhase(input.request.requestId, 'Failed', tools.now());
    await deps.progress.recordError(input.request.requestId, `${error.name}: ${error.message}`);
    // Never held (failed in line, aborted there): nothing to restore, and perhaps no Restore ever — it ends
    // here, so its record expires (expiry.ts). Only the request's own record: a reused id names another node.
    if (hold === 'not held' && record.spec.nodeName === input.request.nodeName)
      await deps.progress.markEnded(input.request.requestId, tools.now(), {
        outcome: error.name === 'EvacuationAborted' ? 'aborted' : 'failed',
        why: `${error.name}: ${error.message}`,
      });
    const branches = Object.values(record.status?.branches ?? {});
    const blockers = blockersOf(branches, error.name === 'DeadlineExceeded');
    await deps.publisher.publish(
      'Evacuation Failed',
      failedEvent(input.request, input.executionId, { phase: 'Failed', error, blockers }),
    );
    // Only an evacuation that started counts: one that failed in line says nothing about the fleet.
    if (hold === 'held') {
      const failed = { request: input.request, executionId: input.executionId, errorName: error.name };
      await noteFailureOnBreaker(deps, failed, tools);
    }
    return { phase: 'Failed' };
  },
};

export interface Released {
  readonly lastHold: boolean;
  readonly uncordoned: boolean;
  readonly nodeGone: boolean;
  readonly restoredSummary: string;
  /** What the release saw and left alone, for `Node Restored` (a cordon someone else set after drainbridge's). */
  readonly leftAlone: readonly string[];
}

/**
 * Runs `step`; a RecordUnreadable it throws is reported (node Event, Evacuation record) before it ends the
 * Restore: the node is left as it is, and the operator learns why from the node, the record and the
 * execution's error.
 */
async function reportingBlocked<T>(
  deps: WorkflowDeps,
  input: TaskInput,
  now: Date,
  step: () => Promise<T>,
): Promise<T> {
  try {
    return await step();
  } catch (error) {
    if (error instanceof RecordUnreadable) {
      await reportBlocked(deps, input.request, { error: error.name, message: error.message }, now);
    }
    throw error;
  }
}

export const releaseHoldTask: TaskSpec<TaskInput, Released, WorkflowDeps> = {
  name: 'releaseHold',
  input: TaskInput,
  deps: depsFromEnvironment,
  run: async (input, deps, tools) => {
    const { request } = input;
    await deps.progress.markRestore(request.requestId, 'startedAt', tools.now());
    await reportUnreadableEnd(deps, request, tools);
    const result = await reportingBlocked(deps, input, tools.now(), () =>
      releaseHold(deps.kube, request.nodeName, request.requestId, {
        now: tools.now(),
        ledger: ledgerSettings(deps.config),
      }),
    );
    if (result.last && !result.nodeGone) await setPhase(deps.kube, request.nodeName, 'NodeUncordoned', tools.now());
    // Ended before it held the node (a notice withdrawn while its request waited in line): its place goes
    // now, not when its Evacuate next looks (up to WaitInLine's minute) or the place expires.
    if (result.neverHeld) {
      await leaveQueue(deps.kube, deps.config.namespace, request.requestId, tools.now()).catch((caught: unknown) => {
        tools.logger.warn('could not leave the admission queue', { reason: (caught as Error).message });
      });
    }
    // The slot is free: the requests next in line see it from the admission Lease at their next attempt.
    if (result.last) {
      await noteReleased(deps.kube, deps.config.namespace, request.nodeName, tools.now()).catch((caught: unknown) => {
        tools.logger.warn('could not note the free slot on the admission Lease', { reason: (caught as Error).message });
      });
    }
    const summary = result.last ? JSON.stringify(result.restored) : 'other holds remain';
    const kept = result.restored.cordonKeptFor;
    const leftAlone = kept
      ? [`node ${request.nodeName} stays cordoned: ${kept} cordoned it after drainbridge did (managedFields)`]
      : [];
    const release = {
      lastHold: result.last,
      uncordoned: result.restored.uncordoned,
      restoredSummary: summary,
      leftAlone,
    };
    if (result.alreadyReleased)
      return { ...(await earlierRelease(deps, input, release, tools)), nodeGone: result.nodeGone };
    tools.logger.info('hold released', { lastHold: result.last, restored: summary });
    await deps.progress.markReleased(request.requestId, release);
    return { ...release, nodeGone: result.nodeGone };
  },
};

/**
 * A Restore that finds the hold released already: resumed after its release (drainbridge run restarted
 * mid-Restore), or a second Maintenance Ended racing the first. It reports what the first release did, as
 * the record kept it, and says in `leftAlone` that this Restore changed nothing — so a consumer counts one
 * acting Restore per request whatever the order (else, killed between the release and that write, only
 * that the hold was released before).
 */
async function earlierRelease(
  deps: WorkflowDeps,
  input: TaskInput,
  now: Omit<Released, 'nodeGone'>,
  tools: { logger: { info(message: string, extra: Record<string, unknown>): void } },
): Promise<Omit<Released, 'nodeGone'>> {
  const recorded = await deps.progress.recordedRelease(input.request.requestId);
  tools.logger.info('hold released before (a resumed or repeated Restore)', { recorded: recorded !== undefined });
  const id = input.request.requestId;
  if (!recorded) {
    const note = `the hold of ${id} was released by an earlier Restore whose outcome was not recorded; this one changed nothing`;
    return { ...now, leftAlone: [...now.leftAlone, note] };
  }
  const note = `the hold of ${id} was released by an earlier Restore (reported here as it kept it); this one changed nothing`;
  return { ...recorded, leftAlone: [...(recorded.leftAlone ?? []), note] };
}

/** What the RestoreBranches step did: the moves it stopped, what the branches left alone, their event fields. */
export interface BranchesRestored extends Required<BranchRestored> {
  /** Moves drainbridge had in flight and stopped (live migrations aborted; the VMs stay where they are). */
  readonly abortedMigrations: number;
}

export const restoreBranchesTask: TaskSpec<TaskInput, BranchesRestored, WorkflowDeps> = {
  name: 'restoreBranches',
  input: TaskInput,
  deps: depsFromEnvironment,
  run: async (input, deps, tools) => {
    // This request's hold was the last: the node's earlier holds (now tombstones) prepared the branches for the same maintenance.
    let others: string[] = [];
    try {
      const node = await readNodeOrFail(deps.kube, input.request.nodeName);
      const ledger = await reportingBlocked(deps, input, tools.now(), async () => readLedger(node));
      others = Object.keys(ledger.released).filter((id) => id !== input.request.requestId);
    } catch (error) {
      if (!(error instanceof EvacuationFailed)) throw error;
    }
    // Every branch's in-flight moves stop first (VMs stay where they are), then each branch undoes its prepare.
    const requestIds = [input.request.requestId, ...others];
    const cancelled = await reportingBlocked(deps, input, tools.now(), () =>
      cancelBranches(deps, requestIds, input.request.nodeName),
    );
    const restored = await restoreBranches(deps, input.request, others);
    return {
      abortedMigrations: cancelled.aborted,
      leftAlone: [...restored.leftAlone, ...cancelled.leftAlone],
      restoredFields: restored.restoredFields,
    };
  },
};

const FinishRestoreInput = TaskInput.extend({
  release: z.looseObject({
    lastHold: z.boolean(),
    uncordoned: z.boolean(),
    leftAlone: z.array(z.string()).optional(),
  }),
  branches: z.looseObject({
    restoredFields: z.looseObject({ novaServiceEnabled: z.boolean().optional() }).optional(),
    leftAlone: z.array(z.string()).optional(),
  }),
});
type FinishRestoreInput = TaskInput & {
  readonly release: Released;
  /** RestoreBranches' output, or `{ skipped: true }` when other holds remain. */
  readonly branches: Partial<BranchesRestored> & { skipped?: boolean };
};

export const finishRestoreTask: TaskSpec<FinishRestoreInput, { published: true }, WorkflowDeps> = {
  name: 'finishRestore',
  input: FinishRestoreInput,
  deps: depsFromEnvironment,
  run: async (input, deps, tools) => {
    await deps.progress.markRestore(input.request.requestId, 'finishedAt', tools.now());
    const event = restoredEvent(input.request, input.executionId, {
      lastHold: input.release.lastHold,
      uncordoned: input.release.uncordoned,
      novaServiceEnabled: input.branches.restoredFields?.novaServiceEnabled ?? false,
      leftAlone: [...(input.release.leftAlone ?? []), ...(input.branches.leftAlone ?? [])],
    });
    await deps.publisher.publish('Node Restored', event);
    // Every Restore ends a request: records of requests restored long enough ago go (lib/progress/expiry.ts).
    await sweepRecords(deps, tools);
    return { published: true };
  },
};
