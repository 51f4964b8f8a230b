/**
 * An evacuation's timeline, read from its Evacuation record alone: the phases entered, each branch's
 * span and blockers, and one row per pod, KubeVirt VMI and Nova server — when it was asked to move, when
 * it was gone, source → target, its waits and blockers. What `drainbridge report` draws and the progress
 * lines are diffed from. Pure; each branch state is read through its schema-checked format.
 */

import { branchCalled } from '../../lib/branches/registry.ts';
import type { EvacuationObject } from '../../lib/clients/kube/paths.ts';
import type { BranchSpan, ItemTimeline, Span } from '../../lib/model/timeline.ts';

export interface BranchTimeline {
  readonly name: string;
  readonly startedAt?: string;
  readonly finishedAt?: string;
  readonly total: number;
  readonly moved: number;
  readonly inFlight: number;
  readonly skipped: number;
  /** Whether a pass has reported the branch's counts yet (a branch that has not is not drawn). */
  readonly reported: boolean;
  /** Blockers about no item the branch lists (an uncordon by someone else, a pod it never acted on). */
  readonly blockers: readonly BranchSpan[];
}

export interface EvacuationTimeline {
  readonly requestId: string;
  readonly nodeName: string;
  readonly reason?: string;
  /** When the request was admitted or put in line for a slot (drainbridge's clock, as every time here). */
  readonly requestedAt?: string;
  readonly phase?: string;
  readonly phases: readonly { readonly phase: string; readonly at: string }[];
  readonly restore?: { readonly startedAt?: string; readonly finishedAt?: string };
  readonly lastError?: string;
  /** `--disable-eviction`: pods were deleted, not evicted. */
  readonly deletes: boolean;
  readonly branches: readonly BranchTimeline[];
  readonly items: readonly ItemTimeline[];
  /** Branch states that could not be read, each with its reason (their items are missing). */
  readonly unreadable: readonly string[];
}

const KIND_OF_ITEM: Readonly<Record<string, ItemTimeline['kind']>> = {
  Pod: 'pod',
  VirtualMachineInstance: 'vmi',
  Server: 'server',
};

/** A blocker span without its item (as an item's row carries it). */
function asSpan(span: BranchSpan): Span {
  const { item: _item, ...rest } = span;
  return rest;
}

/**
 * The rows of one branch: its items, each with the branch's blockers about it; a blocker about an item
 * the state does not list (a bare pod drainbridge never evicted) becomes that item's row.
 */
function branchRows(branch: string, items: ItemTimeline[], spans: readonly BranchSpan[]) {
  const rows = new Map(items.map((item) => [item.id, item]));
  const loose: BranchSpan[] = [];
  for (const span of spans) {
    if (!span.item) loose.push(span);
    else addBlocker(rows, branch, span, span.item);
  }
  return { rows: [...rows.values()], loose };
}

function addBlocker(
  rows: Map<string, ItemTimeline>,
  branch: string,
  span: BranchSpan,
  item: NonNullable<BranchSpan['item']>,
): void {
  const row = rows.get(item.uid);
  // A budget's hold is already the pod's own wait, with the budget named: not drawn twice.
  if (row && span.code === 'DisruptionBudget' && row.waits.some((wait) => wait.code === 'DisruptionBudget')) return;
  const base: ItemTimeline = row ?? {
    kind: KIND_OF_ITEM[item.kind] ?? 'pod',
    branch,
    id: item.uid,
    name: item.name,
    state: 'blocked',
    waits: [],
    blockers: [],
  };
  rows.set(item.uid, { ...base, blockers: [...base.blockers, asSpan(span)] });
}

function byTime(a: ItemTimeline, b: ItemTimeline): number {
  const start = (item: ItemTimeline) => item.askedAt ?? item.waits[0]?.from ?? item.blockers[0]?.from ?? '~';
  return start(a).localeCompare(start(b)) || a.name.localeCompare(b.name);
}

type BranchEntry = NonNullable<NonNullable<EvacuationObject['status']>['branches']>[string];

/** One branch's part: its bar and loose blockers, its rows, or why its state could not be read. */
function branchPart(name: string, entry: BranchEntry) {
  let own: ItemTimeline[] = [];
  let unreadable: string | undefined;
  try {
    // Each branch reads its own state (the registry); a branch this build does not have lists no items.
    own = branchCalled(name)?.itemRows(name, entry.state) ?? [];
  } catch (error) {
    unreadable = (error as Error).message;
  }
  const { rows, loose } = branchRows(name, own, entry.blockerSpans ?? []);
  const branch: BranchTimeline = {
    name,
    ...(entry.startedAt ? { startedAt: entry.startedAt } : {}),
    ...(entry.finishedAt ? { finishedAt: entry.finishedAt } : {}),
    total: entry.total ?? 0,
    moved: entry.moved ?? 0,
    inFlight: entry.inFlight ?? 0,
    skipped: entry.skipped ?? 0,
    reported: entry.total !== undefined,
    blockers: loose,
  };
  return { branch, rows: rows.sort(byTime), unreadable };
}

/**
 * When the request was admitted, on drainbridge's clock like every other time in the record: written when
 * the record was created; for a record written before that was kept, the first phase entered. Never the
 * API server's creationTimestamp: another clock, and the report would show a start after an end.
 */
function requestedAt(record: EvacuationObject): string | undefined {
  return record.status?.requestedAt ?? record.status?.phases?.[0]?.at;
}

export function timelineOf(record: EvacuationObject): EvacuationTimeline {
  const status = record.status ?? {};
  const parts = Object.entries(status.branches ?? {}).map(([name, entry]) => branchPart(name, entry));
  const created = requestedAt(record);
  return {
    requestId: record.spec.requestId,
    nodeName: record.spec.nodeName,
    ...(record.spec.reason ? { reason: record.spec.reason } : {}),
    ...(created ? { requestedAt: created } : {}),
    ...(status.phase ? { phase: status.phase } : {}),
    phases: status.phases ?? [],
    ...(status.restore ? { restore: status.restore } : {}),
    ...(status.lastError ? { lastError: status.lastError } : {}),
    deletes: record.spec.drain?.disableEviction === true,
    branches: parts.map((part) => part.branch),
    items: parts.flatMap((part) => part.rows),
    unreadable: parts.flatMap((part) => (part.unreadable ? [part.unreadable] : [])),
  };
}
