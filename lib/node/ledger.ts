/**
 * The ownership ledger: one JSON annotation on the node that says who holds it for maintenance and what
 * drainbridge changed, so that releasing the last hold undoes exactly that and nothing else.
 *
 * Pure. `planHold` and `planRelease` read a node and return the merge patch to send (always conditional
 * on the node's resourceVersion) or nothing; lib/node/hold.ts sends it and retries on conflict.
 */
import type { V1Node, V1Taint } from '@kubernetes/client-node';
import { z } from 'zod';
import type { MergePatch } from '../clients/kube/paths.ts';
import { RecordUnreadable } from '../errors/index.ts';
import type { Origin } from '../model/request.ts';
import { type RecordFormat, readJsonRecord, writeJsonRecord } from '../util/json-record.ts';
import { isCordonedBySomeoneElse } from './field-owner.ts';

export const LEDGER_ANNOTATION = 'drainbridge.io/ledger';
/**
 * Set ("true") on a node while its ledger holds any request, removed with the last hold: admission lists
 * only the held nodes (a label selector) instead of every node of the cluster at every attempt.
 */
export const HELD_LABEL = 'drainbridge.io/held';

/** Set while held so autoscalers leave the node alone; each only when nobody else set that key. */
export const HOLD_ANNOTATIONS: Readonly<Record<string, string>> = Object.freeze({
  'cluster-autoscaler.kubernetes.io/scale-down-disabled': 'true',
  'karpenter.sh/do-not-disrupt': 'true',
});

/** Compatibility taints, added only when configured (a NoSchedule taint also keeps DaemonSet pods off). */
export const COMPATIBILITY_TAINTS = Object.freeze({
  'medik8s.io/drain': { key: 'medik8s.io/drain', effect: 'NoSchedule' },
  'kubevirt.io/drain': { key: 'kubevirt.io/drain', effect: 'NoSchedule' },
});
export type CompatibilityTaint = keyof typeof COMPATIBILITY_TAINTS;

/** The apiserver refuses an object whose annotations, keys and values together, exceed 256 KiB. */
export const ANNOTATIONS_LIMIT_BYTES = 256 * 1024;

/**
 * drainbridge keeps its ledger within half of that, leaving the rest to the node's other annotations
 * (kubeadm, CNI, CSI, cloud controllers). At about 75 bytes a hold this is over 1,500 holds on one node;
 * past it a new hold is refused with a clear error instead of a write the apiserver would reject, and
 * the oldest tombstones are dropped first (they only guard against very late duplicates).
 */
export const LEDGER_BUDGET_BYTES = 128 * 1024;

/** How long a released requestId is remembered by default: 24 h. */
export const DEFAULT_TOMBSTONE_SECONDS = 24 * 60 * 60;

export interface LedgerSettings {
  /** Seconds a released requestId is remembered, so a late duplicate does not re-cordon (≥ 24 h advised). */
  readonly tombstoneSeconds: number;
  /** Compatibility taints to add while held; none by default. */
  readonly compatibilityTaints: readonly CompatibilityTaint[];
  /** Labels to add while held (each only where the node has no such key); none by default. */
  readonly holdLabels?: Readonly<Record<string, string>>;
}

export const DEFAULT_LEDGER_SETTINGS: LedgerSettings = Object.freeze({
  tombstoneSeconds: DEFAULT_TOMBSTONE_SECONDS,
  compatibilityTaints: [],
});

export interface Hold {
  readonly requester: string;
  readonly origin: Origin | string;
  /** When the hold was taken (ISO 8601). */
  readonly since: string;
  /** The node's boot ID (`status.nodeInfo.bootID`) when the hold was taken: a change means it rebooted since. */
  readonly bootID?: string;
  /** `reboot`: the maintenance ends when the node has rebooted and is Ready (lib/sources/reboot). */
  readonly endsOn?: 'reboot';
}

/** What drainbridge changed on the node when the first hold was taken. */
export interface LedgerChanges {
  /** `spec.unschedulable` before drainbridge touched the node. */
  readonly priorUnschedulable: boolean;
  /** Whether drainbridge set `spec.unschedulable` (false when the node was cordoned already). */
  readonly cordoned: boolean;
  /** Annotations drainbridge added, with the values it set. */
  readonly annotations: Readonly<Record<string, string>>;
  /** Taints drainbridge added. */
  readonly taints: readonly { readonly key: string; readonly effect: string }[];
  /** Labels drainbridge added, with the values it set (absent in ledgers written before labels were kept). */
  readonly labels?: Readonly<Record<string, string>>;
}

export interface Ledger {
  readonly holds: Readonly<Record<string, Hold>>;
  /** Released requestIds → when (ISO 8601). */
  readonly released: Readonly<Record<string, string>>;
  /** Present while any hold is held. */
  readonly changes?: LedgerChanges;
  /** When an uncordon by someone else was first seen while held (reported once, never fought). */
  readonly outOfBandUncordonAt?: string;
}

export const EMPTY_LEDGER: Ledger = Object.freeze({ holds: {}, released: {} });

/** An instant as drainbridge writes them (`Date.toISOString()`); anything else is damage, not a date. */
const Instant = z.iso.datetime({ offset: true });

/** One hold as drainbridge writes it. */
export const HOLD_SCHEMA = z.looseObject({ requester: z.string(), origin: z.string(), since: Instant });

/** What the first hold changed, as drainbridge writes it. */
export const CHANGES_SCHEMA = z.looseObject({
  priorUnschedulable: z.boolean(),
  cordoned: z.boolean(),
  annotations: z.record(z.string(), z.string()),
  taints: z.array(z.looseObject({ key: z.string(), effect: z.string() })),
  labels: z.record(z.string(), z.string()).optional(),
});

/**
 * The ledger as drainbridge writes it. Loose objects: fields a newer drainbridge added are kept and
 * written back, not dropped. Every date is checked: a tombstone with a date that does not parse would
 * be pruned as "old" and let a late duplicate cordon again.
 */
const LEDGER_V1: z.ZodType<Ledger> = z.looseObject({
  holds: z.record(z.string(), HOLD_SCHEMA),
  released: z.record(z.string(), Instant),
  changes: CHANGES_SCHEMA.optional(),
  outOfBandUncordonAt: Instant.optional(),
});

export const LEDGER_FORMAT: RecordFormat<Ledger> = {
  what: `ledger (node annotation ${LEDGER_ANNOTATION})`,
  versions: [LEDGER_V1],
};

/** A node's ledger as read: readable (absent reads as empty), or unreadable with the reason. */
export type LedgerRead =
  | { readonly status: 'ok'; readonly ledger: Ledger }
  | { readonly status: 'unreadable'; readonly reason: string; readonly text: string };

/** The node's ledger, or why it cannot be read. Never throws; never reads damage as empty. */
export function ledgerOf(node: V1Node): LedgerRead {
  const text = node.metadata?.annotations?.[LEDGER_ANNOTATION];
  const read = readJsonRecord(text, LEDGER_FORMAT);
  if (read.status === 'unreadable') return { status: 'unreadable', reason: read.reason, text: text ?? '' };
  return { status: 'ok', ledger: read.status === 'ok' ? read.value : EMPTY_LEDGER };
}

/**
 * The node's ledger; a missing annotation reads as empty. An unreadable one throws RecordUnreadable:
 * every path that would decide from it (take or release a hold, uncordon, count, guard a step) stops
 * instead of reading damage as "no holds" (issue 12: that lost holds and uncordoned nodes under
 * maintenance). Only `drainbridge repair` rewrites it.
 */
export function readLedger(node: V1Node): Ledger {
  const read = ledgerOf(node);
  if (read.status === 'ok') return read.ledger;
  const nodeName = node.metadata?.name;
  throw new RecordUnreadable({ what: LEDGER_FORMAT.what, reason: read.reason, ...(nodeName ? { nodeName } : {}) });
}

export function isHeld(ledger: Ledger): boolean {
  return Object.keys(ledger.holds).length > 0;
}

/** Tombstones younger than the retention; older ones are dropped at the next write. */
export function pruneReleased(
  released: Ledger['released'],
  now: Date,
  tombstoneSeconds: number,
): Record<string, string> {
  const keep: Record<string, string> = {};
  const cutoff = now.getTime() - tombstoneSeconds * 1000;
  for (const [requestId, at] of Object.entries(released)) {
    if (Date.parse(at) >= cutoff) keep[requestId] = at;
  }
  return keep;
}

export function ledgerBytes(ledger: Ledger): number {
  return Buffer.byteLength(writeJsonRecord(ledger, LEDGER_FORMAT), 'utf8');
}

/**
 * The ledger within LEDGER_BUDGET_BYTES, dropping the oldest tombstones while it is over; undefined when
 * its holds alone are over (nothing may be dropped from them).
 */
export function fitLedger(ledger: Ledger): Ledger | undefined {
  if (ledgerBytes(ledger) <= LEDGER_BUDGET_BYTES) return ledger;
  const byAge = Object.entries(ledger.released).sort(([, a], [, b]) => Date.parse(a) - Date.parse(b));
  let released = Object.fromEntries(byAge);
  while (byAge.length > 0) {
    // Drop in batches of a tenth, so a ledger with thousands of tombstones fits in a few steps.
    byAge.splice(0, Math.max(1, Math.ceil(byAge.length / 10)));
    released = Object.fromEntries(byAge);
    if (ledgerBytes({ ...ledger, released }) <= LEDGER_BUDGET_BYTES) return { ...ledger, released };
  }
  const fitted = { ...ledger, released };
  return ledgerBytes(fitted) <= LEDGER_BUDGET_BYTES ? fitted : undefined;
}

/** The merge patch of the ledger annotation, conditional on the node's resourceVersion. */
function ledgerPatch(
  node: V1Node,
  ledger: Ledger,
  extra: { spec?: MergePatch; annotations?: MergePatch; labels?: Record<string, string | null> } = {},
): MergePatch {
  const held = isHeld(ledger);
  const labelled = node.metadata?.labels?.[HELD_LABEL] !== undefined;
  // The held label only when it changes (null removes it in a merge patch).
  const labels = { ...extra.labels, ...(held !== labelled ? { [HELD_LABEL]: held ? 'true' : null } : {}) };
  const patch: Record<string, MergePatch> = {
    metadata: {
      resourceVersion: node.metadata?.resourceVersion ?? '',
      annotations: { ...extra.annotations, [LEDGER_ANNOTATION]: writeJsonRecord(ledger, LEDGER_FORMAT) },
      ...(Object.keys(labels).length > 0 ? { labels } : {}),
    },
  };
  if (extra.spec) patch.spec = extra.spec;
  return patch;
}

export interface HoldRequest {
  readonly requestId: string;
  readonly requester: string;
  readonly origin: Origin | string;
  /** `reboot`: a reboot of the node (boot ID changed, Ready again) ends this maintenance. */
  readonly endsOn?: 'reboot';
}

export type HoldDecision =
  | { readonly action: 'none'; readonly why: 'already-held' | 'released' }
  | { readonly action: 'refuse'; readonly why: string }
  | { readonly action: 'patch'; readonly patch: MergePatch; readonly first: boolean; readonly ledger: Ledger };

function taintsToAdd(node: V1Node, settings: LedgerSettings): { key: string; effect: string }[] {
  const present = node.spec?.taints ?? [];
  return settings.compatibilityTaints
    .map((name) => COMPATIBILITY_TAINTS[name])
    .filter((taint) => !present.some((t) => t.key === taint.key && t.effect === taint.effect));
}

function firstHoldChanges(node: V1Node, settings: LedgerSettings): LedgerChanges {
  const present = node.metadata?.annotations ?? {};
  const annotations: Record<string, string> = {};
  for (const [key, value] of Object.entries(HOLD_ANNOTATIONS)) {
    if (!Object.hasOwn(present, key)) annotations[key] = value;
  }
  const presentLabels = node.metadata?.labels ?? {};
  const labels: Record<string, string> = {};
  for (const [key, value] of Object.entries(settings.holdLabels ?? {})) {
    if (!Object.hasOwn(presentLabels, key)) labels[key] = value;
  }
  const priorUnschedulable = node.spec?.unschedulable === true;
  const taints = taintsToAdd(node, settings);
  return {
    priorUnschedulable,
    cordoned: !priorUnschedulable,
    annotations,
    taints,
    ...(Object.keys(labels).length > 0 ? { labels } : {}),
  };
}

/**
 * Takes a hold for `request`. The first hold cordons (`spec.unschedulable` only), sets the autoscaler
 * annotations nobody else set and the configured compatibility taints, and records all of it. A hold
 * already held changes nothing; a released (tombstoned) requestId changes nothing either.
 */
export function planHold(
  node: V1Node,
  request: HoldRequest,
  now: Date,
  settings = DEFAULT_LEDGER_SETTINGS,
): HoldDecision {
  const ledger = readLedger(node);
  if (Object.hasOwn(ledger.holds, request.requestId)) return { action: 'none', why: 'already-held' };
  const released = pruneReleased(ledger.released, now, settings.tombstoneSeconds);
  if (Object.hasOwn(released, request.requestId)) return { action: 'none', why: 'released' };
  const bootID = node.status?.nodeInfo?.bootID;
  const hold: Hold = {
    requester: request.requester,
    origin: request.origin,
    since: now.toISOString(),
    ...(bootID ? { bootID } : {}),
    ...(request.endsOn ? { endsOn: request.endsOn } : {}),
  };
  const holds = { ...ledger.holds, [request.requestId]: hold };
  const changes = ledger.changes ?? firstHoldChanges(node, settings);
  const next = fitLedger(ledger.changes ? { ...ledger, holds, released } : { holds, released, changes });
  if (!next) return { action: 'refuse', why: ledgerFullReason(node, ledger) };
  if (ledger.changes) return { action: 'patch', patch: ledgerPatch(node, next), first: false, ledger: next };
  const spec: Record<string, MergePatchable> = {};
  if (changes.cordoned) spec.unschedulable = true;
  if (changes.taints.length > 0) spec.taints = [...(node.spec?.taints ?? []).map(plainTaint), ...changes.taints];
  const patch = ledgerPatch(node, next, { annotations: changes.annotations, spec, labels: { ...changes.labels } });
  return { action: 'patch', patch, first: true, ledger: next };
}

type MergePatchable = boolean | readonly unknown[];

function ledgerFullReason(node: V1Node, ledger: Ledger): string {
  const holds = Object.keys(ledger.holds).length;
  const kib = Math.round(ledgerBytes(ledger) / 1024);
  return `node ${node.metadata?.name ?? ''} already has ${holds} maintenance holds (its ledger is ${kib} KiB; drainbridge keeps it under ${LEDGER_BUDGET_BYTES / 1024} KiB of the node's ${ANNOTATIONS_LIMIT_BYTES / 1024} KiB annotation limit): end some of them with drainbridge restore first`;
}

function plainTaint(taint: V1Taint): Record<string, unknown> {
  const out: Record<string, unknown> = { key: taint.key, effect: taint.effect };
  if (taint.value !== undefined) out.value = taint.value;
  if (taint.timeAdded !== undefined) out.timeAdded = taint.timeAdded;
  return out;
}

/** What releasing the last hold put back. */
export interface Restored {
  /** drainbridge had cordoned the node and now uncordoned it. */
  readonly uncordoned: boolean;
  /**
   * The field manager that set `spec.unschedulable` after drainbridge did (managedFields): its cordon was
   * left in place. Absent when the cordon was drainbridge's or the API cannot tell.
   */
  readonly cordonKeptFor?: string;
  readonly annotationsRemoved: readonly string[];
  readonly taintsRemoved: readonly string[];
  /** Labels drainbridge added that still had its value, removed (absent: none). */
  readonly labelsRemoved?: readonly string[];
}

export const NOTHING_RESTORED: Restored = Object.freeze({
  uncordoned: false,
  annotationsRemoved: [],
  taintsRemoved: [],
});

export type ReleaseDecision =
  | { readonly action: 'none'; readonly why: 'already-released' | 'not-held'; readonly last: boolean }
  | {
      readonly action: 'patch';
      readonly patch: MergePatch;
      /** Whether this was the last hold (and what it restored). */
      readonly last: boolean;
      readonly restored: Restored;
      /** The request never held the node: only its tombstone is written. */
      readonly neverHeld?: true;
    };

function restoreSpec(
  node: V1Node,
  ledger: Ledger,
  changes: LedgerChanges,
): { spec: Record<string, MergePatchable>; restored: Restored } {
  const spec: Record<string, MergePatchable> = {};
  // An out-of-band uncordon transferred the cordon to whoever made it: never undo someone else's state.
  // Nor a cordon someone wrote after drainbridge's (managedFields name another manager: issue 12 item 4).
  const someoneElse = isCordonedBySomeoneElse(node);
  const uncordoned =
    changes.cordoned && !ledger.outOfBandUncordonAt && node.spec?.unschedulable === true && !someoneElse;
  if (uncordoned) spec.unschedulable = false;
  const ours = (t: V1Taint) => changes.taints.some((c) => c.key === t.key && c.effect === t.effect);
  const present = node.spec?.taints ?? [];
  const taintsRemoved = present.filter(ours).map((t) => t.key);
  if (taintsRemoved.length > 0) spec.taints = present.filter((t) => !ours(t)).map(plainTaint);
  const annotations = node.metadata?.annotations ?? {};
  const annotationsRemoved = Object.entries(changes.annotations)
    .filter(([key, value]) => annotations[key] === value)
    .map(([key]) => key);
  const labels = node.metadata?.labels ?? {};
  const labelsRemoved = Object.entries(changes.labels ?? {})
    .filter(([key, value]) => labels[key] === value)
    .map(([key]) => key);
  const kept = changes.cordoned && someoneElse ? { cordonKeptFor: someoneElse.manager } : {};
  const removedLabels = labelsRemoved.length > 0 ? { labelsRemoved } : {};
  return { spec, restored: { uncordoned, annotationsRemoved, taintsRemoved, ...removedLabels, ...kept } };
}

/**
 * Releases `requestId`'s hold and leaves a tombstone. Releasing the last hold undoes what the ledger
 * recorded, and only where the node still shows drainbridge's value (what others changed since stays).
 * `keepRequest`: the request goes on (a rescheduled notice restores the node and evacuates it again
 * later: lib/workflow/reschedule-restore.ts), so no tombstone is written and a request not holding the
 * node changes nothing.
 */
export function planRelease(
  node: V1Node,
  requestId: string,
  now: Date,
  settings: LedgerSettings & { readonly keepRequest?: boolean } = DEFAULT_LEDGER_SETTINGS,
): ReleaseDecision {
  const keepRequest = settings.keepRequest === true;
  const ledger = readLedger(node);
  const released = pruneReleased(ledger.released, now, settings.tombstoneSeconds);
  if (!Object.hasOwn(ledger.holds, requestId)) {
    if (keepRequest) return { action: 'none', why: 'not-held', last: !isHeld(ledger) };
    if (Object.hasOwn(released, requestId)) return { action: 'none', why: 'already-released', last: !isHeld(ledger) };
    // Ended before it took its hold (e.g. still waiting for a maintenance slot): remember that, so the
    // late admission finds the tombstone and does not cordon a node whose maintenance is over.
    released[requestId] = now.toISOString();
    const next: Ledger = { ...ledger, released };
    return {
      action: 'patch',
      patch: ledgerPatch(node, next),
      last: !isHeld(ledger),
      restored: NOTHING_RESTORED,
      neverHeld: true,
    };
  }
  const holds = Object.fromEntries(Object.entries(ledger.holds).filter(([id]) => id !== requestId));
  if (!keepRequest) released[requestId] = now.toISOString();
  if (Object.keys(holds).length > 0) {
    // Releasing only ever shrinks the holds; tombstones over the budget go, the release never does.
    const next: Ledger = fitLedger({ ...ledger, holds, released }) ?? { ...ledger, holds, released };
    return { action: 'patch', patch: ledgerPatch(node, next), last: false, restored: NOTHING_RESTORED };
  }
  const changes = ledger.changes ?? { priorUnschedulable: false, cordoned: false, annotations: {}, taints: [] };
  const { spec, restored } = restoreSpec(node, ledger, changes);
  const annotations: Record<string, null> = {};
  for (const key of restored.annotationsRemoved) annotations[key] = null;
  const labels: Record<string, null> = {};
  for (const key of restored.labelsRemoved ?? []) labels[key] = null;
  const next = fitLedger({ holds: {}, released }) ?? { holds: {}, released: {} };
  const patch = ledgerPatch(node, next, { annotations, spec, labels });
  return { action: 'patch', patch, last: true, restored };
}

/**
 * Whether someone uncordoned the node while drainbridge holds it cordoned. Reported (event + blocker),
 * never fought: drainbridge does not cordon it again.
 */
export function isUncordonedOutOfBand(node: V1Node): boolean {
  const ledger = readLedger(node);
  const expectCordoned = ledger.changes !== undefined && (ledger.changes.cordoned || ledger.changes.priorUnschedulable);
  return isHeld(ledger) && expectCordoned && node.spec?.unschedulable !== true;
}

/** The patch that records the out-of-band uncordon once (so the event is emitted once); nothing if recorded. */
export function planOutOfBandMark(node: V1Node, now: Date): MergePatch | undefined {
  const ledger = readLedger(node);
  if (!isUncordonedOutOfBand(node) || ledger.outOfBandUncordonAt) return undefined;
  return ledgerPatch(node, { ...ledger, outOfBandUncordonAt: now.toISOString() });
}

/**
 * Whether drainbridge holds the node for the concurrency limit. An unreadable ledger counts as held:
 * whatever it said, the node may be under maintenance, and admitting another node past the limit is
 * the failure to avoid.
 */
export function countsAsHeld(node: V1Node): boolean {
  const read = ledgerOf(node);
  return read.status === 'unreadable' || isHeld(read.ledger);
}

/** How many of these nodes drainbridge holds (for the workflow's concurrency limit). */
export function countHeldNodes(nodes: readonly V1Node[]): number {
  return nodes.filter(countsAsHeld).length;
}
