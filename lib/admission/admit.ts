/**
 * Admission with effects: one short Lease mutex (mutex.ts) around "count held nodes → decide → take the hold", so
 * two requests can never both take the last slot. The Lease also carries the waiting queue, so the
 * oldest waiting request is admitted first. A re-run of an admitted request finds its own hold on the
 * node and is admitted again without taking a slot (a crashed execution never leaks one).
 */
import type { V1Lease, V1Node } from '@kubernetes/client-node';
import type { KubeClient } from '../clients/kube/client.ts';
import { readLease } from '../clients/kube/lease.ts';
import { SkipEvent, TransientError } from '../errors/index.ts';
import type { ResolvedRequest } from '../model/request.ts';
import { acquireHold, readNodeOrFail, type SendBy } from '../node/hold.ts';
import { countsAsHeld, type HoldRequest, readLedger } from '../node/ledger.ts';
import { gateReason } from './gates/index.ts';
import { HOLD_SEND_WINDOW_MS, nodesInFlight, settledIntents } from './intents.ts';
import { lockAdmission, unlockAdmission, unlockQuietly } from './mutex.ts';
import { type AdmissionSettings, decide, observeNodes } from './observe.ts';
import { ADMISSION_LEASE, readAdmitted, readIntents, readQueue } from './records.ts';
import { busyError, waitError } from './schedule.ts';
import { waitWithoutLock } from './wait.ts';

export interface Admitted {
  readonly why: string;
  /** This call took the hold (false: the request already held the node — a re-run or a duplicate). */
  readonly acquired: boolean;
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
 * Before the mutex: throws why the request waits on the slots or limits (waitWithoutLock); else the first
 * closed health gate's reason, asked only now that nothing else holds the request back and before the
 * mutex (a gate may take its whole timeout); undefined when every gate is open. The gates are not asked
 * for a node already held: a started evacuation finishes.
 */
async function waitOrAskGates(
  client: KubeClient,
  request: ResolvedRequest,
  settings: AdmissionSettings,
  read: { readonly node: V1Node; readonly now: Date; readonly lease: V1Lease | undefined },
): Promise<string | undefined> {
  const waiting = await waitWithoutLock(client, request, settings, read);
  if (waiting !== undefined) throw waiting;
  if (countsAsHeld(read.node)) return undefined;
  return gateReason(settings.gates, { client, node: read.node, now: read.now });
}

/** The hold write's window after the lock (HOLD_SEND_WINDOW_MS, on the real clock as the API server's timeouts are). */
function holdSendWindow(nodeName: string): SendBy {
  const at = Date.now() + HOLD_SEND_WINDOW_MS;
  const late = () =>
    new TransientError(
      `the hold on node ${nodeName} could not be written within ${HOLD_SEND_WINDOW_MS / 1000} s of taking the admission lock (the API server is slow); not sent, so it cannot land after this admission stops counting: admission is tried again`,
    );
  return { at, late };
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
  const gated = await waitOrAskGates(client, request, settings, { node, now, lease: lease0 });
  const place = { requestId: request.requestId, maxHeldNodes: settings.maxHeldNodes, now };
  // The mutex's expiry counts from when it is taken, not from when this attempt began.
  const lockedAt = read.clock?.() ?? now;
  // Busy: tried again within seconds (AdmissionBusy), unless it waits far back in line anyway.
  const busy = (message: string) => busyError(message, { queue: readQueue(lease0) }, place);
  const lease = await lockAdmission(client, request, { namespace: settings.namespace, now: lockedAt, busy });
  const sendBy = holdSendWindow(request.nodeName);
  let unlocked = false;
  let holdWritten = false;
  try {
    // The decision rests on what is read from here on, under the mutex: the Lease as locked, and the nodes.
    const intents = readIntents(lease, request.nodeName);
    const nodes = await observeNodes(
      client,
      node,
      {
        admitted: readAdmitted(lease),
        alsoRead: [...nodesInFlight(intents, request.requestId, lockedAt), request.nodeName],
      },
      settings.minSchedulable,
    );
    const decision = decide(request, settings, { nodes, lease, intents, now: lockedAt, gated });
    let hold = { acquired: false };
    if (decision.admit) {
      holdWritten = true;
      hold = await acquireHold(client, request.nodeName, holdRequestOf(request), {
        now: lockedAt,
        sendBy,
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
