/**
 * Per-item progress from the records a run writes (and the pods pass's rounds in between): each
 * update is read as a timeline (timeline.ts) and compared with the one before — a pod's eviction
 * accepted, a VM gone elsewhere, a wait begun or ended, a blocker reported or cleared. The first record
 * seen is the baseline: what happened before this run (a resumed request) is not told again. Pure but
 * for the state it keeps between updates.
 */

import type { EvacuationObject } from '../../lib/clients/kube/paths.ts';
import type { BranchProgress } from '../../lib/model/pass.ts';
import type { Blocker } from '../../lib/model/plan.ts';
import type { BranchSpan, ItemTimeline, Span } from '../../lib/model/timeline.ts';
import { followBlockers, type RecordUpdate } from '../../lib/progress/index.ts';
import { type EvacuationTimeline, timelineOf } from './timeline.ts';

export type ItemChange =
  | {
      readonly change: 'asked' | 'gone';
      readonly item: ItemTimeline;
      /** Pods were deleted (`--disable-eviction`), not evicted. */
      readonly deletes: boolean;
    }
  | { readonly change: 'wait' | 'wait-ended'; readonly item: ItemTimeline; readonly span: Span }
  | { readonly change: 'blocker' | 'blocker-ended'; readonly branch: string; readonly span: BranchSpan };

const keyOf = (item: ItemTimeline) => `${item.branch}/${item.id}`;
const spanKey = (branch: string, span: BranchSpan) =>
  `${branch} ${span.code} ${span.item?.uid ?? span.reason} ${span.from}`;

function waitChanges(before: ItemTimeline | undefined, after: ItemTimeline): ItemChange[] {
  const changes: ItemChange[] = [];
  const had = new Map((before?.waits ?? []).map((span) => [`${span.code} ${span.from}`, span]));
  for (const span of after.waits) {
    const old = had.get(`${span.code} ${span.from}`);
    if (!old) changes.push({ change: 'wait', item: after, span });
    if (span.to !== undefined && old?.to === undefined) changes.push({ change: 'wait-ended', item: after, span });
  }
  return changes;
}

/** What changed between two timelines of one request, in the order a person would tell it. Pure. */
export function changesBetween(before: EvacuationTimeline, after: EvacuationTimeline): ItemChange[] {
  const previous = new Map(before.items.map((item) => [keyOf(item), item]));
  const changes: ItemChange[] = [];
  for (const item of after.items) {
    const old = previous.get(keyOf(item));
    changes.push(...waitChanges(old, item));
    if (item.askedAt && !old?.askedAt) changes.push({ change: 'asked', item, deletes: after.deletes });
    if (item.goneAt && !old?.goneAt) changes.push({ change: 'gone', item, deletes: after.deletes });
  }
  const spans = (timeline: EvacuationTimeline) =>
    timeline.branches.flatMap((branch) =>
      [
        ...branch.blockers,
        ...timeline.items
          .filter((i) => i.branch === branch.name)
          .flatMap((i) => i.blockers.map((s) => ({ ...s, item: { kind: i.kind, uid: i.id, name: i.name } }))),
      ].map((span) => ({ branch: branch.name, span })),
    );
  const had = new Map(spans(before).map((entry) => [spanKey(entry.branch, entry.span), entry.span]));
  for (const { branch, span } of spans(after)) {
    const old = had.get(spanKey(branch, span));
    if (!old) changes.push({ change: 'blocker', branch, span });
    if (span.to !== undefined && old?.to === undefined) changes.push({ change: 'blocker-ended', branch, span });
  }
  return changes;
}

/**
 * The identity of a change, stable across passes and executions: the item (kind and uid or server id),
 * what happened, and when it was asked (a new ask of the same pod is news; the same ask seen again is
 * not); a blocker by its branch, code and item (or sentence) — when it opened is a pass's detail.
 */
export function changeIdentity(change: ItemChange): string {
  switch (change.change) {
    case 'asked':
    case 'gone':
      return `${change.change} ${change.item.kind} ${change.item.id} ${change.item.askedAt ?? ''}`;
    case 'wait':
    case 'wait-ended': {
      const { span } = change;
      return `${change.change} ${change.item.kind} ${change.item.id} ${span.code} ${span.budget ?? ''} ${span.from}`;
    }
    default:
      return `blocker ${change.branch} ${change.span.code} ${change.span.item?.uid ?? change.span.reason ?? ''}`;
  }
}

/**
 * What has been told: each item change once; a blocker's start while it is not open, its end while it is.
 * Returns whether `change` is news, and notes it.
 */
function isNews(told: Set<string>, openBlockers: Set<string>, change: ItemChange): boolean {
  const identity = changeIdentity(change);
  if (change.change === 'blocker') {
    if (openBlockers.has(identity)) return false;
    openBlockers.add(identity);
    return true;
  }
  if (change.change === 'blocker-ended') return openBlockers.delete(identity);
  if (told.has(identity)) return false;
  told.add(identity);
  return true;
}

const EMPTY_TIMELINE: EvacuationTimeline = {
  requestId: '',
  nodeName: '',
  phases: [],
  deletes: false,
  branches: [],
  items: [],
  unreadable: [],
};

type Branches = NonNullable<NonNullable<EvacuationObject['status']>['branches']>;

/** A pass's latest round, and the branch's version in the record it was laid over. */
interface Round {
  readonly state: unknown;
  readonly at: string;
  readonly blockers?: readonly Blocker[];
  readonly progress?: BranchProgress;
  readonly baseVersion: string | undefined;
}

/**
 * The branch's blocker spans as the round sees them: the pass writes its blockers only when it ends,
 * but a round already sees a blocker gone (a bare pod deleted) — the display must not show a blocker
 * that no longer holds. Pure.
 */
function spansAfterRound(entry: Branches[string], round: Round) {
  if (!round.blockers) return {};
  const spans = followBlockers(entry.blockerSpans, round.blockers, round.at);
  return spans ? { blockerSpans: spans } : {};
}

/**
 * Follows one run's records; `update` returns what changed since the last one it saw, each change once.
 *
 * A record written by one branch carries the other branches' states as last written, which can be older
 * than a round the pods pass reported in between: the round is laid over every record until the branch
 * writes again, so a pod seen evicted is not unseen (and told again) when another branch writes.
 */
export class ItemWatch {
  #record: EvacuationObject | undefined;
  #timeline: EvacuationTimeline | undefined;
  readonly #rounds = new Map<string, Round>();
  /** Every change told (changeIdentity): a pass that observes the same ask again does not tell it again. */
  readonly #told = new Set<string>();
  readonly #openBlockers = new Set<string>();

  /** The timeline as it stands (undefined before the first record). */
  get timeline(): EvacuationTimeline | undefined {
    return this.#timeline;
  }

  update(update: RecordUpdate): ItemChange[] {
    const record = this.#recordAfter(update);
    if (!record) return [];
    const previous = this.#timeline;
    let next: EvacuationTimeline;
    try {
      next = timelineOf(this.#withRounds(record));
    } catch {
      return [];
    }
    this.#timeline = next;
    // The first record is the baseline: what it holds happened before this run and is not told.
    const changes = changesBetween(previous ?? EMPTY_TIMELINE, next);
    const fresh = changes.filter((change) => isNews(this.#told, this.#openBlockers, change));
    return previous ? fresh : [];
  }

  /** The record with each branch's latest round over it, while that branch has not written since. */
  #withRounds(record: EvacuationObject): EvacuationObject {
    const branches: Branches = { ...record.status?.branches };
    for (const [branch, round] of this.#rounds) {
      const entry = branches[branch];
      if (entry && entry.version !== round.baseVersion) {
        // The branch wrote since: its own record is as new as the round, or newer.
        this.#rounds.delete(branch);
        continue;
      }
      const base = entry ?? { version: '0', state: undefined };
      branches[branch] = { ...base, ...round.progress, state: round.state, ...spansAfterRound(base, round) };
    }
    return { ...record, status: { ...record.status, branches } };
  }

  /** The record an update leaves: the one written, or the last one (a pass's round is kept to lay over it). */
  #recordAfter(update: RecordUpdate): EvacuationObject | undefined {
    if (update.kind === 'written') {
      // Another request's record (a process running several) is not this run's.
      if (this.#record && update.record.spec.requestId !== this.#record.spec.requestId) return undefined;
      this.#record = update.record;
      return update.record;
    }
    const last = this.#record;
    if (!last || last.spec.requestId !== update.requestId) return undefined;
    const baseVersion = last.status?.branches?.[update.branch]?.version;
    this.#rounds.set(update.branch, {
      state: update.state,
      at: update.at.toISOString(),
      ...(update.blockers ? { blockers: update.blockers } : {}),
      ...(update.progress ? { progress: update.progress } : {}),
      baseVersion,
    });
    return last;
  }
}
