/** Steps that end an evacuation (success or failure) and the Restore machine's steps. */
import { z } from 'zod';
import { leaveQueue, noteReleased } from '../../admission/index.ts';
import { BLOCKER_CODES, type Blocker, type BlockerCode } from '../../domain/plan.ts';
import { type BranchSpan, shortReason } from '../../domain/timeline.ts';
import { EvacuationFailed, RecordUnreadable } from '../../errors/index.ts';
import type { Phase } from '../../events/contracts.ts';
import type { TaskSpec } from '../../lambda/task.ts';
import { readNodeOrFail, releaseHold, setPhase } from '../../node/hold.ts';
import { ledgerOf, readLedger } from '../../node/ledger.ts';
import { reportBlocked } from '../blocked.ts';
import { cancelBranches } from '../branches/registry.ts';
import { depsFromEnvironment, type WorkflowDeps } from '../deps.ts';
import type { NovaRestored } from '../nova-port.ts';
import { errorFromCatch, failedEvent, restoredEvent, succeededEvent } from '../outcomes.ts';
import { sweepRecords } from '../record-expiry.ts';
import { TaskInput } from '../state.ts';
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
    try {
      const node = await readNodeOrFail(deps.kube, input.request.nodeName);
      // A damaged ledger is left exactly as it is: no phase written to a node drainbridge cannot read.
      const read = ledgerOf(node);
      if (read.status === 'ok' && read.ledger.holds[input.request.requestId])
        await setPhase(deps.kube, input.request.nodeName, 'Failed', tools.now());
    } catch (caught) {
      if (!(caught instanceof EvacuationFailed)) throw caught;
    }
    // A request that failed while it waited for a slot leaves the line now (else it blocks it for minutes).
    await leaveQueue(deps.kube, deps.config.namespace, input.request.requestId, tools.now()).catch(
      (caught: unknown) => {
        tools.logger.warn('could not leave the admission queue', { reason: (caught as Error).message });
      },
    );
    const record = await deps.progress.ensure(input.request, tools.now());
    await deps.progress.setPhase(input.request.requestId, 'Failed', tools.now());
    await deps.progress.recordError(input.request.requestId, `${error.name}: ${error.message}`);
    const branches = Object.values(record.status?.branches ?? {});
    const blockers = blockersOf(branches, error.name === 'DeadlineExceeded');
    await deps.publisher.publish(
      'Evacuation Failed',
      failedEvent(input.request, input.executionId, { phase: 'Failed', error, blockers }),
    );
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
    const result = await reportingBlocked(deps, input, tools.now(), () =>
      releaseHold(deps.kube, request.nodeName, request.requestId, {
        now: tools.now(),
        ledger: ledgerSettings(deps.config),
      }),
    );
    if (result.last && !result.nodeGone) await setPhase(deps.kube, request.nodeName, 'NodeUncordoned', tools.now());
    // The slot is free: the requests next in line see it from the admission Lease at their next attempt.
    if (result.last) {
      await noteReleased(deps.kube, deps.config.namespace, request.nodeName, tools.now()).catch((caught: unknown) => {
        tools.logger.warn('could not note the free slot on the admission Lease', { reason: (caught as Error).message });
      });
    }
    const summary = result.last ? JSON.stringify(result.restored) : 'other holds remain';
    tools.logger.info('hold released', { lastHold: result.last, restored: summary });
    const kept = result.restored.cordonKeptFor;
    const leftAlone = kept
      ? [`node ${request.nodeName} stays cordoned: ${kept} cordoned it after drainbridge did (managedFields)`]
      : [];
    return {
      lastHold: result.last,
      uncordoned: result.restored.uncordoned,
      nodeGone: result.nodeGone,
      restoredSummary: summary,
      leftAlone,
    };
  },
};

export const restoreNovaTask: TaskSpec<TaskInput, NovaRestored, WorkflowDeps> = {
  name: 'restoreNova',
  input: TaskInput,
  deps: depsFromEnvironment,
  run: async (input, deps, tools) => {
    // This request's hold was the last: the node's earlier holds (now tombstones) disabled Nova for the same maintenance.
    let others: string[] = [];
    try {
      const node = await readNodeOrFail(deps.kube, input.request.nodeName);
      const ledger = await reportingBlocked(deps, input, tools.now(), async () => readLedger(node));
      others = Object.keys(ledger.released).filter((id) => id !== input.request.requestId);
    } catch (error) {
      if (!(error instanceof EvacuationFailed)) throw error;
    }
    // Every branch's in-flight moves stop first (servers stay where they are), then the service.
    const requestIds = [input.request.requestId, ...others];
    const cancelled = await reportingBlocked(deps, input, tools.now(), () =>
      cancelBranches(deps, requestIds, input.request.nodeName),
    );
    const service = await deps.nova.restore(input.request, others);
    return {
      serviceEnabled: service.serviceEnabled,
      abortedMigrations: cancelled.aborted,
      leftAlone: [...service.leftAlone, ...cancelled.leftAlone],
    };
  },
};

const FinishRestoreInput = TaskInput.extend({
  release: z.looseObject({
    lastHold: z.boolean(),
    uncordoned: z.boolean(),
    leftAlone: z.array(z.string()).optional(),
  }),
  nova: z.looseObject({ serviceEnabled: z.boolean().optional(), leftAlone: z.array(z.string()).optional() }),
});
type FinishRestoreInput = TaskInput & {
  readonly release: Released;
  readonly nova: Partial<NovaRestored> & { skipped?: boolean };
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
      novaServiceEnabled: input.nova.serviceEnabled ?? false,
      leftAlone: [...(input.release.leftAlone ?? []), ...(input.nova.leftAlone ?? [])],
    });
    await deps.publisher.publish('Node Restored', event);
    // Every Restore ends a request: records of requests restored long enough ago go (lib/progress/expiry.ts).
    await sweepRecords(deps, tools);
    return { published: true };
  },
};
