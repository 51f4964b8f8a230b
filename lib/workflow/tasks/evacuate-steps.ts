/**
 * The Evacuate machine's steps after ResolveTarget. Each is one Lambda function: validate (by the
 * shell), guard, act through lib/node or a branch of the registry (branches/), record progress, publish at
 * phase changes.
 */

import type { Config } from '../../config/index.ts';
import type { PassResult } from '../../domain/pass.ts';
import type { BranchName } from '../../domain/plan.ts';
import { EvacuationAborted, NotYetDone, SkipEvent, SlotUnavailable } from '../../errors/index.ts';
import type { TaskSpec, TaskTools } from '../../lambda/task.ts';
import { readNodeOrFail, setPhase } from '../../node/hold.ts';
import type { LedgerSettings } from '../../node/ledger.ts';
import type { NodePhase } from '../../node/phase.ts';
import { type Admitted, admitRequest } from '../admission.ts';
import { branchNamed } from '../branches/registry.ts';
import { depsFromEnvironment, type WorkflowDeps } from '../deps.ts';
import { checkDeadline, guardStep } from '../guard.ts';
import type { NovaPrepared } from '../nova-port.ts';
import { progressEvent } from '../outcomes.ts';
import { describeOwner, reconcileOwnership } from '../ownership.ts';
import { PassTaskInput, TaskInput } from '../state.ts';

export function ledgerSettings(config: Config): LedgerSettings {
  return { tombstoneSeconds: config.tombstoneTtlHours * 3600, compatibilityTaints: config.compatibilityTaints };
}

/** Moves the node's phase annotation and the Evacuation record; publishes Evacuation Progress when it changed. */
export async function advancePhase(
  deps: WorkflowDeps,
  input: TaskInput,
  phase: NodePhase,
  tools: TaskTools,
): Promise<void> {
  const changed = await setPhase(deps.kube, input.request.nodeName, phase, tools.now());
  await deps.progress.setPhase(input.request.requestId, phase);
  if (!changed) return;
  tools.logger.info('phase changed', { phase });
  await deps.publisher.publish(
    'Evacuation Progress',
    progressEvent(input.request, input.executionId, { phase, progress: {}, blockers: [] }),
  );
}

export const admitTask: TaskSpec<TaskInput, Admitted, WorkflowDeps> = {
  name: 'admit',
  input: TaskInput,
  deps: depsFromEnvironment,
  run: async (input, deps, tools) => {
    const { config } = deps;
    checkDeadline(input.request, input.startedAt, config.maxEvacuationHours, tools.now());
    const settings = {
      namespace: config.namespace,
      maxHeldNodes: config.maxHeldNodes,
      slotLimits: config.slotLimits,
      ledger: ledgerSettings(config),
    };
    // The record exists from the first attempt, so a request waiting in line can be seen and aborted —
    // once the node is known to exist (a request for no node writes nothing).
    await readNodeOrFail(deps.kube, input.request.nodeName);
    const existing = await deps.progress.ensure(input.request);
    const abortedBy = existing.status?.abortRequested?.by;
    if (abortedBy !== undefined && !existing.status?.phase) {
      throw new EvacuationAborted(
        `request ${input.request.requestId} was aborted by ${abortedBy} while it waited for a slot; node ${input.request.nodeName} was not touched`,
      );
    }
    const admitted = await admitRequest(deps.kube, input.request, settings, tools.now());
    const record = await deps.progress.ensure(input.request);
    // A duplicate of a request whose evacuation already ended: drop it before it writes anything
    // (re-running the steps would walk the phase back through NodeCordoned and publish a second outcome).
    const ended = record.status?.phase;
    if (!admitted.acquired && (ended === 'NodeDrained' || ended === 'Failed')) {
      throw new SkipEvent(
        `request ${input.request.requestId} already ended on node ${input.request.nodeName} (${ended}); duplicate dropped`,
      );
    }
    const ownership = await reconcileOwnership(deps.kube, input.request.requestId, input.executionId, tools.now());
    if (ownership.action === 'yield') {
      throw new SlotUnavailable(
        `request ${input.request.requestId} is being evacuated by ${describeOwner(ownership)}; waiting for it to end`,
      );
    }
    await advancePhase(deps, input, 'NodeCordoned', tools);
    return admitted;
  },
};

export const prepareNovaTask: TaskSpec<TaskInput, NovaPrepared, WorkflowDeps> = {
  name: 'prepareNova',
  input: TaskInput,
  deps: depsFromEnvironment,
  run: async (input, deps, tools) => {
    await checkStep(input, deps, tools);
    const prepared = await deps.nova.prepare(input.request);
    tools.logger.info('nova prepared', { ...prepared });
    await advancePhase(deps, input, 'NodeDraining', tools);
    return prepared;
  },
};

/** What the guard needs: the timing of the request and whether an operator asked to abort it. */
async function guardOf(input: TaskInput, deps: WorkflowDeps, tools: TaskTools) {
  const abortedBy = await deps.progress.abortRequestedBy(input.request.requestId);
  return {
    startedAt: input.startedAt,
    maxEvacuationHours: deps.config.maxEvacuationHours,
    now: tools.now(),
    ...(abortedBy !== undefined ? { abortedBy } : {}),
  };
}

/**
 * Keeps this execution the request's owner (refreshing its mark); stops it when another execution took
 * the request over (this one was presumed dead), so two executions never evict side by side.
 */
async function assertOwner(input: TaskInput, deps: WorkflowDeps, tools: TaskTools): Promise<void> {
  const ownership = await reconcileOwnership(deps.kube, input.request.requestId, input.executionId, tools.now());
  if (ownership.action === 'yield') {
    throw new SkipEvent(
      `request ${input.request.requestId} was taken over by ${describeOwner(ownership)}; this execution stops`,
    );
  }
}

/**
 * What every step after admission checks before it acts: the request still holds the node, no abort was
 * asked for, the deadline has not passed, and this execution still owns the request.
 */
async function checkStep(input: TaskInput, deps: WorkflowDeps, tools: TaskTools): Promise<void> {
  await guardStep(deps.kube, input.request, await guardOf(input, deps, tools));
  await assertOwner(input, deps, tools);
}

/** Summary for NotYetDone's message: what is left and what blocks. */
function waitingMessage(branch: BranchName, result: PassResult): string {
  const { moved, total, inFlight } = result.progress;
  const blockers = result.blockers.map((b) => b.reason).join('; ');
  return `${branch}: ${moved}/${total} moved, ${inFlight} in flight${blockers ? `; blocked: ${blockers}` : ''}`;
}

/** What a pass step returns to the state machine (and what progress lines are printed from). */
export interface PassOutput {
  readonly done: boolean;
  readonly progressed: boolean;
  readonly branch: BranchName;
  readonly progress: PassResult['progress'];
  readonly blockers: readonly string[];
}

/**
 * One reconcile pass of a branch. Returns when it progressed or finished (the machine loops straight
 * back); throws NotYetDone when nothing changed (the machine retries with backoff).
 */
export const passTask: TaskSpec<PassTaskInput, PassOutput, WorkflowDeps> = {
  name: 'pass',
  input: PassTaskInput,
  deps: depsFromEnvironment,
  run: async (input, deps, tools) => {
    await checkStep(input, deps, tools);
    const result = await branchNamed(input.branch).pass(deps).run({
      request: input.request,
      now: tools.now(),
      startedAt: input.startedAt,
    });
    await deps.progress.recordProgress(input.request.requestId, input.branch, result.progress, result.blockers);
    if (!result.done && !result.progressed) throw new NotYetDone(waitingMessage(input.branch, result));
    const blockers = result.blockers.map((b) => b.reason);
    return {
      done: result.done,
      progressed: result.progressed,
      branch: input.branch,
      progress: result.progress,
      blockers,
    };
  },
};
