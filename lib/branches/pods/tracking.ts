/**
 * The eviction pass's memory between passes (persisted in the progress record): which pods it evicted,
 * which left, and each pod's backoff after a refusal. Pure functions over an immutable state, so the
 * pass itself only observes, calls the API and stores.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { z } from 'zod';
import { podKey } from '../../clients/kube/paths.ts';
import { BLOCKER_CODES, type Blocker, type BlockerCode } from '../../model/plan.ts';
import { endWaits, followWait, type ItemTimeline, SPANS_SCHEMA, type Span } from '../../model/timeline.ts';
import type { RecordFormat } from '../../util/json-record.ts';
import type { EvictionOutcome } from './refusals.ts';

export interface PodRecord {
  /** `namespace/name`, for messages after the pod is gone. */
  readonly name: string;
  /** When drainbridge's eviction (or delete) was accepted (ISO 8601). */
  readonly evictedAt?: string;
  /** Refusals so far; drives the backoff. */
  readonly attempts: number;
  /** Do not ask again before this instant (ISO 8601). */
  readonly nextAttemptAt?: string;
  /** The last refusal as a blocker, reported until the pod moves or the refusal changes. */
  readonly blocker?: { readonly code: BlockerCode; readonly reason: string; readonly budget?: string };
  /** The namespace is terminating: the namespace controller removes the pod; only wait. */
  readonly waiting?: boolean;
  /** What it waited for before its eviction was accepted (a budget's hold, a refusal), from–to. */
  readonly waits?: readonly Span[];
}

/** A moved pod's timeline: when its eviction was accepted, when it was gone, what it waited for first. */
export interface PodDeparture {
  readonly evictedAt?: string;
  readonly goneAt: string;
  readonly waits?: readonly Span[];
}

export interface DrainState {
  /** By pod uid. */
  readonly pods: Readonly<Record<string, PodRecord>>;
  /** Pods that left the node after drainbridge acted on them: uid → `namespace/name`. */
  readonly moved: Readonly<Record<string, string>>;
  /**
   * The timeline of the moved pods, by uid (absent in records written before it was kept: those pods
   * have a name and no times). Written with the state, so it costs no write of its own.
   */
  readonly departures?: Readonly<Record<string, PodDeparture>>;
}

export const INITIAL_DRAIN_STATE: DrainState = Object.freeze({ pods: {}, moved: {} });

const Instant = z.iso.datetime({ offset: true });

/** The pod branches' state as the pass writes it (in the Evacuation record's `status.branches.<branch>.state`). */
export const DRAIN_STATE_FORMAT: RecordFormat<DrainState> = {
  what: 'pod branch state (Evacuation status.branches.<branch>.state)',
  versions: [
    z.looseObject({
      pods: z.record(
        z.string(),
        z.looseObject({
          name: z.string(),
          evictedAt: Instant.optional(),
          attempts: z.number().int().min(0),
          nextAttemptAt: Instant.optional(),
          blocker: z
            .looseObject({ code: z.enum(BLOCKER_CODES), reason: z.string(), budget: z.string().optional() })
            .optional(),
          waiting: z.boolean().optional(),
          waits: SPANS_SCHEMA.optional(),
        }),
      ),
      moved: z.record(z.string(), z.string()),
      // Added beside version 1's fields, optional: a record without it reads, and an older build ignores it.
      departures: z
        .record(
          z.string(),
          z.looseObject({ evictedAt: Instant.optional(), goneAt: Instant, waits: SPANS_SCHEMA.optional() }),
        )
        .optional(),
    }),
  ],
};

/**
 * kubectl waits 5 s after a 429. A PodDisruptionBudget refusal is the expected, passing kind (the budget
 * frees as replacements become Ready), so drainbridge asks again after the same 5 s, like kubectl — a
 * growing backoff there made drains several times slower than kubectl in bench/. Other refusals (a 429
 * without a budget, multiple budgets, anything unexpected) double per refusal of the same pod, up to 5 min.
 */
export const BACKOFF_BASE_SECONDS = 5;
export const BACKOFF_MAX_SECONDS = 300;

export function backoffSeconds(attempts: number, outcome?: EvictionOutcome): number {
  if (outcome?.kind === 'budget') return BACKOFF_BASE_SECONDS;
  return Math.min(BACKOFF_MAX_SECONDS, BACKOFF_BASE_SECONDS * 2 ** Math.max(0, attempts - 1));
}

const uidOf = (pod: V1Pod): string => pod.metadata?.uid ?? podKey(pod);

/**
 * Pods drainbridge acted on that are no longer listed with the same uid have moved (gone, or replaced by
 * a new pod of the same name) — at `now`, the listing's time. Returns the new state and how many moved now.
 */
export function trackDepartures(
  state: DrainState,
  listed: readonly V1Pod[],
  now: Date,
): { state: DrainState; movedNow: number } {
  const present = new Set(listed.map(uidOf));
  const pods: Record<string, PodRecord> = {};
  const moved: Record<string, string> = { ...state.moved };
  const departures: Record<string, PodDeparture> = { ...state.departures };
  let movedNow = 0;
  for (const [uid, record] of Object.entries(state.pods)) {
    if (present.has(uid)) pods[uid] = record;
    else if (record.evictedAt || record.waiting) {
      moved[uid] = record.name;
      const waits = endWaits(record.waits, now.toISOString());
      departures[uid] = {
        ...(record.evictedAt ? { evictedAt: record.evictedAt } : {}),
        goneAt: now.toISOString(),
        ...(waits?.length ? { waits } : {}),
      };
      movedNow++;
    }
  }
  if (movedNow === 0) return { state: { ...state, pods }, movedNow };
  return { state: { ...state, pods, moved, departures }, movedNow };
}

/** Whether the pass should ask to evict this pod now: not evicted already, not waiting, backoff over. */
export function isDue(state: DrainState, pod: V1Pod, now: Date): boolean {
  const record = state.pods[uidOf(pod)];
  if (!record) return true;
  if (record.evictedAt || record.waiting) return false;
  return !record.nextAttemptAt || Date.parse(record.nextAttemptAt) <= now.getTime();
}

/**
 * The words of a DisruptionBudget blocker, the same in `drainbridge plan` and in an evacuation: the pod,
 * the budget with ` (disruptionsAllowed=N)` when known, and the apiserver's reason.
 */
export function budgetReason(podName: string, pdbName: string, allowed: string, message: string): string {
  return `pod ${podName} is blocked by PodDisruptionBudget ${pdbName}${allowed}: ${message}`;
}

/** The words of a MultiplePodDisruptionBudgets blocker (plan and evacuation): the budgets as describeBudgets names them. */
export function multipleBudgetsReason(podName: string, budgets: string): string {
  return `pod ${podName} is covered by more than one PodDisruptionBudget (${budgets || 'unknown'}); the eviction API refuses it`;
}

function refusalBlocker(outcome: EvictionOutcome, pod: V1Pod, budgetsAllowed: string): PodRecord['blocker'] {
  const key = podKey(pod);
  switch (outcome.kind) {
    case 'budget':
      return {
        code: 'DisruptionBudget',
        budget: `${pod.metadata?.namespace ?? ''}/${outcome.pdbName}`,
        reason: budgetReason(key, outcome.pdbName, budgetsAllowed, outcome.message),
      };
    case 'multiple-budgets':
      return { code: 'MultiplePodDisruptionBudgets', reason: multipleBudgetsReason(key, budgetsAllowed) };
    case 'refused':
      return { code: 'Other', reason: `eviction of pod ${key} refused: ${outcome.message}` };
    default:
      return undefined;
  }
}

/**
 * Records what an eviction answered. `budgets` describes the PDBs involved for the message
 * (` (disruptionsAllowed=0)` or `ns/a, ns/b`).
 */
export function recordOutcome(
  state: DrainState,
  pod: V1Pod,
  outcome: EvictionOutcome,
  context: { now: Date; budgets?: string },
): DrainState {
  const uid = uidOf(pod);
  const previous = state.pods[uid] ?? { name: podKey(pod), attempts: 0 };
  const now = context.now;
  let record: PodRecord;
  const at = now.toISOString();
  if (outcome.kind === 'evicted' || outcome.kind === 'gone') {
    const waits = endWaits(previous.waits, at);
    record = { name: previous.name, attempts: previous.attempts, evictedAt: at, ...(waits?.length ? { waits } : {}) };
  } else if (outcome.kind === 'namespace-terminating' && pod.metadata?.deletionTimestamp) {
    // As kubectl: the eviction can never succeed, but the namespace controller is deleting the pod.
    const waits = endWaits(previous.waits, at);
    record = { name: previous.name, attempts: previous.attempts, waiting: true, ...(waits?.length ? { waits } : {}) };
  } else {
    const attempts = previous.attempts + 1;
    const nextAttemptAt = new Date(now.getTime() + backoffSeconds(attempts, outcome) * 1000).toISOString();
    const blocker = refusalBlocker(outcome, pod, context.budgets ?? '');
    const waits = followWait(previous.waits, waitOf(blocker, outcome), at);
    record = {
      name: previous.name,
      attempts,
      nextAttemptAt,
      ...(blocker ? { blocker } : {}),
      ...(waits?.length ? { waits } : {}),
    };
  }
  return { ...state, pods: { ...state.pods, [uid]: record } };
}

/** What a refused pod waits for, as a span's key: its blocker, or the refusal's kind (a 429 or 5xx to retry). */
function waitOf(blocker: PodRecord['blocker'], outcome: EvictionOutcome) {
  // A budget's hold is said by the budget's name (its sentence, with counts, is in the blocker).
  if (blocker?.budget) return { code: blocker.code, budget: blocker.budget };
  if (blocker) return { code: blocker.code, reason: blocker.reason };
  return { code: 'Retry', reason: `eviction answered ${outcome.kind}; asked again after a backoff` };
}

/**
 * Records a pod held back by its PDB's status (lib/branches/pods/budget-gate.ts): the same blocker as a 429 would
 * give, but no backoff — it is asked again at the next pass, as soon as the budget allows.
 */
export function recordHeldByBudget(
  state: DrainState,
  pod: V1Pod,
  held: { pdbName: string; message: string; budgets: string; now: Date },
): DrainState {
  const uid = uidOf(pod);
  const previous = state.pods[uid] ?? { name: podKey(pod), attempts: 0 };
  const outcome = { kind: 'budget' as const, pdbName: held.pdbName, message: held.message };
  const blocker = refusalBlocker(outcome, pod, held.budgets);
  const { nextAttemptAt: _clear, ...rest } = previous;
  const waits = followWait(previous.waits, waitOf(blocker, outcome), held.now.toISOString());
  const record = { ...rest, ...(blocker ? { blocker } : {}), ...(waits?.length ? { waits } : {}) };
  return { ...state, pods: { ...state.pods, [uid]: record } };
}

/** Blockers recorded for pods still listed (a refused pod keeps blocking while it is in backoff). */
export function recordedBlockers(state: DrainState, listed: readonly V1Pod[]): Blocker[] {
  const blockers: Blocker[] = [];
  for (const pod of listed) {
    const record = state.pods[uidOf(pod)];
    if (record?.blocker) {
      const { code, reason } = record.blocker;
      blockers.push({ code, reason, item: { kind: 'Pod', uid: uidOf(pod), name: podKey(pod) } });
    }
  }
  return blockers;
}

/**
 * Pods drainbridge evicted that are still there after their grace period ended (a finalizer nobody
 * removes, a kubelet that is gone): the drain waits for them, as kubectl does, and says which — so a
 * deadline that passes names what it waited for instead of failing with no blocker.
 */
export function stuckTerminating(state: DrainState, listed: readonly V1Pod[], now: Date): Blocker[] {
  const blockers: Blocker[] = [];
  for (const pod of listed) {
    const record = state.pods[uidOf(pod)];
    const deadline = pod.metadata?.deletionTimestamp;
    if (!record?.evictedAt || !deadline) continue;
    const overSeconds = Math.floor((now.getTime() - new Date(deadline).getTime()) / 1000);
    if (overSeconds <= 0) continue;
    const finalizers = pod.metadata?.finalizers ?? [];
    const why = finalizers.length > 0 ? ` (finalizers: ${finalizers.join(', ')})` : '';
    blockers.push({
      code: 'Other',
      reason: `pod ${podKey(pod)} is still terminating ${overSeconds} s after its grace period ended${why}`,
      item: { kind: 'Pod', uid: uidOf(pod), name: podKey(pod) },
    });
  }
  return blockers;
}

/** Pods evicted (or waiting on a terminating namespace) that are still listed. */
export function countInFlight(state: DrainState, listed: readonly V1Pod[]): number {
  return listed.filter((pod) => {
    const record = state.pods[uidOf(pod)];
    return record?.evictedAt !== undefined || record?.waiting === true;
  }).length;
}

/** What a refusal is announced once for: a budget's hold once per budget, any other refusal once per pod and kind. */
function refusalKey(uid: string, blocker: NonNullable<PodRecord['blocker']>): string {
  return blocker.budget !== undefined ? `budget ${blocker.budget}` : `${uid} ${blocker.code}`;
}

/**
 * Refusals that are new in `after`, announced once as events: a pod's first refusal of a kind, and a
 * budget's first hold — not every pod it holds, nor every change of its counts (a drain behind a
 * `maxUnavailable: 1` budget would otherwise write an event per pod per wave).
 */
export function newRefusals(before: DrainState, after: DrainState): { code: BlockerCode; reason: string }[] {
  const announced = new Set<string>();
  for (const [uid, record] of Object.entries(before.pods)) {
    if (record.blocker) announced.add(refusalKey(uid, record.blocker));
  }
  const fresh: { code: BlockerCode; reason: string }[] = [];
  for (const [uid, record] of Object.entries(after.pods)) {
    if (!record.blocker) continue;
    const key = refusalKey(uid, record.blocker);
    if (announced.has(key)) continue;
    announced.add(key);
    fresh.push({ code: record.blocker.code, reason: record.blocker.reason });
  }
  return fresh;
}

/**
 * The pods of a pod branch as timelines: those moved (with their times, when the record kept them) and
 * those still on the node that drainbridge acted on or was refused for. Pure.
 */
export function podTimelines(branch: string, state: DrainState): ItemTimeline[] {
  const moved = Object.entries(state.moved).map(([uid, name]): ItemTimeline => {
    const departure = state.departures?.[uid];
    return {
      kind: 'pod',
      branch,
      id: uid,
      name,
      state: 'gone',
      ...(departure?.evictedAt ? { askedAt: departure.evictedAt } : {}),
      ...(departure?.goneAt ? { goneAt: departure.goneAt } : {}),
      waits: departure?.waits ?? [],
      blockers: [],
    };
  });
  const present = Object.entries(state.pods).map(([uid, record]): ItemTimeline => {
    const asked = record.evictedAt !== undefined || record.waiting === true;
    return {
      kind: 'pod',
      branch,
      id: uid,
      name: record.name,
      state: asked ? 'moving' : record.blocker ? 'blocked' : 'waiting',
      ...(record.evictedAt ? { askedAt: record.evictedAt } : {}),
      waits: record.waits ?? [],
      blockers: [],
    };
  });
  return [...moved, ...present];
}
