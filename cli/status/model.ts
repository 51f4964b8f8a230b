/**
 * `drainbridge status` as data: from what was read (snapshot.ts), the nodes in maintenance with their
 * holds, every request drainbridge knows of (held, waiting for a slot or its start, restored) with its
 * phase, progress per branch, blockers and elapsed time, the admission queue, and every record
 * drainbridge cannot read — each with the command that repairs it, never an exception. Pure: the same
 * snapshot gives the same report (what `-o json|yaml` prints, and what the table is drawn from).
 */
import type { V1Node } from '@kubernetes/client-node';
import { type AdmissionQueue, type AdmissionView, readAdmissionView } from '../../lib/admission/index.ts';
import { BRANCH_REGISTRY, branchCalled, statusColumns } from '../../lib/branches/registry.ts';
import type { EvacuationObject } from '../../lib/clients/kube/paths.ts';
import { type Hold, ledgerOf, readPhase } from '../../lib/node/index.ts';
import { abortRequestedBy, blockedBlocker } from '../../lib/progress/index.ts';
import { decodeRecord } from '../../lib/util/json-record.ts';
import { type Driving, drivingOf, type RequestDriver } from '../../lib/workflow/driver.ts';
import { damagedOwner } from '../../lib/workflow/ownership.ts';
import type { Snapshot } from './snapshot.ts';

export interface HoldStatus {
  readonly requestId: string;
  readonly requester: string;
  readonly origin: string;
  /** When the hold was taken (ISO 8601). */
  readonly since: string;
}

export interface NodeStatus {
  readonly name: string;
  readonly cordoned: boolean;
  /** The phase on the node (annotation drainbridge.io/phase). */
  readonly phase?: string;
  /** `unreadable`: its ledger cannot be read; its holds are unknown (see `damaged`). */
  readonly ledger: 'ok' | 'unreadable';
  readonly holds: readonly HoldStatus[];
}

/** pods (pods and infra-pods), kubevirt (KubeVirt VMs), nova (Nova servers). */
export interface BranchStatus {
  readonly branch: string;
  readonly moved: number;
  readonly total: number;
  readonly inFlight: number;
  readonly skipped: number;
  readonly done: boolean;
}

/**
 * held: the node's ledger holds it; queued: waiting for a maintenance slot; scheduled: waiting for its
 * start (notBefore); restoring / restored: its Restore runs / ran; ended: none of these (it failed or was
 * dropped before it held the node).
 */
export type RequestState = 'held' | 'queued' | 'scheduled' | 'restoring' | 'restored' | 'ended';

export interface RequestStatus {
  readonly requestId: string;
  readonly node: string;
  readonly state: RequestState;
  readonly phase?: string;
  readonly requester?: string;
  readonly origin?: string;
  readonly reason?: string;
  /** Since when: the hold was taken, else the request was first seen (record or queue). */
  readonly since?: string;
  /** Seconds from `since` to now (to the Restore's end for a restored request). */
  readonly elapsedSeconds?: number;
  readonly branches: readonly BranchStatus[];
  readonly blockers: readonly string[];
  /** What it waits for that becomes a blocker only if it gives up (External KubeVirt VMIs). */
  readonly waiting: readonly string[];
  readonly lastError?: string;
  readonly abortRequestedBy?: string;
  /** A request waiting for its start: when the evacuation starts. */
  readonly startsAt?: string;
  /**
   * A cloud notice's request the node agent ended because the notice's source stayed unreadable: since its
   * first unreadable read, and why (lib/workflow/unreadable-end.ts).
   */
  readonly sourceUnreadableEnd?: { readonly since: string; readonly message: string };
  /**
   * A cloud notice's request whose start moved (rescheduled): the start it had, the one it has, and what
   * drainbridge did (lib/progress/reschedule.ts) — the last move the record keeps.
   */
  readonly rescheduled?: {
    readonly from?: string;
    readonly to?: string;
    readonly at: string;
    readonly message: string;
  };
  readonly restoredAt?: string;
  /** When its record is deleted (DRAINBRIDGE_RECORD_TTL_HOURS after the Restore). */
  readonly expiresAt?: string;
  /** The execution that drives its evacuation (or drove it last), from its owner mark. */
  readonly driver?: RequestDriver;
  /**
   * For an evacuation under way: `driven` (a live execution renews its mark) or `abandoned` (none does:
   * stopped by Ctrl-C or killed; `resume` says how to go on). Absent when nothing needs to drive it.
   */
  readonly driving?: 'driven' | 'abandoned';
  /** The command that resumes an abandoned request. */
  readonly resume?: string;
  /**
   * A held request whose node someone uncordoned: its pod drain is paused (no eviction while the node is
   * schedulable) until the node is cordoned again or the maintenance ends; the sentence says so.
   */
  readonly paused?: string;
}

export interface QueueEntry {
  readonly position: number;
  readonly requestId: string;
  readonly node: string;
  readonly since: string;
  readonly waitingSeconds: number;
  /** The limit it waits on, as its last decision on the nodes said (a full zone, a pool at its minimum). */
  readonly why?: string;
  /** When `why` was decided (absent: written by a drainbridge that did not keep it). */
  readonly whyAt?: string;
  /**
   * The request has refreshed its place since `whyAt` without deciding on the nodes again — it waits far
   * enough back in line to be told so from the Lease alone — so `why` may no longer hold.
   */
  readonly whyStale?: boolean;
}

export interface Damage {
  /** Which record, where. */
  readonly record: string;
  readonly node?: string;
  readonly problem: string;
  /** The command that rewrites it. */
  readonly fix: string;
}

export interface StatusReport {
  /** When the cluster was read (ISO 8601). */
  readonly time: string;
  /** The node asked about, if any. */
  readonly node?: string;
  /** Nodes in maintenance: held by drainbridge, or with a ledger it cannot read (or the node asked about). */
  readonly nodes: readonly NodeStatus[];
  readonly requests: readonly RequestStatus[];
  /** Admission paused by the circuit breaker (`drainbridge resume` re-opens it): since when, and why. */
  readonly admissionPaused?: { readonly since: string; readonly reason: string };
  /** The admission queue, oldest first. */
  readonly queue: readonly QueueEntry[];
  readonly damaged: readonly Damage[];
}

const seconds = (from: string | undefined, to: number): number | undefined => {
  const start = Date.parse(from ?? '');
  return Number.isFinite(start) ? Math.max(0, Math.round((to - start) / 1000)) : undefined;
};

function creationOf(record: EvacuationObject): string | undefined {
  return (record.metadata as { creationTimestamp?: string }).creationTimestamp;
}

function nodeStatus(node: V1Node, asked: boolean): NodeStatus | undefined {
  const read = ledgerOf(node);
  const holds = read.status === 'ok' ? Object.entries(read.ledger.holds) : [];
  if (!asked && read.status === 'ok' && holds.length === 0) return undefined;
  const phase = readPhase(node);
  return {
    name: node.metadata?.name ?? '',
    cordoned: node.spec?.unschedulable === true,
    ...(phase ? { phase } : {}),
    ledger: read.status === 'ok' ? 'ok' : 'unreadable',
    holds: holds.map(([requestId, hold]: [string, Hold]) => ({
      requestId,
      requester: hold.requester,
      origin: String(hold.origin),
      since: hold.since,
    })),
  };
}

/** The record's branches, grouped by their status column (the registry's: the two pod branches as one, `pods`), in column order. */
function branchesOf(record: EvacuationObject | undefined): BranchStatus[] {
  const entries = Object.entries(record?.status?.branches ?? {});
  const groups = new Map<string, BranchStatus>();
  for (const [name, entry] of entries) {
    const branch = branchCalled(name)?.moves.column.key ?? name;
    const known = groups.get(branch);
    const done = entry.finishedAt !== undefined;
    groups.set(branch, {
      branch,
      moved: (known?.moved ?? 0) + (entry.moved ?? 0),
      total: (known?.total ?? 0) + (entry.total ?? 0),
      inFlight: (known?.inFlight ?? 0) + (entry.inFlight ?? 0),
      skipped: (known?.skipped ?? 0) + (entry.skipped ?? 0),
      done: known ? known.done && done : done,
    });
  }
  const order = statusColumns().map((column) => column.key);
  return [...groups.values()].sort((a, b) => order.indexOf(a.branch) - order.indexOf(b.branch));
}

function stateOf(
  record: EvacuationObject | undefined,
  held: boolean,
  queued: boolean,
): { state: RequestState; restoredAt?: string } {
  const restore = record?.status?.restore;
  if (restore?.finishedAt) return { state: 'restored', restoredAt: restore.finishedAt };
  if (restore?.startedAt) return { state: 'restoring' };
  if (held) return { state: 'held' };
  if (queued) return { state: 'queued' };
  if (record?.status?.phase === 'MaintenanceScheduled') return { state: 'scheduled' };
  return { state: 'ended' };
}

interface RequestFacts {
  readonly requestId: string;
  readonly node: string;
  readonly record?: EvacuationObject;
  readonly hold?: HoldStatus;
  readonly queued?: { since: string };
  /** Whether the node it names is cordoned (known for the nodes status read). */
  readonly nodeCordoned?: boolean;
}

/** What stops or stopped the request: blockers (and a record it cannot read), waits, its failure, an abort. */
function problemsOf(record: EvacuationObject | undefined) {
  const status = record?.status;
  const branches = Object.values(status?.branches ?? {});
  const blocked = blockedBlocker(status);
  const abortedBy = abortRequestedBy(status);
  return {
    blockers: [...(blocked ? [blocked] : []), ...branches.flatMap((entry) => entry.blockers ?? [])],
    waiting: branches.flatMap((entry) => entry.waiting ?? []),
    ...(status?.lastError ? { lastError: status.lastError } : {}),
    ...(abortedBy !== undefined ? { abortRequestedBy: abortedBy } : {}),
  };
}

/** Who asked, where from and why: the record's words, else the hold's. */
function whoOf(record: EvacuationObject | undefined, hold: HoldStatus | undefined) {
  const requester = record?.spec.requester ?? hold?.requester;
  const origin = record?.spec.origin ?? hold?.origin;
  return {
    ...(requester ? { requester } : {}),
    ...(origin ? { origin } : {}),
    ...(record?.spec.reason ? { reason: record.spec.reason } : {}),
  };
}

/**
 * When drainbridge first worked on the request, by its own clock: its branches' first passes (the record's
 * creationTimestamp is the API server's clock, and a restored request has no hold left to date it).
 */
function firstPassOf(record: EvacuationObject | undefined): string | undefined {
  const starts = Object.values(record?.status?.branches ?? {}).flatMap((entry) => entry.startedAt ?? []);
  return starts.sort()[0];
}

/** Since when, for how long (to the Restore's end once restored), and when its record expires. */
function timesOf(facts: RequestFacts, restoredAt: string | undefined, now: number, ttlHours: number) {
  const { hold, queued, record } = facts;
  const since = hold?.since ?? queued?.since ?? firstPassOf(record) ?? (record ? creationOf(record) : undefined);
  const elapsed = seconds(since, restoredAt ? Date.parse(restoredAt) : now);
  const expiresAt = restoredAt ? new Date(Date.parse(restoredAt) + ttlHours * 3_600_000).toISOString() : undefined;
  return {
    ...(since ? { since } : {}),
    ...(elapsed !== undefined ? { elapsedSeconds: elapsed } : {}),
    ...(restoredAt ? { restoredAt } : {}),
    ...(expiresAt ? { expiresAt } : {}),
  };
}

/** Who drives the request (lib/workflow/driver.ts); an owner mark that cannot be read is reported as damage instead. */
function drivingFacts(facts: RequestFacts, now: number) {
  if (!facts.record) return {};
  let driving: Driving;
  try {
    driving = drivingOf(facts.record, facts.hold !== undefined, new Date(now));
  } catch {
    return {};
  }
  return {
    ...(driving.driver ? { driver: driving.driver } : {}),
    ...(driving.state !== 'idle' ? { driving: driving.state } : {}),
    ...(driving.state === 'abandoned' ? { resume: driving.resume } : {}),
  };
}

/** The last move of the notice's start, as the record keeps it. */
function rescheduledOf(record: EvacuationObject | undefined): Pick<RequestStatus, 'rescheduled'> {
  const last = record?.status?.reschedules?.at(-1);
  if (!last) return {};
  const { from, to, at, message } = last;
  return { rescheduled: { ...(from ? { from } : {}), ...(to ? { to } : {}), at, message } };
}

function requestStatus(facts: RequestFacts, now: number, ttlHours: number): RequestStatus {
  const { record, hold, queued } = facts;
  const { state, restoredAt } = stateOf(record, hold !== undefined, queued !== undefined);
  const start = state === 'scheduled' ? record?.status?.start?.startAt : undefined;
  return {
    requestId: facts.requestId,
    node: facts.node,
    state,
    ...(record?.status?.phase ? { phase: record.status.phase } : {}),
    ...whoOf(record, hold),
    ...timesOf(facts, restoredAt, now, ttlHours),
    branches: branchesOf(record),
    ...problemsOf(record),
    ...(start ? { startsAt: start } : {}),
    ...rescheduledOf(record),
    ...(record?.status?.sourceUnreadable
      ? {
          sourceUnreadableEnd: {
            since: record.status.sourceUnreadable.since,
            message: record.status.sourceUnreadable.message,
          },
        }
      : {}),
    ...drivingFacts(facts, now),
    ...(state === 'held' && facts.nodeCordoned === false ? { paused: pausedSentence(facts.node) } : {}),
  };
}

/** What a held request on an uncordoned node waits for (lib/branches/pods/eviction-pass.ts pauses its drain). */
export function pausedSentence(node: string): string {
  return `uncordoned by someone else; no pod is evicted while node ${node} is schedulable — re-cordon it to continue (kubectl cordon ${node}), or end the maintenance (drainbridge restore ${node})`;
}

const repair = (node: string | undefined) => (node ? `drainbridge repair ${node}` : 'drainbridge repair NODE');

/** The queue as written, or why it cannot be read. */
function queueOf(snapshot: Snapshot): { queue: AdmissionQueue; damage: Damage[]; paused: AdmissionView['paused'] } {
  const view = readAdmissionView(snapshot.lease);
  // Any node's repair rewrites the Lease's records; name the node asked about, or one in maintenance.
  const node = snapshot.node ?? snapshot.nodes[0]?.metadata?.name;
  const damage = view.damaged.map((damaged) => ({ ...damaged, fix: repair(node) }));
  return { queue: view.queue, damage, paused: view.paused };
}

/** The record's owner claim and branch states that cannot be read (what `drainbridge repair` resets). */
function recordDamage(record: EvacuationObject): Damage[] {
  const node = record.spec.nodeName || undefined;
  const where = `of Evacuation ${record.metadata.name}`;
  const found: Damage[] = [];
  const owner = damagedOwner(record);
  if (owner) {
    found.push({
      record: owner.what,
      ...(node ? { node } : {}),
      problem: owner.reason,
      fix: repair(node),
    });
  }
  for (const definition of BRANCH_REGISTRY) {
    const state = record.status?.branches?.[definition.name]?.state;
    if (state === undefined || state === null) continue;
    const read = decodeRecord(state, definition.stateFormat);
    if (read.status !== 'unreadable') continue;
    found.push({
      record: `${definition.name} branch state ${where}`,
      ...(node ? { node } : {}),
      problem: read.reason,
      fix: repair(node),
    });
  }
  return found;
}

/** Every request drainbridge knows of, keyed by id: from the ledgers' holds, the records and the queue. */
function requestFacts(snapshot: Snapshot, nodes: readonly NodeStatus[], queue: AdmissionQueue): RequestFacts[] {
  const facts = new Map<string, RequestFacts>();
  const merge = (requestId: string, node: string, more: Partial<RequestFacts>) => {
    const known = facts.get(requestId);
    facts.set(requestId, { ...known, requestId, node: known?.node || node, ...more });
  };
  for (const record of snapshot.records) merge(record.spec.requestId, record.spec.nodeName, { record });
  for (const node of nodes) {
    for (const hold of node.holds) merge(hold.requestId, node.name, { hold, nodeCordoned: node.cordoned });
  }
  for (const [requestId, entry] of Object.entries(queue)) {
    if (!snapshot.node || entry.node === snapshot.node)
      merge(requestId, entry.node, { queued: { since: entry.since } });
  }
  return [...facts.values()];
}

const stateOrder: Readonly<Record<RequestState, number>> = {
  held: 0,
  restoring: 1,
  queued: 2,
  scheduled: 3,
  ended: 4,
  restored: 5,
};

/** A place's reason, when it was decided, and whether the request has waited without asking again since. */
function whyOf(entry: AdmissionQueue[string]): Pick<QueueEntry, 'why' | 'whyAt' | 'whyStale'> {
  if (!entry.why) return {};
  if (!entry.whyAt) return { why: entry.why };
  return { why: entry.why, whyAt: entry.whyAt, whyStale: Date.parse(entry.seen) > Date.parse(entry.whyAt) };
}

/** The report of what `snapshot` shows. Pure. */
export function statusReport(snapshot: Snapshot): StatusReport {
  const now = snapshot.at.getTime();
  const nodes = snapshot.nodes.flatMap((node) => nodeStatus(node, snapshot.node !== undefined) ?? []);
  const { queue, damage: leaseDamage, paused } = queueOf(snapshot);
  const requests = requestFacts(snapshot, nodes, queue)
    .map((facts) => requestStatus(facts, now, snapshot.recordTtlHours))
    .sort(
      (a, b) =>
        stateOrder[a.state] - stateOrder[b.state] ||
        a.node.localeCompare(b.node) ||
        (a.since ?? '').localeCompare(b.since ?? ''),
    );
  const ordered = Object.entries(queue).sort(([, a], [, b]) => Date.parse(a.since) - Date.parse(b.since));
  const queueEntries = ordered
    .map(([requestId, entry], index) => ({
      position: index + 1,
      requestId,
      node: entry.node,
      since: entry.since,
      waitingSeconds: seconds(entry.since, now) ?? 0,
      ...whyOf(entry),
    }))
    .filter((entry) => !snapshot.node || entry.node === snapshot.node);
  const ledgerDamage = snapshot.nodes.flatMap((node): Damage[] => {
    const read = ledgerOf(node);
    const name = node.metadata?.name ?? '';
    if (read.status !== 'unreadable') return [];
    return [{ record: `ledger of node ${name}`, node: name, problem: read.reason, fix: repair(name) }];
  });
  return {
    time: snapshot.at.toISOString(),
    ...(snapshot.node ? { node: snapshot.node } : {}),
    nodes,
    requests,
    ...(paused ? { admissionPaused: paused } : {}),
    queue: queueEntries,
    damaged: [...ledgerDamage, ...leaseDamage, ...snapshot.records.flatMap(recordDamage)],
  };
}

/** The report without what changes with the clock alone: `--watch` redraws when this changes. */
export function withoutClock(report: StatusReport): unknown {
  return {
    ...report,
    time: undefined,
    requests: report.requests.map(({ elapsedSeconds: _e, driver, ...request }) => ({
      ...request,
      // A live driver renews `seen` every half minute: that alone is no change worth a new screen.
      ...(driver ? { driver: { ...driver, idleSeconds: undefined, seen: undefined } } : {}),
    })),
    queue: report.queue.map(({ waitingSeconds: _w, ...entry }) => entry),
  };
}
