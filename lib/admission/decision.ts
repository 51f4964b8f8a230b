/**
 * Admission, planned purely. A slot is a node held by drainbridge (counted from the nodes' ledgers).
 * Requests that find no free slot wait in a queue kept on the admission Lease, and are admitted oldest
 * first. Waiting entries that stop refreshing (their execution died) expire, so they never block others.
 * Optional label-selector limits cap held nodes per group (per zone, per rack) on top of the total; spread
 * limits cap them per value of a label key, and pool minimums keep enough nodes schedulable (spread.ts).
 */
import { type Labels, matchesAll, parseSelector } from '../clients/kube/selectors.ts';
import { brokenMinimum, brokenSpreadLimit, type MinSchedulable, type PoolNode, type SpreadLimit } from './spread.ts';

/** One waiting request, as kept in the Lease's queue annotation. */
export interface QueueEntry {
  readonly node: string;
  /** When the request first asked for a slot (ISO 8601): its place in the queue. */
  readonly since: string;
  /** When its execution last asked (ISO 8601); stale entries are dropped. */
  readonly seen: string;
  /** The limit it waited on at its last decision on the nodes (`drainbridge status` shows it); absent otherwise. */
  readonly why?: string;
  /**
   * When `why` was decided (ISO 8601). A request far back in line refreshes its place from the Lease alone
   * (wait.ts: waitFromLease) and keeps `why` as it was: `seen` later than this says so (`drainbridge status`).
   */
  readonly whyAt?: string;
}

export type AdmissionQueue = Readonly<Record<string, QueueEntry>>;

/** A hold on a held node, for the waiting message: who holds the slot and since when. */
export interface SlotHolder {
  readonly requestId: string;
  readonly requester: string;
  /** ISO 8601. */
  readonly since: string;
}

/** At most `max` held nodes among those matching `selector` (e.g. one per zone: one limit per zone). */
export interface SlotLimit {
  readonly selector: string;
  readonly max: number;
}

export interface AdmissionFacts {
  readonly requestId: string;
  readonly node: string;
  readonly now: Date;
  /** Nodes currently held by drainbridge (any request). */
  readonly heldNodes: readonly string[];
  readonly maxHeldNodes: number;
  /** Extra limits by label selector; each applies to the nodes its selector matches. */
  readonly slotLimits?: readonly SlotLimit[];
  /** At most MAX held nodes per value of a label key (one per zone, for every zone). */
  readonly spreadLimits?: readonly SpreadLimit[];
  /** Pools that keep at least MIN schedulable nodes; `pool` holds their nodes as read. */
  readonly minSchedulable?: readonly MinSchedulable[];
  readonly pool?: readonly PoolNode[];
  /** Node labels, for the slot and spread limits: the requested node's and every held node's. */
  readonly labelsOf?: (node: string) => Labels;
  readonly queue: AdmissionQueue;
  /** Waiting entries not refreshed for this long are dropped. */
  readonly queueTtlSeconds: number;
  /** A maintenance window's own slots: at most `max` of its nodes held at once (inside the cluster-wide ones). */
  readonly windowLimit?: WindowLimit;
  /** The holds on a held node (its ledger), so that a waiting request can say who holds the slots. */
  readonly holdersOf?: (node: string) => readonly SlotHolder[];
  /** Why admission is paused (the circuit breaker tripped, breaker.ts); absent while it admits. */
  readonly paused?: string;
  /** The first closed health gate (gates/), asked just before this decision; absent when every gate is open. */
  readonly gated?: string;
}

export interface WindowLimit {
  readonly window: string;
  readonly max: number;
  /** Nodes held by this window's requests now. */
  readonly heldNodes: readonly string[];
}

/** The window's limit as a sentence when admitting `node` would break it; undefined when it would not. */
export function brokenWindowLimit(facts: AdmissionFacts): string | undefined {
  const limit = facts.windowLimit;
  if (!limit) return undefined;
  const held = [...new Set(limit.heldNodes)].filter((name) => name !== facts.node);
  if (held.length < limit.max) return undefined;
  return `maintenance window ${limit.window} has ${held.length} of its ${limit.max} node(s) in maintenance (${held.join(', ')})`;
}

/**
 * `node-1 (request t1 by alice@host since 2026-11-21T10:00:00Z)`, per held node, and what frees a slot:
 * a person waiting must know whom to ask and which command ends it. Stable while nothing changes, so a
 * retried wait prints one line, not one per retry.
 */
export function describeHolders(nodes: readonly string[], holdersOf?: AdmissionFacts['holdersOf']): string {
  const held = [...new Set(nodes)];
  if (held.length === 0) return 'held: none';
  const each = held.map((node) => {
    const holds = holdersOf?.(node) ?? [];
    if (holds.length === 0) return node;
    const who = holds.map((h) => `request ${h.requestId} by ${h.requester} since ${h.since}`).join('; ');
    return `${node} (${who})`;
  });
  const frees =
    held.length === 1
      ? `a slot frees when that maintenance ends: drainbridge restore ${held[0]}`
      : 'a slot frees when one of those maintenances ends: drainbridge restore NODE';
  return `held: ${each.join(', ')}; ${frees}`;
}

export type AdmissionDecision =
  | { readonly admit: true; readonly why: string; readonly queue: AdmissionQueue }
  | {
      readonly admit: false;
      readonly why: string;
      readonly queue: AdmissionQueue;
      /** It waits on a label-selector, spread or pool limit or a health gate, not for the cluster-wide slots. */
      readonly limited?: true;
    };

/**
 * The queue without the places of requests that already hold their node: admitted, they never ask again,
 * so a place left behind (its admitter's unlock lost to a mutex that expired under a slow API server)
 * would stand ahead of every waiting request — and hold back a slot — until it expired.
 */
function withoutAdmitted(queue: Record<string, QueueEntry>, holdersOf: AdmissionFacts['holdersOf']) {
  if (!holdersOf) return queue;
  const kept: Record<string, QueueEntry> = {};
  for (const [id, entry] of Object.entries(queue)) {
    if (!holdersOf(entry.node).some((holder) => holder.requestId === id)) kept[id] = entry;
  }
  return kept;
}

function freshEntries(queue: AdmissionQueue, now: Date, ttlSeconds: number): Record<string, QueueEntry> {
  const fresh: Record<string, QueueEntry> = {};
  for (const [id, entry] of Object.entries(queue)) {
    if (now.getTime() - Date.parse(entry.seen) <= ttlSeconds * 1000) fresh[id] = entry;
  }
  return fresh;
}

/**
 * The first label-selector limit that admitting `node` would break, as a sentence; undefined when none.
 * A limit binds only when its selector matches the requested node.
 */
export function brokenSlotLimit(facts: AdmissionFacts): string | undefined {
  const labelsOf = facts.labelsOf ?? (() => ({}));
  for (const limit of facts.slotLimits ?? []) {
    const requirements = parseSelector(limit.selector);
    if (!matchesAll(requirements, labelsOf(facts.node))) continue;
    const held = [...new Set(facts.heldNodes)].filter((name) => matchesAll(requirements, labelsOf(name)));
    if (held.length >= limit.max) {
      return `the limit of ${limit.max} held node(s) matching "${limit.selector}" is reached (${describeHolders(held, facts.holdersOf)})`;
    }
  }
  return undefined;
}

/** Queue order: oldest first, requestId as the tie-breaker so every reader agrees. */
function compareEntries([idA, a]: [string, QueueEntry], [idB, b]: [string, QueueEntry]): number {
  return Date.parse(a.since) - Date.parse(b.since) || (idA < idB ? -1 : idA > idB ? 1 : 0);
}

function without(queue: Record<string, QueueEntry>, requestId: string): Record<string, QueueEntry> {
  const { [requestId]: _dropped, ...rest } = queue;
  return rest;
}

/**
 * How many fresh requests wait ahead of `requestId` in the queue (oldest first), or undefined when it has
 * no fresh place (never asked, or its entry expired).
 */
/** The waiting requests' ids in line order (oldest first), stale entries left out: the order requestsAhead counts. */
export function lineOrder(queue: AdmissionQueue, at: { readonly now: Date; readonly ttlSeconds: number }): string[] {
  return Object.entries(freshEntries(queue, at.now, at.ttlSeconds))
    .sort(compareEntries)
    .map(([id]) => id);
}

export function requestsAhead(
  queue: AdmissionQueue,
  requestId: string,
  at: { readonly now: Date; readonly ttlSeconds: number },
): number | undefined {
  const ordered = Object.entries(freshEntries(queue, at.now, at.ttlSeconds)).sort(compareEntries);
  const position = ordered.findIndex(([id]) => id === requestId);
  return position < 0 ? undefined : position;
}

/**
 * Decides whether `requestId` may take a hold on `node` now, and the queue to write back.
 * - A node already held (by this or another request) costs no new slot: admitted at once.
 * - A paused admission (the circuit breaker) admits no other node; the request keeps its place. So does a
 *   limit it would break, or a closed health gate.
 * - Otherwise a free slot goes to the oldest waiting request that wants a node not yet held: only that
 *   one is admitted in this call; the others keep waiting.
 */
export function planAdmission(facts: AdmissionFacts): AdmissionDecision {
  const nowIso = facts.now.toISOString();
  const queue = withoutAdmitted(freshEntries(facts.queue, facts.now, facts.queueTtlSeconds), facts.holdersOf);
  if (facts.heldNodes.includes(facts.node)) {
    return {
      admit: true,
      why: `node ${facts.node} is already held by drainbridge`,
      queue: without(queue, facts.requestId),
    };
  }
  // A window whose own slots are full takes no place in the queue: a place would hold back requests
  // from other sources (a cloud notice) behind nodes the window itself will not start yet.
  const windowFull = brokenWindowLimit(facts);
  if (windowFull) return { admit: false, why: windowFull, queue: without(queue, facts.requestId) };
  const mine = queue[facts.requestId];
  queue[facts.requestId] = { node: facts.node, since: mine?.since ?? nowIso, seen: nowIso };
  // Waiting on a limit, a closed health gate or a paused admission keeps the request's place: it goes first
  // once its zone or pool frees, the gate opens, or admission resumes.
  const limited =
    facts.paused ?? brokenSlotLimit(facts) ?? brokenSpreadLimit(facts) ?? brokenMinimum(facts) ?? facts.gated;
  if (limited) return { admit: false, why: limited, queue: withWhy(queue, facts.requestId, limited), limited: true };
  const free = facts.maxHeldNodes - new Set(facts.heldNodes).size;
  const ordered = Object.entries(queue).sort(compareEntries);
  const position = ordered.findIndex(([id]) => id === facts.requestId);
  // Requests ahead of this one that want the same node will not need a second slot for it.
  const nodesAhead = new Set(ordered.slice(0, position).map(([, entry]) => entry.node));
  if (free > 0 && nodesAhead.size < free && !nodesAhead.has(facts.node)) {
    return {
      admit: true,
      why: `slot ${new Set(facts.heldNodes).size + 1} of ${facts.maxHeldNodes}`,
      queue: without(queue, facts.requestId),
    };
  }
  const why =
    free > 0
      ? `waiting behind ${position} older request(s) for ${free} free slot(s)`
      : `all ${facts.maxHeldNodes} maintenance slot(s) are in use (${describeHolders(facts.heldNodes, facts.holdersOf)}); ${position} request(s) ahead`;
  return { admit: false, why, queue };
}

/** Longest reason kept on a place in line: the Lease's annotations share 256 KiB with every waiting request. */
const WHY_MAX_CHARS = 240;

/**
 * The queue with `requestId`'s place saying why it waits — for a limit only (a full zone, a pool at its
 * minimum, a selector's limit): waiting for the cluster-wide slots needs no word beyond the line itself.
 */
function withWhy(queue: Record<string, QueueEntry>, requestId: string, why: string): Record<string, QueueEntry> {
  const place = queue[requestId];
  const kept = why.length > WHY_MAX_CHARS ? `${why.slice(0, WHY_MAX_CHARS - 1)}…` : why;
  return place ? { ...queue, [requestId]: { ...place, why: kept, whyAt: place.seen } } : queue;
}
