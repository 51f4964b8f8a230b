/**
 * Admissions in flight, kept on the admission Lease beside the queue: "request R is taking a hold on node
 * N". Why: the Lease is a mutex with an expiry, and a hold write can stall at the API server past it. The
 * next request then takes the expired mutex and, counting held nodes from the ledgers, would not yet see
 * the stalled hold — and admit a second node past the limit when the stalled write lands (found by the
 * fault suite: "Lease lost mid-admission"). So every admitter writes its intent when it locks, every
 * locker carries unexpired intents forward, and every admitter counts the others' intents as held nodes —
 * against every limit: the cluster-wide one, a label-selector limit (the admitter reads those nodes'
 * labels) and a maintenance window's own (an intent says who asked). Counted against the cluster-wide
 * limit only, a window's second node was admitted past its one slot the same way (test/faults/admission-limits.test.ts).
 *
 * An intent ends when its admitter unlocks, when the node's ledger shows the request's hold (it is
 * counted from the ledger then), or after INTENT_TTL_SECONDS — longer than any write can stall (the API
 * server gives up on a request after 60 s). Pure; records.ts reads and writes them on the Lease.
 */

/** How long an admitter's intent counts after it locked, unless it ends sooner. */
export const INTENT_TTL_SECONDS = 120;

/**
 * How long after it locked an admitter may still send its hold write (real time). A write lands at the
 * latest 60 s after it was sent (the API server's request timeout), and one call of the client sends its
 * last retry at most about 40 s after the call began (4 attempts of up to 10 s, backoff up to 3 s): a
 * write begun within 20 s of the lock has landed, or never will, before its intent stops counting
 * (INTENT_TTL_SECONDS). Begun later, it could land after the intent expired, unseen by the next
 * admitter's count — one node past a limit. So a later hold write is not sent: the admission is tried
 * again (TransientError), its intent left to expire.
 */
export const HOLD_SEND_WINDOW_MS = 20_000;

export interface Intent {
  readonly node: string;
  /** When the admitter locked (ISO 8601). */
  readonly since: string;
  /**
   * Who asked (a maintenance window's requests share one): the window's own limit counts its admissions
   * in flight too. Absent on an intent written before it was kept: such an intent counts for every requester.
   */
  readonly requester?: string;
}

export type Intents = Readonly<Record<string, Intent>>;

function live(intents: Intents, now: Date): Record<string, Intent> {
  const kept: Record<string, Intent> = {};
  for (const [requestId, intent] of Object.entries(intents)) {
    if (now.getTime() - Date.parse(intent.since) <= INTENT_TTL_SECONDS * 1000) kept[requestId] = intent;
  }
  return kept;
}

/** What a locker writes: the unexpired intents it found, plus its own (its node, and who asked). */
export function withIntent(
  found: Intents,
  requestId: string,
  intent: { readonly node: string; readonly requester: string },
  now: Date,
): Intents {
  return {
    ...live(found, now),
    [requestId]: { node: intent.node, since: now.toISOString(), requester: intent.requester },
  };
}

/** Nodes other admitters may be taking a hold on right now: count them as held. */
export function nodesInFlight(intents: Intents, requestId: string, now: Date): string[] {
  return Object.entries(live(intents, now))
    .filter(([id]) => id !== requestId)
    .map(([, intent]) => intent.node);
}

/**
 * Of nodesInFlight, those `requester`'s requests are taking (or may be: an intent that does not say who
 * asked): a maintenance window's own limit counts them as its held nodes.
 */
export function nodesInFlightFor(intents: Intents, requestId: string, now: Date, requester: string): string[] {
  return Object.entries(live(intents, now))
    .filter(([id, intent]) => id !== requestId && (intent.requester ?? requester) === requester)
    .map(([, intent]) => intent.node);
}

/**
 * What an unlocker writes: without its own intent and without those whose hold the ledgers already show
 * (`holds(node)` lists the requestIds a node's ledger holds).
 */
export function settledIntents(
  intents: Intents,
  requestId: string,
  now: Date,
  holds: (node: string) => readonly string[],
): Intents {
  const kept: Record<string, Intent> = {};
  for (const [id, intent] of Object.entries(live(intents, now))) {
    if (id !== requestId && !holds(intent.node).includes(id)) kept[id] = intent;
  }
  return kept;
}
