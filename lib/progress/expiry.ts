/**
 * Expiry of Evacuation records: a request's record is deleted some time after its maintenance ended,
 * so `kubectl get evacuations` lists what is going on and what ended recently, not every request ever.
 *
 * Ended means restored: the Restore machine's last step (FinishRestore) marked `status.restore.finishedAt`
 * and labelled the record RESTORED_LABEL. That covers an evacuation that drained and was restored, one that
 * failed and was restored, and one cancelled by a Restore while it ran. A request that failed without ever
 * holding its node (timed out in line, aborted there) has nothing to restore and may never see a Restore:
 * FailEvacuation marks `status.endedAt` and labels it ENDED_LABEL, and it expires from then alike.
 * A record is deleted once that is `recordTtlHours` old and nothing may still need it:
 *  - its node's ledger does not hold the request (a hold, not a record, is what keeps a node cordoned;
 *    a ledger that cannot be read keeps every record of its node: it may hold any of them);
 *  - no execution still claims the request (`stillRunning`: a fresh owner mark — an execution that was
 *    cancelled by the Restore may still be finishing a step, and a write of its would re-create the record);
 *  - it did not change since it was read (the delete's resourceVersion precondition).
 * A late duplicate of the request needs no record: the node's ledger keeps a tombstone of the released
 * request (DRAINBRIDGE_TOMBSTONE_TTL_HOURS), and Admit drops the duplicate on it before anything is written.
 *
 * Who deletes: whichever step runs — FinishRestore and Admit sweep (a bounded list by label), so it works
 * on AWS, where no process lives between steps, and embedded alike. `planExpiry` is pure.
 */
import type { V1Node } from '@kubernetes/client-node';
import type { KubeClient } from '../clients/kube/client.ts';
import { isNotFound } from '../clients/kube/errors.ts';
import type { EvacuationObject } from '../clients/kube/paths.ts';
import { ConflictError } from '../errors/index.ts';
import { ledgerOf } from '../node/ledger.ts';

/** Set on a record when its Restore finished: the sweep lists these… */
export const RESTORED_LABEL = 'drainbridge.io/restored';
/** …and these: set when a request that never held its node ended (nothing to restore). */
export const ENDED_LABEL = 'drainbridge.io/ended';

/** At most this many records are deleted per sweep (one step's worth of calls); the rest go at the next. */
export const SWEEP_LIMIT = 20;

export type ExpiryDecision = { readonly action: 'delete' } | { readonly action: 'keep'; readonly why: string };

export interface ExpiryCheck {
  readonly now: Date;
  readonly ttlHours: number;
  /** The record's node as read now; undefined when the node no longer exists. */
  readonly node: V1Node | undefined;
  /** Whether an execution still claims the request (its owner mark is fresh, or cannot be read). */
  readonly stillRunning: boolean;
}

/** When the record's request ended — its Restore finished, or it ended never having held — as ms, or undefined. */
function restoredAt(record: EvacuationObject): number | undefined {
  const finished = Date.parse(record.status?.restore?.finishedAt ?? record.status?.endedAt ?? '');
  return Number.isFinite(finished) ? finished : undefined;
}

/** Whether `record` may be deleted now, and if not why. Pure. */
export function planExpiry(record: EvacuationObject, check: ExpiryCheck): ExpiryDecision {
  const finished = restoredAt(record);
  if (finished === undefined) return { action: 'keep', why: 'its request was not restored and has not ended' };
  const expiresAt = finished + check.ttlHours * 3_600_000;
  if (check.now.getTime() < expiresAt) {
    return { action: 'keep', why: `it expires at ${new Date(expiresAt).toISOString()}` };
  }
  if (check.stillRunning) return { action: 'keep', why: 'an execution still claims the request' };
  if (check.node) {
    const read = ledgerOf(check.node);
    if (read.status === 'unreadable') return { action: 'keep', why: `its node's ledger cannot be read` };
    if (Object.hasOwn(read.ledger.holds, record.spec.requestId)) {
      return { action: 'keep', why: `node ${record.spec.nodeName} is still held by the request` };
    }
  }
  return { action: 'delete' };
}

export interface SweepSettings {
  readonly now: Date;
  readonly ttlHours: number;
  /** Whether an execution still claims the record's request (lib/workflow/ownership.ts decides). */
  readonly stillRunning: (record: EvacuationObject) => boolean;
  readonly limit?: number;
}

export interface SweepResult {
  /** Names of the records deleted. */
  readonly deleted: readonly string[];
  /** Expired records kept, with why. */
  readonly kept: readonly { readonly name: string; readonly why: string }[];
}

async function nodeOrNone(client: KubeClient, name: string): Promise<V1Node | undefined> {
  try {
    return await client.getNode(name);
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

/** The restored records past their time, oldest first, at most `limit`. Pure. */
export function dueRecords(records: readonly EvacuationObject[], now: Date, ttlHours: number, limit: number) {
  const cutoff = now.getTime() - ttlHours * 3_600_000;
  return records
    .filter((record) => (restoredAt(record) ?? Number.POSITIVE_INFINITY) <= cutoff)
    .sort((a, b) => (restoredAt(a) ?? 0) - (restoredAt(b) ?? 0))
    .slice(0, limit);
}

/** Deletes the record as read; false when it changed since or is gone already (the next sweep decides again). */
async function deleteAsRead(client: KubeClient, record: EvacuationObject): Promise<boolean> {
  try {
    await client.deleteEvacuation(record.metadata.name, record.metadata.resourceVersion ?? '');
    return true;
  } catch (error) {
    if (error instanceof ConflictError || isNotFound(error)) return false;
    throw error;
  }
}

/**
 * Deletes the restored records past their time (oldest first, at most `limit`), each only if planExpiry
 * allows it on the node as read now. Idempotent: a record another sweep deleted, or one that changed
 * since it was read, is left to the next sweep.
 */
export async function sweepExpiredRecords(client: KubeClient, settings: SweepSettings): Promise<SweepResult> {
  const restored = await client.listEvacuations(`${RESTORED_LABEL}=true`);
  const ended = await client.listEvacuations(`${ENDED_LABEL}=true`);
  const listed = new Map([...restored, ...ended].map((record) => [record.metadata.name, record]));
  const due = dueRecords([...listed.values()], settings.now, settings.ttlHours, settings.limit ?? SWEEP_LIMIT);
  const nodes = new Map<string, V1Node | undefined>();
  const deleted: string[] = [];
  const kept: { name: string; why: string }[] = [];
  for (const record of due) {
    const nodeName = record.spec.nodeName;
    if (!nodes.has(nodeName)) nodes.set(nodeName, nodeName ? await nodeOrNone(client, nodeName) : undefined);
    const decision = planExpiry(record, {
      now: settings.now,
      ttlHours: settings.ttlHours,
      node: nodes.get(nodeName),
      stillRunning: settings.stillRunning(record),
    });
    if (decision.action === 'keep') kept.push({ name: record.metadata.name, why: decision.why });
    else if (await deleteAsRead(client, record)) deleted.push(record.metadata.name);
  }
  return { deleted, kept };
}
