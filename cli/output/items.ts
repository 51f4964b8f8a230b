/**
 * Per-item progress from the records a run writes (and the pods pass's rounds in between): each
 * update is read as a timeline (timeline.ts) and compared with the one before — a pod's eviction
 * accepted, a VM gone elsewhere, a wait begun or ended, a blocker reported or cleared. The first record
 * seen is the baseline: what happened before this run (a resumed request) is not told again. Pure but
 * for the state it keeps between updates.
 */
import type { BranchSpan, ItemTimeline, Span } from '../../lib/domain/timeline.ts';
import type { EvacuationObject } from '../../lib/kube/paths.ts';
import type { RecordUpdate } from '../../lib/progress/evacuation-store.ts';
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

/** Follows one run's records; `update` returns what changed since the last one it saw. */
export class ItemWatch {
  #record: EvacuationObject | undefined;
  #timeline: EvacuationTimeline | undefined;

  /** The timeline as it stands (undefined before the first record). */
  get timeline(): EvacuationTimeline | undefined {
    return this.#timeline;
  }

  update(update: RecordUpdate): ItemChange[] {
    const record = this.#recordAfter(update);
    if (!record) return [];
    this.#record = update.kind === 'written' ? update.record : this.#record;
    const previous = this.#timeline;
    let next: EvacuationTimeline;
    try {
      next = timelineOf(record);
    } catch {
      return [];
    }
    this.#timeline = next;
    return previous ? changesBetween(previous, next) : [];
  }

  /** The record an update leaves: the one written, or the last one with a pass's round laid over it. */
  #recordAfter(update: RecordUpdate): EvacuationObject | undefined {
    if (update.kind === 'written') {
      // Another request's record (a process running several) is not this run's.
      if (this.#record && update.record.spec.requestId !== this.#record.spec.requestId) return undefined;
      return update.record;
    }
    const last = this.#record;
    if (!last || last.spec.requestId !== update.requestId) return undefined;
    const branches = last.status?.branches ?? {};
    const entry = branches[update.branch] ?? { version: '0', state: undefined };
    return {
      ...last,
      status: { ...last.status, branches: { ...branches, [update.branch]: { ...entry, state: update.state } } },
    };
  }
}
