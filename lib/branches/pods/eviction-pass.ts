/**
 * The pod drain as a reconcile pass (branches `pods` and `infra-pods`). One call: observe the node's
 * pods, evict what may go now (policy/v1 Eviction with a uid precondition; delete only with
 * `disableEviction`), classify every refusal, persist per-pod progress and backoff, return. It never
 * sleeps: the workflow calls it again (at once when it progressed, after a backoff otherwise).
 */
import type { V1Node, V1Pod, V1PodDisruptionBudget } from '@kubernetes/client-node';
import type { KubeClient } from '../../clients/kube/client.ts';
import { apiStatusOf } from '../../clients/kube/errors.ts';
import { podKey } from '../../clients/kube/paths.ts';
import { DeadlineExceeded, EvacuationCancelled, EvacuationFailed } from '../../errors/index.ts';
import type { PassInput, PassResult, ProgressStore, ReconcilePass } from '../../model/pass.ts';
import type { Blocker } from '../../model/plan.ts';
import type { ResolvedRequest } from '../../model/request.ts';
import { checkOutOfBandUncordon, readNodeOrFail } from '../../node/hold.ts';
import { emitNodeEvent } from '../../node/kube-events.ts';
import { isUncordonedOutOfBand, readLedger } from '../../node/ledger.ts';
import type { ProgressRecorder } from '../../progress/evacuation-store.ts';
import { sameJson } from '../../util/same-json.ts';
import type { PodBranch } from './branch-filters.ts';
import { gateByBudgets } from './budget-gate.ts';
import { fitGrace, graceCutMessage } from './grace-fit.ts';
import { NodeView } from './node-view.ts';
import { describeBudgets } from './observe.ts';
import { budgetsCovering, classifyEvictionStatus, type EvictionOutcome } from './refusals.ts';
import { type DrainSelection, drainRefusedMessage, selectionBlockers, selectPods } from './selection.ts';
import {
  countInFlight,
  DRAIN_STATE_FORMAT,
  type DrainState,
  INITIAL_DRAIN_STATE,
  isDue,
  newRefusals,
  recordedBlockers,
  recordHeldByBudget,
  recordOutcome,
  stuckTerminating,
  trackDepartures,
} from './tracking.ts';
import { wakes } from './wake.ts';

export interface EvictionPassSettings {
  readonly branch: PodBranch;
  /** Label selector of infrastructure pods held back for `infra-pods`; '' for none. */
  readonly infraPodSelector: string;
  /**
   * Whether KubeVirt launcher pods keep the `pods` branch from finishing (true until the KubeVirt
   * branch exists; they are never evicted either way).
   */
  readonly launcherPodsBlock?: boolean;
  /** Evictions sent at once within a pass. */
  readonly concurrency?: number;
  /** Where each pass's counts and blockers are recorded for people (the EvacuationProgressStore). */
  readonly recorder?: ProgressRecorder;
  /**
   * How long one pass may wait on its watches for pods to leave or a budget to free up, running more
   * rounds as they do (0: one round, return at once). Bounded well inside the Lambda timeout.
   */
  readonly waitMs?: number;
}

/** What one round of a pass saw and did. */
interface Round {
  readonly pods: readonly V1Pod[];
  readonly selection: DrainSelection;
  readonly state: DrainState;
  readonly now: Date;
  readonly progressed: boolean;
  /** Nothing is left to evict (blockers may still keep the branch from being done). */
  readonly done: boolean;
  /** Something the watches can report is what the branch waits for (pods leaving, a budget's hold). */
  readonly awaitable: boolean;
  /** Why the workflow wants the pass to stop (stillWanted threw while it waited): thrown once it persisted. */
  readonly stopped?: unknown;
}

/** Evictions a pass sends at once (then the next chunk), unless `concurrency` says otherwise. */
export const DEFAULT_EVICTION_CONCURRENCY = 8;

/**
 * How often, at most, a waiting pass asks the workflow whether the request is still wanted (two reads):
 * a handful of times in a 30 s wait, and an abort stops it within about this long.
 */
const STILL_WANTED_EVERY_MS = 5_000;

/** Throws EvacuationCancelled when the node's ledger no longer has this request's hold (a Restore ran meanwhile). */
function assertStillHeld(node: V1Node | undefined, request: ResolvedRequest): void {
  if (node && !readLedger(node).holds[request.requestId]) {
    throw new EvacuationCancelled(
      `request ${request.requestId} no longer holds node ${request.nodeName} (restored or released); stopping`,
    );
  }
}

/** Whether the drain is paused: someone uncordoned the node while drainbridge holds it (hold.ts reports it). */
function isPaused(node: V1Node | undefined): boolean {
  return node !== undefined && isUncordonedOutOfBand(node);
}

/** Whether the request's deadline has passed (as the workflow's checkDeadline: strictly after it). */
function isPastDeadline(request: ResolvedRequest, now: Date): boolean {
  return request.deadline !== undefined && now.getTime() > Date.parse(request.deadline);
}

/** Whether a pass has nothing more to wait for: the branch is done, or a limit (timeout, deadline) passed. */
function isOver(round: { readonly done: boolean; readonly now: Date }, input: PassInput): boolean {
  return (
    round.done || isPastTimeout(input.request, input.startedAt, round.now) || isPastDeadline(input.request, round.now)
  );
}

/** Whether the drain's `--timeout` has passed (0: never). */
export function isPastTimeout(request: ResolvedRequest, startedAt: string, now: Date): boolean {
  const timeout = request.drain.timeoutSeconds;
  return timeout > 0 && now.getTime() - Date.parse(startedAt) > timeout * 1000;
}

class EvictionPass implements ReconcilePass {
  readonly branch: PodBranch;
  readonly #client: KubeClient;
  readonly #store: ProgressStore;
  readonly #settings: EvictionPassSettings;

  constructor(client: KubeClient, store: ProgressStore, settings: EvictionPassSettings) {
    this.branch = settings.branch;
    this.#client = client;
    this.#store = store;
    this.#settings = settings;
  }

  async run(input: PassInput): Promise<PassResult> {
    const startedMs = performance.now();
    const { request } = input;
    const node = await readNodeOrFail(this.#client, request.nodeName);
    const outOfBand = await checkOutOfBandUncordon(this.#client, node, input.now);
    const stored = await this.#store.read(request.requestId, this.branch, DRAIN_STATE_FORMAT);
    const view = new NodeView(this.#client, node, request.drain);
    let round: Round;
    try {
      round = await this.#rounds(view, stored?.state ?? INITIAL_DRAIN_STATE, input, outOfBand);
    } finally {
      view.close();
    }
    await this.#announceRefusals(node, stored?.state ?? INITIAL_DRAIN_STATE, round.state, input.now);
    const result = this.#result(round.selection, round.state, { observed: round.pods, outOfBand, now: round.now });
    await this.#persist(request.requestId, stored, round, result);
    // What the pass saw is on the record before it stops, so that Evacuation Failed names what held it.
    if (round.stopped) throw round.stopped;
    // As `kubectl drain`: a filter refusal (a bare pod without --force, a DaemonSet pod without
    // --ignore-daemonsets, emptyDir data without --delete-emptydir-data) fails the drain at once, with
    // nothing evicted; the node stays cordoned. Waiting would not clear it: it needs a person.
    if (round.selection.refusals.length > 0) {
      throw new EvacuationFailed(drainRefusedMessage(request.nodeName, round.selection.refusals));
    }
    if (!result.done && isPastTimeout(request, input.startedAt, round.now)) {
      throw new DeadlineExceeded(
        `drain of node ${request.nodeName} did not finish within --timeout=${request.drain.timeoutSeconds}s`,
      );
    }
    // The workflow's own check names the request's deadline (DeadlineExceeded) when it has passed.
    if (!result.done && isPastDeadline(request, round.now)) await input.stillWanted?.();
    return {
      ...result,
      progressed: round.progressed,
      ...(this.#limitSoon(round, input, performance.now() - startedMs) ? { callAgainNow: true } : {}),
    };
  }

  /**
   * Whether a limit comes due within the next pass's wait: the pass then asks to be called again at once.
   * Only after a pass that waited its whole wait — one that returned early (a watch ended) is retried
   * after a backoff, never in a tight loop.
   */
  #limitSoon(round: Round, input: PassInput, elapsedMs: number): boolean {
    const waitMs = this.#settings.waitMs ?? 0;
    if (round.done || waitMs <= 0 || elapsedMs < waitMs) return false;
    const nowMs = input.now.getTime() + elapsedMs;
    const pending = { toEvict: round.selection.toEvict, state: round.state };
    const { firstLimit } = wakes(input, pending, round.now.getTime());
    return firstLimit !== undefined && firstLimit - nowMs <= waitMs;
  }

  /**
   * Rounds of observe-and-evict: the first from a fresh listing; while pods are still leaving or held by
   * a budget, and within `waitMs`, the pass waits on its watches for the change it needs (a pod gone, a
   * budget allowing more, the node changed) and runs another round at once — instead of returning and
   * waiting out a Step Functions backoff that knows nothing of when the budget frees up. It also runs a
   * round when a limit comes due (wake.ts: `--timeout`, `--skip-wait-for-delete-timeout`, the request's
   * deadline, a backoff), and waits for such a limit even with nothing watchable to wait for: a drain
   * ends at its `--timeout`, not at the end of a wait or of a retry's backoff after it.
   */
  async #rounds(view: NodeView, initial: DrainState, input: PassInput, outOfBand?: Blocker): Promise<Round> {
    const startedMs = performance.now();
    const waitMs = this.#settings.waitMs ?? 0;
    let round = await this.#round(view, initial, input, input.now);
    let progressed = round.progressed;
    // In-process only (no write): a person watching sees each eviction as it happens, not at the pass's
    // end — and the blockers as this round sees them, so a blocker that no longer holds is not shown.
    const observe = (seen: Round) => {
      const seenNow = { observed: seen.pods, outOfBand, now: seen.now };
      const { blockers, progress } = this.#result(seen.selection, seen.state, seenNow);
      const observed = { state: seen.state, at: seen.now, blockers, progress };
      this.#settings.recorder?.observeRound?.(input.request.requestId, this.branch, observed);
    };
    observe(round);
    // An abort is written on the Evacuation record, which no watch here sees: the pass asks the workflow
    // whether the request is still wanted at most every STILL_WANTED_EVERY_MS, before a round and while
    // nothing changes, so that it stops within seconds rather than at the end of its wait.
    let askedMs = startedMs;
    let stopped: { error: unknown } | undefined;
    const askIfDue = async () => {
      if (performance.now() - askedMs < STILL_WANTED_EVERY_MS) return;
      askedMs = performance.now();
      try {
        await input.stillWanted?.();
      } catch (error) {
        stopped = { error };
      }
    };
    const clock = () => new Date(input.now.getTime() + (performance.now() - startedMs));
    for (;;) {
      if (isOver(round, input)) break;
      const next = await this.#awaitNext(view, round, input, { left: waitMs - (performance.now() - startedMs), clock });
      if (next === 'return') break;
      await askIfDue();
      if (stopped) break;
      if (next === 'ask') continue;
      assertStillHeld(view.node(), input.request);
      const before = round.state;
      round = await this.#round(view, round.state, input, clock());
      progressed ||= round.progressed;
      if (round.state !== before) observe(round);
    }
    return { ...round, progressed, ...(stopped ? { stopped: stopped.error } : {}) };
  }

  /**
   * Waits for what the round needs: a watch reporting a change, or a limit coming due ('round'); a slice
   * of STILL_WANTED_EVERY_MS with neither ('ask'); or 'return' — the wait is over, a watch ended, or
   * nothing is left to wait for (nothing watchable and no limit within the wait).
   */
  async #awaitNext(
    view: NodeView,
    round: Round,
    input: PassInput,
    timing: { readonly left: number; readonly clock: () => Date },
  ): Promise<'round' | 'ask' | 'return'> {
    const { left } = timing;
    const nowMs = timing.clock().getTime();
    // Limits after the last round's instant are still to apply, even one that passed since (a timer may
    // fire a fraction of a millisecond early): the next round is then due at once.
    const due = wakes(input, { toEvict: round.selection.toEvict, state: round.state }, round.now.getTime());
    // Nothing watchable: wait only for a limit within this pass's wait (else the workflow calls again).
    const limitWithin = due.firstLimit !== undefined && due.firstLimit - nowMs <= left;
    if (left <= 0 || (!round.awaitable && !limitWithin)) return 'return';
    const untilWake = due.next === undefined ? Number.POSITIVE_INFINITY : Math.max(0, due.next - nowMs);
    const slice = Math.min(untilWake, left, STILL_WANTED_EVERY_MS);
    if (await view.changed(slice, left)) return 'round';
    if (view.ended) return 'return';
    if (untilWake <= left && slice >= untilWake) return 'round';
    return slice >= left ? 'return' : 'ask';
  }

  async #round(view: NodeView, state: DrainState, input: PassInput, now: Date): Promise<Round> {
    const pods = await view.pods();
    const selection = selectPods(pods, {
      options: input.request.drain,
      now,
      daemonSetExists: view.daemonSetExists,
      branch: this.branch,
      infraPodSelector: this.#settings.infraPodSelector,
      refuseForHeldBack: this.branch === 'pods',
    });
    const tracked = trackDepartures(state, pods, now);
    // kubectl evicts nothing while any filter refuses a pod: the refusal needs an operator first. Nor does
    // the drain while someone else has uncordoned the node (paused): the scheduler would place pods back
    // and each would be evicted again, churning their workloads until the deadline. A re-cordon (the
    // node's watch) resumes it; a restore or an abort ends it; the request's deadline still applies.
    const paused = isPaused(view.node());
    const due =
      selection.refusals.length > 0 || paused ? [] : selection.toEvict.filter((pod) => isDue(tracked.state, pod, now));
    const evicted = await this.#evictAll(due, tracked.state, { ...input, now }, view);
    const inFlight = countInFlight(evicted.state, selection.toEvict);
    const held = selection.toEvict.some(
      (pod) => evicted.state.pods[pod.metadata?.uid ?? '']?.blocker?.code === 'DisruptionBudget',
    );
    return {
      pods,
      selection,
      state: evicted.state,
      now,
      progressed: evicted.accepted > 0 || tracked.movedNow > 0,
      done: selection.toEvict.length === 0,
      awaitable: selection.refusals.length === 0 && (paused || inFlight > 0 || held),
    };
  }

  /**
   * One write of the state per pass, however many rounds it ran (never per eviction) — with the pass's
   * report in the same write when the recorder can take both.
   */
  async #persist(
    requestId: string,
    stored: { state: DrainState; version: string } | undefined,
    round: Round,
    result: Omit<PassResult, 'progressed'>,
  ): Promise<void> {
    const recorder = this.#settings.recorder;
    const report = { ...result, timing: { now: round.now, done: result.done } };
    const changed = !sameJson(round.state, stored?.state);
    if (changed && recorder?.writeStateWithProgress) {
      const write = { state: round.state, expectedVersion: stored?.version };
      await recorder.writeStateWithProgress(requestId, this.branch, write, report);
      return;
    }
    if (changed) await this.#store.write(requestId, this.branch, round.state, stored?.version);
    await recorder?.recordProgress(requestId, this.branch, report);
  }

  /** One Warning event per new refusal: per pod, but a budget's hold once per budget (not per pod, not per count). */
  async #announceRefusals(node: V1Node, before: DrainState, after: DrainState, now: Date): Promise<void> {
    for (const refusal of newRefusals(before, after)) {
      await emitNodeEvent(
        this.#client,
        node,
        { reason: 'EvictionBlocked', message: refusal.reason, type: 'Warning' },
        now,
      );
    }
  }

  #result(
    selection: DrainSelection,
    state: DrainState,
    seen: { observed: readonly V1Pod[]; outOfBand?: Blocker; now: Date },
  ): Omit<PassResult, 'progressed'> {
    const launcherPodsBlock = this.branch === 'pods' && (this.#settings.launcherPodsBlock ?? true);
    // An uncordon by someone else is not fought, but it pauses the drain and blocks "drained": pods may be
    // landing on the node again, and an Evacuation Succeeded would tell maintenance automation to go
    // ahead. Re-cordoning the node resumes the drain; otherwise the deadline ends it, naming the uncordon.
    const blockers = [
      ...selectionBlockers(selection, launcherPodsBlock),
      ...recordedBlockers(state, seen.observed),
      ...stuckTerminating(state, selection.toEvict, seen.now),
      ...(seen.outOfBand ? [seen.outOfBand] : []),
    ];
    const moved = Object.keys(state.moved).length;
    const progress = {
      total: moved + selection.toEvict.length,
      moved,
      inFlight: countInFlight(state, selection.toEvict),
      skipped: selection.skipped.length,
    };
    const done = selection.toEvict.length === 0 && blockers.length === 0;
    return { done, progress, blockers };
  }

  async #evictAll(
    due: readonly V1Pod[],
    initial: DrainState,
    input: PassInput,
    view: NodeView,
  ): Promise<{ state: DrainState; accepted: number }> {
    let state = initial;
    let accepted = 0;
    const loadBudgets = () => view.budgets();
    let pods = due;
    // Deleting (--disable-eviction) bypasses PDBs; evicting asks only what the budgets can grant.
    if (due.length > 0 && !input.request.drain.disableEviction) {
      const all = await loadBudgets();
      const gate = gateByBudgets(due, all);
      pods = gate.attempt;
      for (const held of gate.held) {
        const named = all.filter(
          (pdb) => pdb.metadata?.name === held.pdbName && pdb.metadata?.namespace === held.pod.metadata?.namespace,
        );
        state = recordHeldByBudget(state, held.pod, {
          ...held,
          now: input.now,
          budgets: budgetText({ kind: 'budget', pdbName: held.pdbName, message: held.message }, held.pod, named),
        });
      }
    }
    const concurrency = Math.max(1, this.#settings.concurrency ?? DEFAULT_EVICTION_CONCURRENCY);
    const cuts: GraceCut[] = [];
    for (let start = 0; start < pods.length; start += concurrency) {
      const chunk = pods.slice(start, start + concurrency);
      const outcomes = await Promise.all(chunk.map((pod) => this.#evictOne(pod, input, cuts)));
      for (const [index, outcome] of outcomes.entries()) {
        const pod = chunk[index] as V1Pod;
        if (outcome.kind === 'evicted') accepted++;
        const involved = outcome.kind === 'budget' || outcome.kind === 'multiple-budgets' ? await loadBudgets() : [];
        state = recordOutcome(state, pod, outcome, { now: input.now, budgets: budgetText(outcome, pod, involved) });
      }
    }
    await this.#reportGraceCuts(input, cuts);
    return { state, accepted };
  }

  /** A node Event naming the pods whose grace periods were cut to fit the deadline (best effort). */
  async #reportGraceCuts(input: PassInput, cuts: readonly GraceCut[]): Promise<void> {
    if (cuts.length === 0) return;
    const node = await readNodeOrFail(this.#client, input.request.nodeName);
    const message = graceCutMessage(input.request, cuts);
    await emitNodeEvent(this.#client, node, { reason: 'GracePeriodCut', message, type: 'Warning' }, input.now);
  }

  async #evictOne(pod: V1Pod, input: PassInput, cuts: GraceCut[]): Promise<EvictionOutcome> {
    const { request } = input;
    const fit = fitGrace(pod, request, input.now);
    const grace = fit.seconds;
    if (fit.cutFrom !== undefined) cuts.push({ pod: podKey(pod), from: fit.cutFrom, to: fit.seconds });
    try {
      if (request.drain.disableEviction) await this.#client.deletePod(pod, grace);
      else await this.#client.evictPod(pod, { gracePeriodSeconds: grace });
      return { kind: 'evicted' };
    } catch (error) {
      const status = apiStatusOf(error);
      if (!status) throw error;
      return classifyEvictionStatus(status);
    }
  }
}

/** A pod whose grace period was cut to fit the request's deadline. */
interface GraceCut {
  readonly pod: string;
  readonly from: number;
  readonly to: number;
}

function budgetText(outcome: EvictionOutcome, pod: V1Pod, budgets: readonly V1PodDisruptionBudget[]): string {
  const covering = budgetsCovering(pod, budgets);
  if (outcome.kind === 'budget') {
    const named = covering.filter((pdb) => pdb.metadata?.name === outcome.pdbName);
    return named.length > 0 ? ` (disruptionsAllowed=${named[0]?.status?.disruptionsAllowed ?? '?'})` : '';
  }
  return describeBudgets(covering);
}

/**
 * The eviction pass for one branch. `pods` drains everything except launcher pods and infra pods;
 * `infra-pods` drains only pods matching `infraPodSelector` (the workflow runs it after the VM branches).
 */
export function createEvictionPass(
  client: KubeClient,
  store: ProgressStore,
  settings: EvictionPassSettings,
): ReconcilePass {
  return new EvictionPass(client, store, settings);
}
