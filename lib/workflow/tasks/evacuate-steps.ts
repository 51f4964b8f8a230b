/**
 * The Evacuate machine's steps after ResolveTarget. Each is one Lambda function: validate (by the
 * shell), guard, act through lib/node or a branch of the registry (branches/), record progress, publish at
 * phase changes.
 */

import type { V1Node } from '@kubernetes/client-node';
import {
  type AdmissionSettings,
  type Admitted,
  admissionLimitsOf,
  admitRequest,
  leaveQueue,
  readAdmissionLease,
  waitFromLease,
} from '../../admission/index.ts';
import type { BranchPrepared } from '../../branches/contract/branch.ts';
import { branchNamed, prepareBranches } from '../../branches/registry.ts';
import type { EvacuationObject } from '../../clients/kube/paths.ts';
import type { Config } from '../../config/index.ts';
import { EvacuationAborted, NotYetDone, RequestRunningElsewhere, SkipEvent } from '../../errors/index.ts';
import { isSlotWait } from '../../errors/registry.ts';
import type { TaskSpec, TaskTools } from '../../lambda/task.ts';
import { type PassResult, passFailureOf } from '../../model/pass.ts';
import type { BranchName } from '../../model/plan.ts';
import { readNodeOrFail, setPhase } from '../../node/hold.ts';
import { type CompatibilityTaint, type LedgerSettings, ledgerOf } from '../../node/ledger.ts';
import type { NodePhase } from '../../node/phase.ts';
import { abortRequestedBy, continueRequestedOf } from '../../progress/mailboxes.ts';
import { judgeRevision } from '../../progress/reschedule.ts';
import { announceResume } from '../breaker.ts';
import { depsFromEnvironment, type WorkflowDeps } from '../deps.ts';
import { checkDeadline, checkStillWanted, guardStep } from '../guard.ts';
import { endNeverHeld, neverHeldEndOf, windowClosed } from '../never-held.ts';
import { progressEvent } from '../outcomes.ts';
import { describeOwner, OWNER_TTL_SECONDS, type Owner, reconcileOwnership } from '../ownership.ts';
import { sweepRecords } from '../record-expiry.ts';
import { refuseIfUnsafe } from '../safety-guard.ts';
import { PassTaskInput, TaskInput } from '../state.ts';
import { saidAsOf, withoutAsOf } from '../waiting-reason.ts';

/**
 * What a request of this origin marks its node with besides the configured taints: a NodeMaintenance's
 * node carries `medik8s.io/drain` and `remediation.medik8s.io/exclude-from-remediation` as
 * node-maintenance-operator's does, for the tools that coordinate with NMO by them (medik8s remediators
 * leave such a node alone). Each added only when absent, removed at restore only if drainbridge added it.
 */
const ORIGIN_MARKS: Readonly<
  Partial<Record<string, { taints: readonly CompatibilityTaint[]; labels: Readonly<Record<string, string>> }>>
> = Object.freeze({
  'node-maintenance': {
    taints: ['medik8s.io/drain'],
    labels: { 'remediation.medik8s.io/exclude-from-remediation': 'true' },
  },
});

export function ledgerSettings(config: Config, origin?: string): LedgerSettings {
  const marks = ORIGIN_MARKS[origin ?? ''];
  return {
    tombstoneSeconds: config.tombstoneTtlHours * 3600,
    compatibilityTaints: [...new Set([...config.compatibilityTaints, ...(marks?.taints ?? [])])],
    ...(marks ? { holdLabels: marks.labels } : {}),
  };
}

/** Moves the node's phase annotation and the Evacuation record; publishes Evacuation Progress when it changed. */
export async function advancePhase(
  deps: WorkflowDeps,
  input: TaskInput,
  phase: NodePhase,
  tools: TaskTools,
): Promise<void> {
  const changed = await setPhase(deps.kube, input.request.nodeName, phase, tools.now());
  await deps.progress.setPhase(input.request.requestId, phase, tools.now());
  if (!changed) return;
  tools.logger.info('phase changed', { phase });
  await deps.publisher.publish(
    'Evacuation Progress',
    progressEvent(input.request, input.executionId, { phase, progress: {}, blockers: [] }),
  );
}

/**
 * What a second execution of a request waits for, and until when: the running one to end, or — if it
 * stopped without handing the request back (a killed process) — its claim to expire.
 */
export function ownerWaitMessage(requestId: string, owner: Owner): string {
  const expires = new Date(Date.parse(owner.seen) + OWNER_TTL_SECONDS * 1000).toISOString();
  return `request ${requestId} is being evacuated by execution ${owner.executionId} (last seen ${owner.seen}); waiting until it ends, or until ${expires} if it has stopped (its claim expires ${OWNER_TTL_SECONDS} s after it was last seen)`;
}

/**
 * An execution whose request a later notice revision superseded (rescheduled while it waited for its
 * start) ends before it cordons: the later one holds the current start. Not a continued execution: it
 * carries the request its chain admitted.
 */
function refuseSuperseded(input: TaskInput, record: EvacuationObject, now: Date): void {
  if (input.chain?.previousExecutionId) return;
  const verdict = judgeRevision(input.request, record, now);
  if (verdict.kind === 'superseded') throw new SkipEvent(verdict.message);
}

export const admitTask: TaskSpec<TaskInput, Admitted, WorkflowDeps> = {
  name: 'admit',
  input: TaskInput,
  deps: depsFromEnvironment,
  run: async (input, deps, tools) => {
    const { config } = deps;
    checkDeadline(input.request, input.startedAt, config.maxEvacuationHours, tools.now());
    const settings = { ...admissionLimitsOf(config), ledger: ledgerSettings(config, input.request.origin) };
    // A request waiting in line, or one that would find admission busy, is told so from the admission
    // Lease alone (waitFromLease): one read, not even its record — `drainbridge abort` takes a waiting
    // request off the line (lib/workflow/abort.ts), and one with no place reads its record below.
    const lease = await readAdmissionLease(deps.kube, config.namespace);
    await announceResume(deps, lease, tools);
    // Not for a window request past its window's close: admission ends it (not started) unless it holds
    // its node — told to wait from the Lease alone, it would wait in line for as long as the slots stay taken.
    const waiting = windowClosed(input.request, tools.now())
      ? undefined
      : await waitFromLease(deps.kube, input.request, settings, { lease, now: tools.now() });
    if (waiting !== undefined) throw waiting;
    // The record exists from the first attempt, so a request waiting in line can be seen and aborted —
    // once the node is known to exist (a request for no node writes nothing), and unless the request was
    // released already: a late duplicate is dropped on the ledger's tombstone before it writes anything
    // (its record may have expired meanwhile, lib/progress/expiry.ts; admitRequest checks the same).
    const node = await readNodeOrFail(deps.kube, input.request.nodeName);
    const ledger = ledgerOf(node);
    if (ledger.status === 'ok' && Object.hasOwn(ledger.ledger.released, input.request.requestId)) {
      throw new SkipEvent(
        `request ${input.request.requestId} was already released from node ${input.request.nodeName}; not cordoning again`,
      );
    }
    const existing = await deps.progress.ensure(input.request, tools.now());
    refuseSuperseded(input, existing, tools.now());
    const abortedBy = abortRequestedBy(existing.status);
    if (abortedBy !== undefined && !existing.status?.phase) {
      throw new EvacuationAborted(
        `request ${input.request.requestId} was aborted by ${abortedBy} while it waited for a slot; node ${input.request.nodeName} was not touched`,
      );
    }
    // Safety before the cordon, for a request not waiting in line (a waiting one reads only the Lease): a
    // node is not cordoned while a safety blocker (etcd quorum) holds — the same check and words as
    // `drainbridge plan`. The Lease and the node read above may be seconds old by now: admission only
    // waits on them, and decides to admit on what it reads under its mutex.
    await refuseIfUnsafe(deps, input.request, node, tools.now());
    const waitingShown = existing.status?.waiting;
    const admitted = await admitOrEnd(deps, input, { settings, lease, node, waitingShown }, tools);
    const record = await deps.progress.ensure(input.request, tools.now());
    // The same id run again after it ended never holding (withdrawn, not started): it runs now.
    if (admitted.acquired) await deps.progress.clearEnded(input.request.requestId);
    // A duplicate of a request whose evacuation already ended: drop it before it writes anything
    // (re-running the steps would walk the phase back through NodeCordoned and publish a second outcome).
    const ended = record.status?.phase;
    if (!admitted.acquired && (ended === 'NodeDrained' || ended === 'Failed')) {
      throw new SkipEvent(
        `request ${input.request.requestId} already ended on node ${input.request.nodeName} (${ended}); duplicate dropped`,
      );
    }
    const execution = { executionId: input.executionId, predecessor: input.chain?.previousExecutionId };
    const ownership = await reconcileOwnership(deps.kube, input.request.requestId, execution, tools.now());
    if (ownership.action === 'yield') {
      throw new RequestRunningElsewhere(ownerWaitMessage(input.request.requestId, ownership.owner));
    }
    // A continued execution picks up where its predecessor was: the phase does not walk back.
    if (!input.chain?.previousExecutionId) await advancePhase(deps, input, 'NodeCordoned', tools);
    // A new maintenance begins: records of requests restored long enough ago go (lib/progress/expiry.ts).
    if (admitted.acquired) await sweepRecords(deps, tools);
    return admitted;
  },
};

/**
 * admitRequest; when admission drops the request for good before it held the node (its window closed,
 * its cordon lifted), its record says so and it leaves the line before the SkipEvent ends the execution.
 */
async function admitOrEnd(
  deps: WorkflowDeps,
  input: TaskInput,
  read: {
    settings: AdmissionSettings;
    lease: Awaited<ReturnType<typeof readAdmissionLease>>;
    node: V1Node;
    /** Why the record says the request waits now (undefined: it says nothing). */
    waitingShown: string | undefined;
  },
  tools: TaskTools,
): Promise<Admitted> {
  try {
    const admitted = await admitRequest(deps.kube, input.request, read.settings, {
      now: tools.now(),
      lease: read.lease,
      node: read.node,
      clock: () => tools.now(),
    });
    if (read.waitingShown !== undefined) await deps.progress.recordWaiting(input.request.requestId, undefined);
    return admitted;
  } catch (error) {
    await showWaiting(deps, input, error, { shown: read.waitingShown, now: tools.now() });
    // By name: an error crossing the embedded runtime's module boundary is not always this module's class.
    const skipped = error instanceof Error && error.name === 'SkipEvent';
    const end = skipped ? neverHeldEndOf(input.request, read.node, tools.now(), error.message) : undefined;
    if (end) {
      tools.logger.info('request ended before it held its node', { outcome: end.outcome, reason: end.why });
      await endNeverHeld({ ...deps, namespace: deps.config.namespace }, input.request, end, tools.now());
    } else if (skipped) {
      // Released already (its tombstone): a place it still has in line would hold up those behind it.
      await leaveQueue(deps.kube, deps.config.namespace, input.request.requestId, tools.now()).catch(() => false);
    }
    throw error;
  }
}

/**
 * The record (and so a NodeMaintenance's lastError) says why the request waits — a limit, a closed health
 * gate, a paused admission, the slots in use — written only when the reason changed, so a request waiting
 * on the same gate writes nothing at its retries.
 */
async function showWaiting(
  deps: WorkflowDeps,
  input: TaskInput,
  error: unknown,
  at: { readonly shown: string | undefined; readonly now: Date },
) {
  if (!(error instanceof Error) || !isSlotWait(error.name)) return;
  // A busy mutex says nothing about why the request waits: it tries again within seconds.
  if (/^admission is busy/.test(error.message)) return;
  const why = error.message.replace(`node ${input.request.nodeName}: `, '');
  if (why !== withoutAsOf(at.shown)) await deps.progress.recordWaiting(input.request.requestId, saidAsOf(why, at.now));
}

/** Every branch's step before the passes (Nova: disable the host's nova-compute service), then NodeDraining. */
export const prepareBranchesTask: TaskSpec<TaskInput, Record<string, BranchPrepared>, WorkflowDeps> = {
  name: 'prepareBranches',
  input: TaskInput,
  deps: depsFromEnvironment,
  run: async (input, deps, tools) => {
    await checkStep(input, deps, tools);
    const prepared = await prepareBranches(deps, input.request, tools.now());
    tools.logger.info('branches prepared', { ...prepared });
    await advancePhase(deps, input, 'NodeDraining', tools);
    return prepared;
  },
};

/** What the guard needs: the timing of the request and whether an operator asked to abort it. */
function guardOf(input: TaskInput, deps: WorkflowDeps, tools: TaskTools, abortedBy: string | undefined) {
  return {
    startedAt: input.startedAt,
    maxEvacuationHours: deps.config.maxEvacuationHours,
    now: tools.now(),
    ...(abortedBy !== undefined ? { abortedBy } : {}),
  };
}

/**
 * What every step after admission checks before it acts: the request still holds the node, no abort was
 * asked for, the deadline has not passed, and this execution still owns the request (refreshing its
 * mark; when another execution took the request over — this one was presumed dead — it stops, so two
 * executions never evict side by side). One read of the Evacuation record serves the ownership, the
 * abort and the continue-as-new request; returns the execution the record asks to continue as new, if any.
 */
async function checkStep(input: TaskInput, deps: WorkflowDeps, tools: TaskTools): Promise<string | undefined> {
  // The hold and the deadline first: a request that holds nothing any more (or never did) stops naming
  // that, before the ownership claim reads (or writes) its Evacuation record.
  const node = await guardStep(deps.kube, input.request, guardOf(input, deps, tools, undefined));
  const ownership = await reconcileOwnership(deps.kube, input.request.requestId, input, tools.now());
  const abortedBy = abortRequestedBy(ownership.status);
  if (abortedBy !== undefined) checkStillWanted(node, input.request, abortedBy);
  if (ownership.action === 'yield') {
    throw new SkipEvent(
      `request ${input.request.requestId} was taken over by ${describeOwner(ownership)}; this execution stops`,
    );
  }
  return continueRequestedOf(ownership.status);
}

/** Summary for NotYetDone's message: what is left, what is in flight and what blocks. */
function waitingMessage(branch: BranchName, result: PassResult): string {
  const { moved, total, inFlight } = result.progress;
  const detail = result.detail?.length ? ` (${result.detail.join('; ')})` : '';
  const blockers = result.blockers.map((b) => b.reason).join('; ');
  return `${branch}: ${moved}/${total} moved, ${inFlight} in flight${detail}${blockers ? `; blocked: ${blockers}` : ''}`;
}

/** What a pass step returns to the state machine (and what progress lines are printed from). */
export interface PassOutput {
  readonly done: boolean;
  readonly progressed: boolean;
  /** Leave the loop so that the execution continues as new (its history nears the limit). */
  readonly continue: boolean;
  readonly branch: BranchName;
  readonly progress: PassResult['progress'];
  readonly blockers: readonly string[];
  /** Items in flight, one line each (KubeVirt migrations). */
  readonly detail?: readonly string[];
}

/**
 * Whether this pass's loop should leave for a continuation: the record already asks this execution to
 * (another branch's loop reached its share of the history), or this loop reached its own share — then
 * it asks the other branches too, so that they all leave within one poll of each other.
 */
async function continuing(input: PassTaskInput, deps: WorkflowDeps, requestedBy: string | undefined, now: Date) {
  if (requestedBy === input.executionId) return true;
  if (!input.history || input.history.events < input.history.limit) return false;
  await deps.progress.requestContinue(input.request.requestId, input.executionId, now);
  return true;
}

/** An `Evacuation Progress` event when a VM's move started, ended or failed (the KubeVirt branch reports `vms`). */
async function publishMoves(input: PassTaskInput, deps: WorkflowDeps, result: PassResult): Promise<void> {
  if (!result.progressed || !result.vms) return;
  const update = {
    phase: 'NodeDraining' as const,
    progress: { [input.branch]: result.progress },
    blockers: result.blockers,
  };
  await deps.publisher.publish('Evacuation Progress', {
    ...progressEvent(input.request, input.executionId, update),
    vms: [...result.vms],
  });
}

/**
 * One reconcile pass of a branch. Returns when it progressed or finished (the machine loops straight
 * back), or when the execution should continue as new; throws NotYetDone when nothing changed (the
 * machine retries with backoff).
 */
export const passTask: TaskSpec<PassTaskInput, PassOutput, WorkflowDeps> = {
  name: 'pass',
  input: PassTaskInput,
  deps: depsFromEnvironment,
  run: async (input, deps, tools) => {
    const continueRequestedBy = await checkStep(input, deps, tools);
    const passStartedAt = tools.now();
    let result: PassResult;
    try {
      result = await branchNamed(input.branch)
        .pass(deps)
        .run({
          request: input.request,
          now: passStartedAt,
          startedAt: input.startedAt,
          stillWanted: async () => {
            await checkStep(input, deps, tools);
          },
          reportProgress: (round) => publishMoves(input, deps, round),
        });
    } catch (error) {
      // Items it failed on go on the record first: Evacuation Failed names them from there.
      // With the time, so the blockers' spans carry their codes (Evacuation Failed reads them from there).
      const failure = passFailureOf(error);
      if (failure)
        await deps.progress.recordProgress(input.request.requestId, input.branch, {
          ...failure,
          timing: { now: tools.now(), passStartedAt, done: false },
        });
      throw error;
    }
    const { requestId } = input.request;
    await deps.progress.recordProgress(requestId, input.branch, {
      ...result,
      timing: { now: tools.now(), passStartedAt, done: result.done },
    });
    await publishMoves(input, deps, result);
    const leave = !result.done && (await continuing(input, deps, continueRequestedBy, tools.now()));
    // A limit due within the next pass's wait: called again at once (a retry's backoff could pass it by far).
    const waitAgain = !result.done && !result.progressed && !leave && !result.callAgainNow;
    if (waitAgain) throw new NotYetDone(waitingMessage(input.branch, result));
    return {
      done: result.done,
      progressed: result.progressed,
      continue: leave,
      branch: input.branch,
      progress: result.progress,
      blockers: result.blockers.map((b) => b.reason),
      ...(result.detail?.length ? { detail: [...result.detail] } : {}),
    };
  },
};
