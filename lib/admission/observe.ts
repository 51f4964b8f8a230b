/**
 * What admission decides on: the nodes drainbridge holds (from their ledgers) and who holds them, read
 * from the cluster — never a list of every node unless the Lease's memory of admitted nodes is damaged —
 * and the decision itself over what was read (decision.ts, planAdmission).
 */
import type { V1Lease, V1Node } from '@kubernetes/client-node';
import type { KubeClient } from '../clients/kube/client.ts';
import { isNotFound } from '../clients/kube/errors.ts';
import type { Labels } from '../clients/kube/selectors.ts';
import type { GateSpec } from '../model/gate-spec.ts';
import type { ResolvedRequest } from '../model/request.ts';
import { listNodesMaybeHeld } from '../node/hold.ts';
import { countsAsHeld, HELD_LABEL, type LedgerSettings, ledgerOf } from '../node/ledger.ts';
import { pausedBecause } from './breaker.ts';
import { planAdmission, type SlotHolder, type SlotLimit } from './decision.ts';
import { type Intents, nodesInFlight, nodesInFlightFor } from './intents.ts';
import { readBreaker, readQueue } from './records.ts';
import { QUEUE_TTL_SECONDS } from './schedule.ts';
import type { MinSchedulable, PoolNode, SpreadLimit } from './spread.ts';

export interface AdmissionSettings {
  readonly namespace: string;
  readonly maxHeldNodes: number;
  readonly slotLimits?: readonly SlotLimit[];
  readonly spreadLimits?: readonly SpreadLimit[];
  readonly minSchedulable?: readonly MinSchedulable[];
  /** Health gates asked before a node is admitted (DRAINBRIDGE_GATES, gates/). */
  readonly gates?: readonly GateSpec[];
  readonly ledger?: LedgerSettings;
}

/**
 * The limits admission counts, from the settings that declare them (lib/config): one place, so `plan`'s
 * outlook and the Admit step decide on the same limits.
 */
export function admissionLimitsOf(
  config: Pick<
    AdmissionSettings,
    'namespace' | 'maxHeldNodes' | 'slotLimits' | 'spreadLimits' | 'minSchedulable' | 'gates'
  >,
): AdmissionSettings {
  return {
    namespace: config.namespace,
    maxHeldNodes: config.maxHeldNodes,
    ...(config.slotLimits ? { slotLimits: config.slotLimits } : {}),
    ...(config.spreadLimits ? { spreadLimits: config.spreadLimits } : {}),
    ...(config.minSchedulable ? { minSchedulable: config.minSchedulable } : {}),
    ...(config.gates && config.gates.length > 0 ? { gates: config.gates } : {}),
  };
}

export interface ObservedNodes {
  /** Nodes drainbridge holds (from their ledgers; an unreadable ledger counts as held). */
  readonly held: string[];
  readonly labels: Map<string, Labels>;
  /** Who holds each node, from its readable ledger. */
  readonly holders: Map<string, SlotHolder[]>;
  /** The requestIds each node's ledger holds. */
  holds(node: string): readonly string[];
  /** The nodes of the pools that keep a minimum of schedulable nodes (none without such a rule). */
  readonly pool: readonly PoolNode[];
  /** Nodes held by a request of `requester` (a maintenance window's). */
  heldBy(requester: string): string[];
}

/**
 * What the locked decision reads beyond the lists, all of it under the mutex: the nodes the Lease
 * remembers admitting, those other admitters are taking a hold on now (their labels count against the
 * label-selector limits) and the requested node itself.
 */
export interface ThoroughRead {
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
export async function observeNodes(
  client: KubeClient,
  requested: V1Node,
  thorough: ThoroughRead | undefined,
  pools: readonly MinSchedulable[] = [],
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
  return { held, labels, holders, holds, heldBy, pool: await readPools(client, pools) };
}

/** A node takes new pods: not cordoned, and its Ready condition is True. */
function isSchedulable(node: V1Node): boolean {
  if (node.spec?.unschedulable === true) return false;
  return node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
}

/** The nodes of every pool with a minimum, one list per pool's selector (read under the mutex when locked). */
async function readPools(client: KubeClient, pools: readonly MinSchedulable[]): Promise<PoolNode[]> {
  const byName = new Map<string, PoolNode>();
  for (const pool of pools) {
    for (const node of await client.listNodes(pool.selector)) {
      const name = node.metadata?.name ?? '';
      byName.set(name, { name, labels: node.metadata?.labels ?? {}, schedulable: isSchedulable(node) });
    }
  }
  return [...byName.values()];
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

/** What admission decides for `request` on what it read (pure: planAdmission over the observed nodes and queue). */
export function decide(
  request: Pick<ResolvedRequest, 'requestId' | 'nodeName' | 'requester' | 'window'>,
  settings: AdmissionSettings,
  read: { nodes: ObservedNodes; lease: V1Lease | undefined; intents: Intents; now: Date; gated?: string | undefined },
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
    spreadLimits: settings.spreadLimits ?? [],
    minSchedulable: settings.minSchedulable ?? [],
    pool: nodes.pool,
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
    ...optional('paused', pausedBecause(readBreaker(lease, request.nodeName))),
    ...optional('gated', read.gated),
  });
}

function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}
