/**
 * Admission with effects: one short Lease mutex around "count held nodes → decide → take the hold", so
 * two requests can never both take the last slot. The Lease also carries the waiting queue, so the
 * oldest waiting request is admitted first. A re-run of an admitted request finds its own hold on the
 * node and is admitted again without taking a slot (a crashed execution never leaks one).
 */
import type { V1Lease } from '@kubernetes/client-node';
import { z } from 'zod';
import type { ResolvedRequest } from '../domain/request.ts';
import { ConflictError, SkipEvent, SlotUnavailable } from '../errors/index.ts';
import type { KubeClient } from '../kube/client.ts';
import { createLease, readLease, updateLease } from '../kube/lease.ts';
import type { Labels } from '../kube/selectors.ts';
import { acquireHold, readNodeOrFail } from '../node/hold.ts';
import { type HoldRequest, type LedgerSettings, readLedger } from '../node/ledger.ts';
import { type RecordFormat, readJsonRecord, recordOr, writeJsonRecord } from '../util/json-record.ts';
import { type AdmissionQueue, planAdmission, type SlotHolder, type SlotLimit } from './admission-plan.ts';

export const ADMISSION_LEASE = 'drainbridge-admission';
const QUEUE_ANNOTATION = 'drainbridge.io/admission-queue';
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

/** The waiting queue, requestId → entry, as admission writes it. */
export const ADMISSION_QUEUE_FORMAT: RecordFormat<AdmissionQueue> = {
  what: `admission queue (Lease annotation ${QUEUE_ANNOTATION})`,
  versions: [z.record(z.string(), z.looseObject({ node: z.string(), since: z.string(), seen: z.string() }))],
};

function readQueue(lease: V1Lease | undefined): AdmissionQueue {
  const read = readJsonRecord(lease?.metadata?.annotations?.[QUEUE_ANNOTATION], ADMISSION_QUEUE_FORMAT);
  // Unreadable reads as an empty queue (waiting requests re-enter at their next retry) — today's choice.
  return recordOr(read, { absent: {}, unreadable: {} });
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
  queue?: AdmissionQueue,
): V1Lease {
  const annotations = { ...lease?.metadata?.annotations };
  if (queue) annotations[QUEUE_ANNOTATION] = writeJsonRecord(queue, ADMISSION_QUEUE_FORMAT);
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { ...lease?.metadata, name: ADMISSION_LEASE, annotations },
    spec: holder
      ? { holderIdentity: holder, leaseDurationSeconds: MUTEX_SECONDS, acquireTime: now, renewTime: now }
      : { leaseDurationSeconds: MUTEX_SECONDS },
  };
}

/** Takes the mutex; SlotUnavailable when another request holds it (the workflow retries shortly). */
async function lockAdmission(client: KubeClient, namespace: string, requestId: string, now: Date): Promise<V1Lease> {
  const lease = await readLease(client, namespace, ADMISSION_LEASE);
  if (!isMutexFree(lease, now)) {
    throw new SlotUnavailable(`admission is busy (held by ${lease?.spec?.holderIdentity}); retrying`);
  }
  const locked = withHolder(lease, requestId, now);
  try {
    return lease ? await updateLease(client, namespace, locked) : await createLease(client, namespace, locked);
  } catch (error) {
    if (error instanceof ConflictError)
      throw new SlotUnavailable('admission is busy (another request took the lock); retrying');
    throw error;
  }
}

interface ObservedNodes {
  readonly held: string[];
  readonly labels: Map<string, Labels>;
  readonly holders: Map<string, SlotHolder[]>;
  /** Nodes held by a request of `requester` (a maintenance window's). */
  heldBy(requester: string): string[];
}

/** Every node's labels, the names of those drainbridge holds and who holds them (from their ledgers). */
async function observeNodes(client: KubeClient): Promise<ObservedNodes> {
  const nodes = await client.listNodes();
  const labels = new Map(nodes.map((node) => [node.metadata?.name ?? '', node.metadata?.labels ?? {}]));
  const holders = new Map<string, SlotHolder[]>();
  for (const node of nodes) {
    const holds = Object.entries(readLedger(node).holds);
    if (holds.length === 0) continue;
    holders.set(
      node.metadata?.name ?? '',
      holds.map(([requestId, hold]) => ({ requestId, requester: hold.requester, since: hold.since })),
    );
  }
  const heldBy = (requester: string) =>
    [...holders].filter(([, holds]) => holds.some((hold) => hold.requester === requester)).map(([name]) => name);
  return { held: [...holders.keys()], labels, holders, heldBy };
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
 * must wait, SkipEvent for a late duplicate of a request that was already released.
 */
export async function admitRequest(
  client: KubeClient,
  request: ResolvedRequest,
  settings: AdmissionSettings,
  now: Date,
): Promise<Admitted> {
  const node = await readNodeOrFail(client, request.nodeName);
  const ledger = readLedger(node);
  if (ledger.holds[request.requestId]) return { why: 'this request already holds the node', acquired: false };
  if (ledger.released[request.requestId]) {
    throw new SkipEvent(
      `request ${request.requestId} was already released from node ${request.nodeName}; not cordoning again`,
    );
  }
  // A cordon asked for this evacuation; uncordoned before it was admitted, the request is moot.
  if (request.origin === 'cordon' && node.spec?.unschedulable !== true) {
    throw new SkipEvent(
      `node ${request.nodeName} is no longer cordoned: the cordon behind request ${request.requestId} was lifted before admission`,
    );
  }
  assertWindowOpen(request, now);
  let lease = await lockAdmission(client, settings.namespace, request.requestId, now);
  try {
    const nodes = await observeNodes(client);
    const window = request.window;
    const decision = planAdmission({
      requestId: request.requestId,
      node: request.nodeName,
      now,
      heldNodes: nodes.held,
      maxHeldNodes: settings.maxHeldNodes,
      slotLimits: settings.slotLimits ?? [],
      labelsOf: (name) => nodes.labels.get(name) ?? {},
      queue: readQueue(lease),
      queueTtlSeconds: QUEUE_TTL_SECONDS,
      ...(window
        ? { windowLimit: { window: window.name, max: window.maxNodes, heldNodes: nodes.heldBy(request.requester) } }
        : {}),
      holdersOf: (name) => nodes.holders.get(name) ?? [],
    });
    let hold = { acquired: false };
    if (decision.admit) {
      hold = await acquireHold(client, request.nodeName, holdRequestOf(request), {
        now,
        ...(settings.ledger ? { ledger: settings.ledger } : {}),
      });
    }
    lease = await updateLease(client, settings.namespace, withHolder(lease, undefined, now, decision.queue));
    if (!decision.admit) throw new SlotUnavailable(`node ${request.nodeName}: ${decision.why}`);
    return { why: decision.why, acquired: hold.acquired };
  } catch (error) {
    await unlockQuietly(client, settings.namespace, lease, now);
    throw error;
  }
}

/** Releases the mutex after a failure; if even that fails the lease expires on its own. */
async function unlockQuietly(client: KubeClient, namespace: string, lease: V1Lease, now: Date): Promise<void> {
  if (!lease.spec?.holderIdentity) return;
  try {
    await updateLease(client, namespace, withHolder(lease, undefined, now));
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
  const lease = await readLease(client, namespace, ADMISSION_LEASE);
  const queue = readQueue(lease);
  if (!lease || !queue[requestId] || !isMutexFree(lease, now)) return false;
  const { [requestId]: _leaving, ...rest } = queue;
  const annotations = {
    ...lease.metadata?.annotations,
    [QUEUE_ANNOTATION]: writeJsonRecord(rest, ADMISSION_QUEUE_FORMAT),
  };
  try {
    await updateLease(client, namespace, { ...lease, metadata: { ...lease.metadata, annotations } });
    return true;
  } catch (error) {
    if (error instanceof ConflictError) return false;
    throw error;
  }
}
