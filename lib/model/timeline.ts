/**
 * The per-item timeline of an evacuation: when each pod, KubeVirt VMI and Nova server was asked to move,
 * when it was gone, where it went, and what it waited for on the way (a PodDisruptionBudget, a failed
 * migration's retry, a blocker). The branches keep their part in their own state (written in the writes
 * they make anyway); `drainbridge report` and the CLI's progress lines read it back. Pure.
 *
 * Size: an item's entry is its times, a target and at most `TIMELINE_LIMITS.spansPerItem` spans (about
 * 1 KB at worst); a branch keeps at most `spansPerBranch` blocker spans, reasons cut to `reasonChars`. A
 * node runs a few hundred pods at most (kubelet's max-pods, 110 by default): even 1,000 items at their
 * worst stay under three quarters of the 1.5 MiB Kubernetes allows an object
 * (test/unit/cli/output/record-timeline.test.ts measures it).
 */
import { z } from 'zod';

/** A stretch of time an item (or a branch) waited for something: from, and to once it ended. */
export interface Span {
  /** What it waited for: a blocker code (`DisruptionBudget`, `BarePod`, …) or a wait (`MigrationSlot`, `Retry`). */
  readonly code: string;
  /** ISO 8601. */
  readonly from: string;
  /** ISO 8601; absent while it lasts. */
  readonly to?: string;
  /** The PodDisruptionBudget (`namespace/name`) a pod waited for. */
  readonly budget?: string;
  /** The sentence said at the start, cut to `reasonChars`. */
  readonly reason?: string;
}

/** A branch's blocker span: a Span, and the item it held back when it was about one. */
export interface BranchSpan extends Span {
  readonly item?: { readonly kind: string; readonly uid: string; readonly name: string };
}

export const TIMELINE_LIMITS = Object.freeze({
  /** Spans kept per item: the oldest ended ones go first. */
  spansPerItem: 4,
  /** Blocker spans kept per branch: the oldest ended ones go first. */
  spansPerBranch: 200,
  /** A span's reason is cut to this many characters (a budget's wait keeps none: the budget says it). */
  reasonChars: 160,
});

const Instant = z.iso.datetime({ offset: true });

export const SPAN_SCHEMA = z.looseObject({
  code: z.string().min(1),
  from: Instant,
  to: Instant.optional(),
  budget: z.string().optional(),
  reason: z.string().optional(),
});

export const SPANS_SCHEMA = z.array(SPAN_SCHEMA);

/** What an item waits for now (undefined: nothing); two waits are the same when code and budget are. */
export interface WaitKey {
  readonly code: string;
  readonly budget?: string;
  readonly reason?: string;
}

function sameWait(span: Span, key: WaitKey): boolean {
  return span.code === key.code && span.budget === key.budget;
}

/** Drops the oldest ended spans until at most `max` are left (an open one is never dropped). */
export function bounded<S extends Span>(spans: readonly S[], max: number): S[] {
  const kept = [...spans];
  while (kept.length > max) {
    const index = kept.findIndex((span) => span.to !== undefined);
    if (index < 0) break;
    kept.splice(index, 1);
  }
  return kept;
}

/** A reason cut to the limit. */
export function shortReason(reason: string): string {
  const max = TIMELINE_LIMITS.reasonChars;
  return reason.length <= max ? reason : `${reason.slice(0, max - 1)}…`;
}

/**
 * The spans after an observation at `at`: the open span ends when the item no longer waits for the same
 * thing, and a new one opens for what it waits for now. Unchanged input is returned as is (the same
 * array), so a pass that saw nothing new writes nothing new.
 */
export function followWait(
  spans: readonly Span[] | undefined,
  now: WaitKey | undefined,
  at: string,
): Span[] | undefined {
  const list = spans ?? [];
  const open = list.at(-1)?.to === undefined ? list.at(-1) : undefined;
  if (open && now && sameWait(open, now)) return spans as Span[];
  if (!open && !now) return spans as Span[] | undefined;
  const closed = open ? [...list.slice(0, -1), { ...open, to: at }] : [...list];
  if (!now) return closed;
  const next: Span = {
    code: now.code,
    from: at,
    ...(now.budget !== undefined ? { budget: now.budget } : {}),
    ...(now.reason !== undefined ? { reason: shortReason(now.reason) } : {}),
  };
  return bounded([...closed, next], TIMELINE_LIMITS.spansPerItem);
}

/** Ends an open span (the item moved on or left). */
export function endWaits(spans: readonly Span[] | undefined, at: string): Span[] | undefined {
  return followWait(spans, undefined, at);
}

/** Where an item stands in its timeline. */
export type ItemState = 'waiting' | 'moving' | 'gone' | 'blocked' | 'failed';

/** One item's timeline, as the report and the progress lines read it. */
export interface ItemTimeline {
  readonly kind: 'pod' | 'vmi' | 'server';
  readonly branch: string;
  /** uid (pods, VMIs) or server id. */
  readonly id: string;
  /** `namespace/name` (pods, VMIs) or the server's name. */
  readonly name: string;
  readonly state: ItemState;
  /** Eviction accepted, migration started. */
  readonly askedAt?: string;
  /** Pod deleted, VM running elsewhere. */
  readonly goneAt?: string;
  /** Node or compute host it left, and where it went (VMs and servers). */
  readonly source?: string;
  readonly target?: string;
  /** Migrations started for it (VMs and servers). */
  readonly attempts?: number;
  /** What it waited for, oldest first. */
  readonly waits: readonly Span[];
  /** The branch's blockers about this item. */
  readonly blockers: readonly Span[];
}
