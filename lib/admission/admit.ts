/**
 * Admission with effects: one short Lease mutex around "count held nodes → decide → take the hold", so
 * two requests can never both take the last slot. The Lease also carries the waiting queue, so the
 * oldest waiting request is admitted first. A re-run of an admitted request finds its own hold on the
 * node and is admitted again without taking a slot (a crashed execution never leaks one).
 */
import type { V1Lease, V1Node } from '@kubernetes/client-node';
import { z } from 'zod';
import type { ResolvedRequest } from '../domain/request.ts';
import { ConflictError, RecordUnreadable, SkipEvent, SlotUnavailable, WaitingInLine } from '../errors/index.ts';
import type { KubeClient } from '../kube/client.ts';
import { isConflict, retryOnConflict } from '../kube/conflict.ts';
import { isNotFound } from '../kube/errors.ts';
import { createLease, readLease, updateLease } from '../kube/lease.ts';
import type { Labels } from '../kube/selectors.ts';
import { acquireHold, listNodesMaybeHeld, readNodeOrFail } from '../node/hold.ts';
import {
  countsAsHeld,
  HELD_LABEL,
  type HoldRequest,
  type LedgerSettings,
  ledgerOf,
  readLedger,
} from '../node/ledger.ts';
import { type RecordFormat, readJsonRecord, writeJsonRecord } from '../util/json-record.ts';
import {
  type AdmissionQueue,
  describeHolders,
  planAdmission,
  type QueueEntry,
  requestsAhead,
  type SlotHolder,
  type SlotLimit,
} from './decision.ts';
import {
  INTENTS_ANNOTATION,
  type Intents,
  nodesInFlight,
  nodesInFlightFor,
  readIntents,
  settledIntents,
  withIntent,
  writeIntents,
} from './intents.ts';

export const ADMISSION_LEASE = 'drainbridge-admission';
export const QUEUE_ANNOTATION = 'drainbridge.io/admission-queue';
/** The mutex is held for one admission (a few API calls); a crashed holder loses it after this. */
const MUTEX_SECONDS = 15;
/** A waiting request refreshes its entry at every retry (≤ 30 s apart); gone for this long, it is dropped. */
const QUEUE_TTL_SECONDS = 180;

export interface AdmissionSettings {
  readonly namespace: string;
  readonly maxHeldNodes: number;
  readonly slotLimits?: readonly SlotLimit[];
  readonly ledger?: LedgerSettings;
}

export interface Admitted {
  readonly why: string;
  /** This call took the hold (false: the request already held the node — a re-run or a duplicate). */
  readonly acquired: boolean;
}

/**
 * The nodes admission has seen held, kept on the Lease beside the queue: a node stays counted even when
 * nothing else would find it — its `drainbridge.io/held` label removed and the node uncordoned by a person
 * while drainbridge still holds it. Written by the locked decision (the held nodes it found, and the node
 * it admits), pruned there as it finds them released; it only adds nodes to read, never counts one
 * without its ledger saying so.
 */
export const ADMITTED_ANNOTATION = 'drainbridge.io/admitted-nodes';
const ADMITTED_FORMAT: RecordFormat<string[]> = {
  what: `admitted nodes (Lease annotation ${ADMITTED_ANNOTATION})`,
  versions: [z.array(z.string().min(1))],
};

/** The admitted nodes on the Lease; `unreadable` when the annotation is damaged (then every node is read). */
function readAdmitted(lease: V1Lease | undefined): string[] | 'unreadable' {
  const read = readJsonRecord(lease?.metadata?.annotations?.[ADMITTED_ANNOTATION], ADMITTED_FORMAT);
  if (read.status === 'ok') return read.value;
  return read.status === 'absent' ? [] : 'unreadable';
}

/** The waiting queue, requestId → entry, as admission writes it. */
export const ADMISSION_QUEUE_FORMAT: RecordFormat<AdmissionQueue> = {
  what: `admission queue (Lease annotation ${QUEUE_ANNOTATION})`,
  versions: [
    z.record(
      z.string(),
      z.looseObject({
        node: z.string().min(1),
        since: z.iso.datetime({ offset: true }),
        seen: z.iso.datetime({ offset: true }),
      }),
    ),
  ],
};

/**
 * The waiting queue. Unreadable, it stops admission (RecordUnreadable: the request fails, naming the
 * record) instead of being read as empty: it is the order requests are promised, and a silent reset
 * would let a newcomer jump the line. `drainbridge repair` resets it; waiting requests re-enter at their
 * next retry.
 */
export function readQueue(lease: V1Lease | undefined, nodeName?: string): AdmissionQueue {
  const read = readJsonRecord(lease?.metadata?.annotations?.[QUEUE_ANNOTATION], ADMISSION_QUEUE_FORMAT);
  if (read.status === 'ok') return read.value;
  if (read.status === 'absent') return {};
  throw new RecordUnreadable({
    what: ADMISSION_QUEUE_FORMAT.what,
    reason: read.reason,
    ...(nodeName ? { nodeName } : {}),
  });
}

function isMutexFree(lease: V1Lease | undefined, now: Date): boolean {
  const spec = lease?.spec;
  if (!spec?.holderIdentity) return true;
  const renewed = spec.renewTime ? new Date(spec.renewTime).getTime() : 0;
  return now.getTime() - renewed > (spec.leaseDurationSeconds ?? MUTEX_SECONDS) * 1000;
}

function withHolder(
  lease: V1Lease | undefined,
  holder: string | undefined,
  now: Date,
  records: { queue?: AdmissionQueue; intents?: Intents; admittedNodes?: readonly string[] } = {},
): V1Lease {
  const annotations = { ...lease?.metadata?.annotations };
  if (records.queue) annotations[QUEUE_ANNOTATION] = writeJsonRecord(records.queue, ADMISSION_QUEUE_FORMAT);
  if (records.admittedNodes) {
    annotations[ADMITTED_ANNOTATION] = writeJsonRecord([...records.admittedNodes].sort(), ADMITTED_FORMAT);
  }
  if (records.intents) annotations[INTENTS_ANNOTATION] = writeIntents(records.intents);
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { ...lease?.metadata, name: ADMISSION_LEASE, annotations },
    spec: holder
      ? { holderIdentity: holder, leaseDurationSeconds: MUTEX_SECONDS, acquireTime: now, renewTime: now }
      : { leaseDurationSeconds: MUTEX_SECONDS },
  };
}

/**
 * Takes the mutex, writing this request's intent beside the unexpired intents of earlier holders
 * (admission-intents.ts); SlotUnavailable when another request holds it (the workflow retries shortly).
 */
async function lockAdmission(
  client: KubeClient,
  request: ResolvedRequest,
  at: { readonly namespace: string; readonly now: Date; readonly busy: (message: string) => SlotUnavailable },
): Promise<V1Lease> {
  const { namespace, now, busy } = at;
  const lease = await readLease(client, namespace, ADMISSION_LEASE);
  if (!isMutexFree(lease, now)) {
    throw busy(`admission is busy (held by ${lease?.spec?.holderIdentity}); retrying`);
  }
  const intents = withIntent(
    readIntents(lease?.metadata?.annotations, request.nodeName),
    request.requestId,
    { node: request.nodeName, requester: request.requester },
    now,
  );
  const locked = withHolder(lease, request.requestId, now, { intents });
  try {
    return lease ? await updateLease(client, namespace, locked) : await createLease(client, namespace, locked);
  } catch (error) {
    if (error instanceof ConflictError) throw busy('admission is busy (another request took the lock); retrying');
    throw error;
  }
}

interface ObservedNodes {
  /** Nodes drainbridge holds (from their ledgers; an unreadable ledger counts as held). */
  readonly held: string[];
  readonly labels: Map<string, Labels>;
  /** Who holds each node, from its readable ledger. */
  readonly holders: Map<string, SlotHolder[]>;
  /** The requestIds each node's ledger holds. */
  holds(node: string): readonly string[];
  /** Nodes held by a request of `requester` (a maintenance window's). */
  heldBy(requester: string): string[];
}

/**
 * What the locked decision reads beyond the lists, all of it under the mutex: the nodes the Lease
 * remembers admitting, those other admitters are taking a hold on now (their labels count against the
 * label-selector limits) and the requested node itself.
 */
interface ThoroughRead {
  readonly admitted: string[] | 'unreadable';
  readonly alsoRead: readonly string[];
}

/**
 * The held nodes' labels and the requested node's, the names of those drainbridge holds and who holds them
 * (from their ledgers) — never a list of every node of the cluster. `thorough` (the locked decision):
 * every node that may be held (thoroughCandidates), and the requested node, all read under the mutex:
 * nothing read before it (the caller's `requested`, maybe seconds old) is decided on. Otherwise only the
 * labelled ones and the caller's `requested`: enough for telling a waiting request that it still waits,
 * since counting fewer held nodes can only send it on to the locked decision, never admit it.
 */
async function observeNodes(
  client: KubeClient,
  requested: V1Node,
  thorough: ThoroughRead | undefined,
): Promise<ObservedNodes> {
  const candidates = thorough ? await thoroughCandidates(client, thorough) : await client.listNodes(HELD_LABEL);
  // The requested node for its labels (slot limits): the thorough read has it (unless it was deleted since:
  // then its hold write fails on its own).
  const listed = candidates.some((node) => node.metadata?.name === requested.metadata?.name);
  const nodes = listed ? candidates : [...candidates, requested];
  const labels = new Map(nodes.map((node) => [node.metadata?.name ?? '', node.metadata?.labels ?? {}]));
  // A node whose ledger cannot be read counts as held: it may be under maintenance.
  const held = nodes.filter(countsAsHeld).map((node) => node.metadata?.name ?? '');
  const holders = new Map<string, SlotHolder[]>();
  for (const node of nodes) {
    const read = ledgerOf(node);
    const holds = read.status === 'ok' ? Object.entries(read.ledger.holds) : [];
    if (holds.length === 0) continue;
    holders.set(
      node.metadata?.name ?? '',
      holds.map(([requestId, hold]) => ({ requestId, requester: hold.requester, since: hold.since })),
    );
  }
  const heldBy = (requester: string) =>
    [...holders].filter(([, holds]) => holds.some((hold) => hold.requester === requester)).map(([name]) => name);
  const holds = (name: string) => (holders.get(name) ?? []).map((holder) => holder.requestId);
  return { held, labels, holders, holds, heldBy };
}

/**
 * Every node that may be held, for the locked decision: the labelled and cordoned ones
 * (listNodesMaybeHeld), and those the Lease remembers admitting or `alsoRead` names, read one by one
 * (normally only the requested node beyond the lists). A damaged memory is no reason to count fewer:
 * then every node of the cluster is read.
 */
async function thoroughCandidates(client: KubeClient, read: ThoroughRead): Promise<V1Node[]> {
  if (read.admitted === 'unreadable') return client.listNodes();
  const listed = await listNodesMaybeHeld(client);
  const known = new Set(listed.map((node) => node.metadata?.name ?? ''));
  const extra: V1Node[] = [];
  for (const name of new Set([...read.admitted, ...read.alsoRead].filter((name) => !known.has(name)))) {
    try {
      extra.push(await client.getNode(name));
    } catch (error) {
      if (!isNotFound(error)) throw error; // a node deleted since holds nothing
    }
  }
  return [...listed, ...extra];
}

/**
 * Releases the mutex, leaving the queue and the intents still in flight. A conflict means the mutex was
 * lost while this request held it (its step stalled past the expiry): whoever took it carried this
 * request's intent forward and counted its node, so a hold taken here stands; a request that was not
 * admitted simply waits again.
 */
async function unlockAdmission(
  client: KubeClient,
  namespace: string,
  lease: V1Lease,
  next: { queue: AdmissionQueue; intents: Intents; admitted: boolean; admittedNodes: readonly string[]; now: Date },
): Promise<void> {
  try {
    await updateLease(client, namespace, withHolder(lease, undefined, next.now, next));
  } catch (error) {
    if (!(error instanceof ConflictError)) throw error;
    if (!next.admitted) throw new SlotUnavailable('admission lost its lock while it decided; retrying');
  }
}

/** What admission decides for `request` on what it read (pure: planAdmission over the observed nodes and queue). */
function decide(
  request: ResolvedRequest,
  settings: AdmissionSettings,
  read: { nodes: ObservedNodes; lease: V1Lease | undefined; intents: Intents; now: Date },
) {
  const { nodes, lease, intents, now } = read;
  const window = request.window;
  return planAdmission({
    requestId: request.requestId,
    node: request.nodeName,
    now,
    // Holds other admitters may be writing right now count too (a stalled write lands later).
    heldNodes: [...nodes.held, ...nodesInFlight(intents, request.requestId, now)],
    maxHeldNodes: settings.maxHeldNodes,
    slotLimits: settings.slotLimits ?? [],
    labelsOf: (name) => nodes.labels.get(name) ?? {},
    queue: readQueue(lease, request.nodeName),
    queueTtlSeconds: QUEUE_TTL_SECONDS,
    // The window's own slots count its admissions in flight too (a stalled hold write of another of its nodes).
    ...(window
      ? {
          windowLimit: {
            window: window.name,
            max: window.maxNodes,
            heldNodes: [
              ...nodes.heldBy(request.requester),
              ...nodesInFlightFor(intents, request.requestId, now, request.requester),
            ],
          },
        }
      : {}),
    holdersOf: (name) => nodes.holders.get(name) ?? [],
  });
}

/** A request that keeps finding no free slot writes its place in the queue again after this long (≪ QUEUE_TTL_SECONDS). */
const QUEUE_REFRESH_SECONDS = 60;

/**
 * A request for which no slot is free yet: why it waits — decided on an unlocked read (the labelled held
 * nodes, the Lease as read), so that waiting requests never take the mutex: it is held only to admit.
 * Waiting needs no lock: a new place in the queue, a refresh of an old one or a place dropped (a window
 * whose own slots are full) is written with one conditional write of the Lease as read, and only while
 * nobody holds the mutex — so it never meets a holder's unlock; a write that loses a race is simply
 * tried again at the next attempt. Undefined when it may be admitted, or no Lease exists yet: then the
 * locked path decides on every node that may be held, and takes the hold. A stale read can only make a
 * request wait one retry longer, never admit it.
 */
async function waitWithoutLock(
  client: KubeClient,
  request: ResolvedRequest,
  settings: AdmissionSettings,
  read: { node: V1Node; now: Date; lease: V1Lease | undefined },
): Promise<SlotUnavailable | undefined> {
  const { node, now, lease } = read;
  if (!lease) return undefined;
  const place = readQueue(lease, request.nodeName)[request.requestId];
  const intents = readIntents(lease.metadata?.annotations, request.nodeName);
  const decision = decide(request, settings, {
    nodes: await observeNodes(client, node, undefined),
    lease,
    intents,
    now,
  });
  if (decision.admit) return undefined;
  const error = waitError(`node ${request.nodeName}: ${decision.why}`, decision, {
    requestId: request.requestId,
    maxHeldNodes: settings.maxHeldNodes,
    now,
  });
  const mine = decision.queue[request.requestId];
  const due = place === undefined || now.getTime() - Date.parse(place.seen) > QUEUE_REFRESH_SECONDS * 1000;
  if (mine ? due : place !== undefined) {
    await writePlace(client, { namespace: settings.namespace, lease, now }, request.requestId, mine);
  }
  return error;
}

/**
 * The error a waiting request throws, which picks its retry schedule (workflow/evacuate.asl.yml, Admit):
 * SlotUnavailable (every 0–3 s) when fewer than twice as many requests wait ahead of it for the
 * cluster-wide slots as there are slots — the next round of releases admits it, or brings it to the
 * front; WaitingInLine (every 0–10 s) when it waits further back, on a label-selector limit or a
 * window, or has no place yet.
 */
function waitError(
  message: string,
  decision: { readonly queue: AdmissionQueue; readonly limited?: boolean },
  at: { readonly requestId: string; readonly maxHeldNodes: number; readonly now: Date },
): SlotUnavailable {
  const ahead = requestsAhead(decision.queue, at.requestId, { now: at.now, ttlSeconds: QUEUE_TTL_SECONDS });
  const next = !decision.limited && ahead !== undefined && ahead < 2 * at.maxHeldNodes;
  return next ? new SlotUnavailable(message) : new WaitingInLine(message);
}

/**
 * A place older than this is not waited on from the Lease alone (its refreshes there kept failing): the
 * request decides on the nodes again (waitWithoutLock), which writes its place anew.
 */
const LEASE_ONLY_WAIT_SECONDS = 120;

/**
 * Why a request waits, decided from the admission Lease alone — one read, where deciding on the nodes
 * costs four and the record one more. With a hundred requests for ten slots most attempts end here:
 * - a request with a fresh place in line, when at least twice as many older requests wait ahead of it as
 *   there are slots, or fewer slots are free than requests ahead of it — counting as held the nodes the
 *   Lease records admitting (pruned by every locked decision and by each release, so they can only
 *   over-count) and those being admitted now; its place is refreshed here too (an unlocked write);
 * - any request that would have to decide while another holds the mutex (it could only be told "busy").
 * Never admits: undefined sends the request on to the usual path, which decides on the nodes. The error
 * picks the retry schedule (waitError).
 */
export async function waitFromLease(
  client: KubeClient,
  request: ResolvedRequest,
  settings: AdmissionSettings,
  read: { readonly lease: V1Lease | undefined; readonly now: Date },
): Promise<SlotUnavailable | undefined> {
  const { lease, now } = read;
  const queue = readQueue(lease, request.nodeName);
  const place = queue[request.requestId];
  const max = settings.maxHeldNodes;
  const at = { requestId: request.requestId, maxHeldNodes: max, now };
  const busy = isMutexFree(lease, now)
    ? undefined
    : waitError(
        `node ${request.nodeName}: admission is busy (held by ${lease?.spec?.holderIdentity}); retrying`,
        { queue },
        at,
      );
  const age = place ? now.getTime() - Date.parse(place.seen) : Number.POSITIVE_INFINITY;
  if (!lease || !place || age > LEASE_ONLY_WAIT_SECONDS * 1000) return busy;
  const ahead = requestsAhead(queue, request.requestId, { now, ttlSeconds: QUEUE_TTL_SECONDS }) ?? 0;
  const why =
    ahead >= 2 * max
      ? `waiting in line since ${place.since} behind ${ahead} older request(s) for ${max} maintenance slot(s) (\`drainbridge status\` shows who holds them)`
      : noSlotYet(lease, request, { ahead, max, now });
  if (why === undefined) return busy;
  if (age > QUEUE_REFRESH_SECONDS * 1000) {
    const refreshed = { ...place, seen: now.toISOString() };
    if (!(await writePlace(client, { namespace: settings.namespace, lease, now }, request.requestId, refreshed))) {
      return busy;
    }
  }
  return waitError(`node ${request.nodeName}: ${why}`, { queue }, at);
}

/**
 * Why no slot can be this request's yet, counting from the Lease (the nodes it records admitting and those
 * being admitted now); undefined when one may be, or the Lease cannot tell.
 */
function noSlotYet(
  lease: V1Lease | undefined,
  request: ResolvedRequest,
  at: { readonly ahead: number; readonly max: number; readonly now: Date },
): string | undefined {
  const admitted = readAdmitted(lease);
  if (admitted === 'unreadable') return undefined;
  const intents = readIntents(lease?.metadata?.annotations, request.nodeName);
  const held = new Set([...admitted, ...nodesInFlight(intents, request.requestId, at.now)]);
  // Its node held already (a second request for it) is admitted at once by the usual path.
  if (held.has(request.nodeName)) return undefined;
  const free = at.max - held.size;
  if (at.ahead < free) return undefined;
  return free > 0
    ? `waiting behind ${at.ahead} older request(s) for ${free} free slot(s)`
    : `all ${at.max} maintenance slot(s) are in use (${describeHolders([...held])}); ${at.ahead} request(s) ahead`;
}

/** The annotations an edit of the Lease sets, from the Lease as read; undefined: nothing to change. */
type LeaseEdit = (lease: V1Lease) => Record<string, string> | undefined;

/**
 * Edits the Lease's records without the mutex (a place in line written or dropped, a released node taken
 * off the admitted ones): only while nobody holds the mutex — a holder's unlock must not meet a changed
 * Lease — and conditional on the Lease as read. A conflict (another waiter wrote first, as a hundred
 * requests entering the line at once do) reads the Lease again and edits that, a few times within
 * milliseconds (retryOnConflict), so that the line forms within one attempt each instead of one Step
 * Functions retry per conflict. `first`: the Lease as the caller just read it, for the first try.
 * Returns whether it wrote.
 */
async function editWithoutMutex(
  client: KubeClient,
  at: { readonly namespace: string; readonly now: Date; readonly first?: V1Lease | undefined },
  edit: LeaseEdit,
): Promise<boolean> {
  let first = at.first;
  const attempt = async (): Promise<boolean> => {
    const lease = first ?? (await readLease(client, at.namespace, ADMISSION_LEASE));
    first = undefined;
    if (!lease || !isMutexFree(lease, at.now)) return false;
    const changed = edit(lease);
    if (changed === undefined) return false;
    const annotations = { ...lease.metadata?.annotations, ...changed };
    await updateLease(client, at.namespace, { ...lease, metadata: { ...lease.metadata, annotations } });
    return true;
  };
  try {
    return await retryOnConflict(attempt);
  } catch (error) {
    if (isConflict(error)) return false; // still contended: the next attempt writes it
    throw error;
  }
}

/**
 * Writes `requestId`'s place in line (`place`), or drops it (undefined), without the mutex
 * (editWithoutMutex); the other places stay as whoever wrote last left them. Returns whether it wrote.
 */
function writePlace(
  client: KubeClient,
  at: { readonly namespace: string; readonly now: Date; readonly lease?: V1Lease | undefined },
  requestId: string,
  place: QueueEntry | undefined,
): Promise<boolean> {
  return editWithoutMutex(client, { namespace: at.namespace, now: at.now, first: at.lease }, (lease) => {
    const { [requestId]: current, ...others } = readQueue(lease);
    if (place === undefined && current === undefined) return undefined;
    const queue = place === undefined ? others : { ...others, [requestId]: place };
    return { [QUEUE_ANNOTATION]: writeJsonRecord(queue, ADMISSION_QUEUE_FORMAT) };
  });
}

/**
 * A node's last hold was released: the Lease stops counting it among the admitted nodes, so that the
 * requests next in line see the free slot from the Lease alone (waitFromLease). Only while nobody holds
 * the mutex; otherwise, or on a conflict, the next locked decision prunes it. Returns whether it wrote.
 */
export async function noteReleased(
  client: KubeClient,
  namespace: string,
  nodeName: string,
  now: Date,
): Promise<boolean> {
  return editWithoutMutex(client, { namespace, now }, (lease) => {
    const admitted = readAdmitted(lease);
    if (admitted === 'unreadable' || !admitted.includes(nodeName)) return undefined;
    const rest = admitted.filter((name) => name !== nodeName);
    return { [ADMITTED_ANNOTATION]: writeJsonRecord(rest, ADMITTED_FORMAT) };
  });
}

/**
 * SkipEvent when the request is moot before it holds the node: released already (a late duplicate), its
 * cordon lifted (a cordon asked for it), or its maintenance window closed.
 */
function assertStillWanted(request: ResolvedRequest, node: V1Node, now: Date): void {
  if (readLedger(node).released[request.requestId]) {
    throw new SkipEvent(
      `request ${request.requestId} was already released from node ${request.nodeName}; not cordoning again`,
    );
  }
  if (request.origin === 'cordon' && node.spec?.unschedulable !== true) {
    throw new SkipEvent(
      `node ${request.nodeName} is no longer cordoned: the cordon behind request ${request.requestId} was lifted before admission`,
    );
  }
  assertWindowOpen(request, now);
}

/** A window's request is not started once its window has closed (one already holding its node goes on). */
function assertWindowOpen(request: ResolvedRequest, now: Date): void {
  const closesAt = request.window ? Date.parse(request.window.closesAt) : Number.POSITIVE_INFINITY;
  if (now.getTime() < closesAt) return;
  throw new SkipEvent(
    `maintenance window ${request.window?.name} closed at ${request.window?.closesAt} before node ${request.nodeName} was started; it is not started`,
  );
}

/** What the ledger keeps with the hold: whether a reboot of the node ends this maintenance (a window's choice). */
function holdRequestOf(request: ResolvedRequest): HoldRequest {
  return request.window?.endsOn === 'reboot' ? { ...request, endsOn: 'reboot' } : request;
}

/**
 * Admits `request` to a maintenance slot and takes its hold (cordon). Throws SlotUnavailable while it
 * must wait, SkipEvent for a late duplicate of a request that was already released. `node`: the node as
 * the caller just read it (read here when not given) — a request waiting in line tries again every few
 * seconds, and each read saved there is saved a hundred times over when a hundred requests wait.
 */
export async function admitRequest(
  client: KubeClient,
  request: ResolvedRequest,
  settings: AdmissionSettings,
  read: {
    readonly now: Date;
    readonly node?: V1Node;
    readonly lease?: V1Lease | undefined;
    /** The time again, read when the mutex is taken: the calls before it may have taken seconds. */
    readonly clock?: () => Date;
  },
): Promise<Admitted> {
  const { now } = read;
  const node = read.node ?? (await readNodeOrFail(client, request.nodeName));
  if (readLedger(node).holds[request.requestId]) return { why: 'this request already holds the node', acquired: false };
  assertStillWanted(request, node, now);
  const lease0 = 'lease' in read ? read.lease : await readLease(client, settings.namespace, ADMISSION_LEASE);
  const waiting = await waitWithoutLock(client, request, settings, { node, now, lease: lease0 });
  if (waiting !== undefined) throw waiting;
  // Busy, a request next in line tries again within seconds; one without a place yet, with backoff.
  const place = { requestId: request.requestId, maxHeldNodes: settings.maxHeldNodes, now };
  // The mutex's expiry counts from when it is taken, not from when this attempt began.
  const lockedAt = read.clock?.() ?? now;
  const busy = (message: string) => waitError(message, { queue: readQueue(lease0) }, place);
  const lease = await lockAdmission(client, request, { namespace: settings.namespace, now: lockedAt, busy });
  let unlocked = false;
  let holdWritten = false;
  try {
    // The decision rests on what is read from here on, under the mutex: the Lease as locked, and the nodes.
    const intents = readIntents(lease.metadata?.annotations, request.nodeName);
    const nodes = await observeNodes(client, node, {
      admitted: readAdmitted(lease),
      alsoRead: [...nodesInFlight(intents, request.requestId, lockedAt), request.nodeName],
    });
    const decision = decide(request, settings, { nodes, lease, intents, now: lockedAt });
    let hold = { acquired: false };
    if (decision.admit) {
      holdWritten = true;
      hold = await acquireHold(client, request.nodeName, holdRequestOf(request), {
        now: lockedAt,
        ...(settings.ledger ? { ledger: settings.ledger } : {}),
      });
    }
    const remaining = settledIntents(intents, request.requestId, lockedAt, nodes.holds);
    const admittedNodes = [...new Set([...nodes.held, ...(decision.admit ? [request.nodeName] : [])])];
    await unlockAdmission(client, settings.namespace, lease, {
      queue: decision.queue,
      intents: remaining,
      admitted: decision.admit,
      admittedNodes,
      now: lockedAt,
    });
    unlocked = true;
    if (!decision.admit) throw waitError(`node ${request.nodeName}: ${decision.why}`, decision, place);
    return { why: decision.why, acquired: hold.acquired };
  } catch (error) {
    // After a hold write was sent the intent stays (a write that failed on the client may still land; it
    // expires on its own); before, it goes — else it would count as a held node for INTENT_TTL_SECONDS.
    const dropIntentOf = holdWritten ? undefined : request.requestId;
    if (!unlocked) await unlockQuietly(client, settings.namespace, lease, { now: lockedAt, dropIntentOf });
    throw error;
  }
}

/** Releases the mutex after a failure; if even that fails the lease expires on its own. */
async function unlockQuietly(
  client: KubeClient,
  namespace: string,
  lease: V1Lease,
  at: { readonly now: Date; readonly dropIntentOf: string | undefined },
): Promise<void> {
  const { now, dropIntentOf } = at;
  if (!lease.spec?.holderIdentity) return;
  try {
    const { [dropIntentOf ?? '']: _dropped, ...kept } = readIntents(lease.metadata?.annotations);
    await updateLease(client, namespace, withHolder(lease, undefined, now, dropIntentOf ? { intents: kept } : {}));
  } catch {
    // expires after MUTEX_SECONDS
  }
}

/**
 * Takes `requestId` off the waiting queue (a person stopped its command): the requests behind it need
 * not wait QUEUE_TTL_SECONDS for its entry to expire. Only while nobody holds the mutex; otherwise, and
 * on a conflict, the entry simply expires. Returns whether it removed the entry.
 */
export async function leaveQueue(
  client: KubeClient,
  namespace: string,
  requestId: string,
  now: Date,
): Promise<boolean> {
  return writePlace(client, { namespace, now }, requestId, undefined);
}
