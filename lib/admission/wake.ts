/**
 * Waking requests that wait in line, instead of having them poll the Lease: a waiting request parks a
 * wake-up token on its place in line (its Step Functions task token, or the embedded executor's), and
 * whoever watches the Lease (`drainbridge run`, the forwarder) sends the token back when a slot frees —
 * so a waiting request reads nothing while it waits. A wake-up only makes the request try admission
 * again (it decides nothing), and a lost one costs the wait's fallback (its TimeoutSeconds): an
 * optimisation, never needed for correctness.
 */
import type { V1Lease } from '@kubernetes/client-node';
import type { KubeClient } from '../kube/client.ts';
import { lineOrder, type QueueEntry } from './decision.ts';
import { nodesInFlight } from './intents.ts';
import { editWithoutMutex } from './mutex.ts';
import { ADMISSION_LEASE, readAdmitted, readIntents, readQueue } from './records.ts';
import { QUEUE_TTL_SECONDS } from './schedule.ts';

/** The admission Lease's name, for a watch that picks it out of its namespace's Leases. */
export const ADMISSION_LEASE_NAME = ADMISSION_LEASE;

/** A place in line with the token that wakes its request (absent until the request parks one). */
type WakeableEntry = QueueEntry & { readonly wake?: string };

/**
 * Only this many places at the front of the line park a token: a Step Functions token is up to 2 KiB,
 * and the Lease's annotations must stay far below Kubernetes' 256 KiB however many requests wait. A
 * request further back waits out its fallback; it parks once it is this near.
 */
export const PARKED_PLACES = 16;

/**
 * Parks `token` on `requestId`'s place in line (an unlocked, conditional write: editWithoutMutex).
 * False when the request has no place near the front (it waits for something else, or PARKED_PLACES
 * wait ahead of it) or the write lost to the mutex: then only the wait's fallback ends its wait.
 */
export function parkWakeToken(
  client: KubeClient,
  at: { readonly namespace: string; readonly now: Date },
  requestId: string,
  token: string,
): Promise<boolean> {
  return editWithoutMutex(client, at, (lease) => {
    const queue = readQueue(lease);
    const place = queue[requestId];
    const ahead = lineOrder(queue, { now: at.now, ttlSeconds: QUEUE_TTL_SECONDS }).indexOf(requestId);
    if (place === undefined || ahead < 0 || ahead >= PARKED_PLACES) return undefined;
    return { queue: { ...queue, [requestId]: { ...place, wake: token } as WakeableEntry } };
  });
}

/** What the watcher remembers between two versions of the Lease. */
export interface WakeWatch {
  /** Nodes the Lease counts as held (admitted, or being admitted). */
  readonly held: number;
  /** Slots freed that no woken request has taken yet: the next tokens parked at the front are woken. */
  readonly owed: number;
  /** Tokens sent already (each is sent at most once; a request that waits again parks a new one). */
  readonly woken: ReadonlySet<string>;
}

/** The most tokens remembered as sent: far more than requests wait at once. */
const WOKEN_MEMORY = 4096;

/** Held nodes as the Lease counts them; undefined when its admitted record is unreadable (then nobody is woken). */
function heldOn(lease: V1Lease, now: Date): number | undefined {
  const admitted = readAdmitted(lease);
  if (admitted === 'unreadable') return undefined;
  return new Set([...admitted, ...nodesInFlight(readIntents(lease), '', now)]).size;
}

/**
 * Which tokens to send for this version of the Lease (pure). Edge-triggered: a slot freed since the
 * previous version (fewer held nodes) is owed to the front of the line, and each owed slot wakes the
 * next place in line that holds an unsent token, in line order — a place at the front with no token
 * yet (its request is about to park one) keeps the slot owed to it rather than waking someone behind.
 * A node admitted takes an owed slot back. Nothing is woken at the first version seen (no edge), nor
 * while the Lease cannot be read: the waits' fallbacks cover both.
 */
export function planWakeUps(
  previous: WakeWatch | undefined,
  lease: V1Lease | undefined,
  now: Date,
): { readonly watch: WakeWatch; readonly tokens: string[] } {
  const woken = previous?.woken ?? new Set<string>();
  let queue: Readonly<Record<string, WakeableEntry>>;
  try {
    queue = readQueue(lease);
  } catch {
    return { watch: { held: previous?.held ?? 0, owed: 0, woken }, tokens: [] };
  }
  const held = lease ? heldOn(lease, now) : undefined;
  if (held === undefined || previous === undefined) return { watch: { held: held ?? 0, owed: 0, woken }, tokens: [] };
  let owed = Math.max(0, previous.owed + previous.held - held);
  const tokens: string[] = [];
  for (const id of lineOrder(queue, { now, ttlSeconds: QUEUE_TTL_SECONDS }).slice(0, owed)) {
    const token = queue[id]?.wake;
    if (token === undefined || woken.has(token)) continue;
    tokens.push(token);
  }
  owed -= tokens.length;
  const remembered = [...woken, ...tokens].slice(-WOKEN_MEMORY);
  return { watch: { held, owed, woken: new Set(remembered) }, tokens };
}
