/**
 * Which parked wake-up tokens a new version of the admission Lease sends back (pure; lib/admission/wake.ts
 * parks them, lib/admission/waker.ts watches the Lease). Kept apart from the parking so that the
 * forwarder's watch loads no Kubernetes client library (its memory budget).
 */
import type { V1Lease } from '@kubernetes/client-node';
import { lineOrder, type QueueEntry } from './decision.ts';
import { ADMISSION_LEASE, readAdmitted, readQueue } from './records.ts';
import { QUEUE_TTL_SECONDS } from './schedule.ts';

/** The admission Lease's name, for a watch that picks it out of its namespace's Leases. */
export const ADMISSION_LEASE_NAME = ADMISSION_LEASE;

/** A place in line with the token that wakes its request (absent until the request parks one). */
export type WakeableEntry = QueueEntry & { readonly wake?: string };

/** What the watcher remembers between two versions of the Lease. */
export interface WakeWatch {
  /** Nodes the Lease records as admitted. */
  readonly held: number;
  /** Slots freed that no woken request has taken yet: the next tokens parked at the front are woken. */
  readonly owed: number;
  /** Tokens sent already (each is sent at most once; a request that waits again parks a new one). */
  readonly woken: ReadonlySet<string>;
}

/** The most tokens remembered as sent: far more than requests wait at once. */
const WOKEN_MEMORY = 4096;

/**
 * Nodes the Lease records as admitted; undefined when that record is unreadable (then nobody is woken).
 * Admissions in flight (intents) are not counted: every locked Admit writes one and removes it at its
 * unlock, admitted or not, and an intent that ends without a hold frees no slot. Counted, each such
 * round trip looked like a slot taken and freed: the clamp on `owed` kept the freeing, the front of the
 * line was woken, its own Admit wrote the next intent and removed it — a self-sustaining chain of
 * wake-ups, one Admit after another, for as long as requests waited (test/workflow/wake-up.test.ts).
 */
function heldOn(lease: V1Lease): number | undefined {
  const admitted = readAdmitted(lease);
  return admitted === 'unreadable' ? undefined : new Set(admitted).size;
}

/** Tokens parked on places waiting on a limit (a zone, a selector, a spread limit, a pool minimum, a gate). */
function parkedOnLimits(queue: Readonly<Record<string, WakeableEntry>>, woken: ReadonlySet<string>): string[] {
  return Object.values(queue).flatMap((e) => (e.why !== undefined && e.wake && !woken.has(e.wake) ? [e.wake] : []));
}

/**
 * Which tokens to send for this version of the Lease (pure). Edge-triggered: a slot freed since the
 * previous version (fewer held nodes) is owed to the front of the line (the places not waiting on a
 * limit), and each owed slot wakes the next such place that holds an unsent token, in line order — a place at the front with no token
 * yet (its request is about to park one) keeps the slot owed to it rather than waking someone behind.
 * A node admitted takes an owed slot back. Any release also wakes every request parked on a limit:
 * the node released may be in its zone or pool, which only its own decision can tell (each such wake-up
 * is one Admit; their tokens take at most PARKED_TOKEN_CHARS). Nothing is woken at the first version seen (no
 * edge), nor while the Lease cannot be read: the waits' fallbacks cover both.
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
  const held = lease ? heldOn(lease) : undefined;
  if (held === undefined || previous === undefined) return { watch: { held: held ?? 0, owed: 0, woken }, tokens: [] };
  let owed = Math.max(0, previous.owed + previous.held - held);
  const tokens: string[] = [];
  // Places waiting on a limit are not owed the freed slots (any release wakes them below): a limited
  // place at the front whose token could not be parked kept every owed slot from the places behind it
  // until its minute's fallback (seen at 1,000 nodes with zone spread limits: slots idle 26 s at a time).
  const line = lineOrder(queue, { now, ttlSeconds: QUEUE_TTL_SECONDS }).filter((id) => queue[id]?.why === undefined);
  for (const id of line.slice(0, owed)) {
    const token = queue[id]?.wake;
    if (token === undefined || woken.has(token)) continue;
    tokens.push(token);
  }
  owed -= tokens.length;
  const released = held < previous.held;
  const onLimits = released ? parkedOnLimits(queue, new Set(tokens)).filter((t) => !woken.has(t)) : [];
  const sent = [...tokens, ...onLimits];
  const remembered = [...woken, ...sent].slice(-WOKEN_MEMORY);
  return { watch: { held, owed, woken: new Set(remembered) }, tokens: sent };
}
