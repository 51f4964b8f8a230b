/**
 * The admission Lease as others see it: read, and its records made plain for `drainbridge status`
 * (the queue as written, and every record that cannot be read) and for `drainbridge repair` (what
 * emptying the damaged ones writes). Reads and plans only; the repair's write is one replace of the Lease.
 */
import type { V1Lease } from '@kubernetes/client-node';
import type { KubeClient } from '../clients/kube/client.ts';
import { readLease } from '../clients/kube/lease.ts';
import type { RepairAction } from '../model/repair-action.ts';
import { readJsonRecord } from '../util/json-record.ts';
import { pausedBecause } from './breaker.ts';
import type { AdmissionQueue } from './decision.ts';
import {
  ADMISSION_LEASE,
  ADMISSION_QUEUE_FORMAT,
  BREAKER_ANNOTATION,
  BREAKER_FORMAT,
  damagedRecords,
  QUEUE_ANNOTATION,
} from './records.ts';

/** The admission Lease (undefined: none yet — no request has asked for a slot). */
export function readAdmissionLease(client: KubeClient, namespace: string): Promise<V1Lease | undefined> {
  return readLease(client, namespace, ADMISSION_LEASE);
}

/** A record on the Lease that cannot be read, and why. */
export interface AdmissionDamage {
  /** What it is and where: `admission queue (Lease annotation …)`. */
  readonly record: string;
  readonly problem: string;
}

/** What `drainbridge status` shows of admission. */
export interface AdmissionView {
  /** The waiting queue as written (empty when absent or unreadable: see `damaged`). */
  readonly queue: AdmissionQueue;
  readonly damaged: readonly AdmissionDamage[];
  /** Admission paused by the circuit breaker: since when, and why (a damaged breaker record is in `damaged`). */
  readonly paused?: { readonly since: string; readonly reason: string };
}

/** The Lease's queue and its damaged records; never throws (status reports what it cannot read). */
export function readAdmissionView(lease: V1Lease | undefined): AdmissionView {
  const queue = readJsonRecord(lease?.metadata?.annotations?.[QUEUE_ANNOTATION], ADMISSION_QUEUE_FORMAT);
  const breaker = readJsonRecord(lease?.metadata?.annotations?.[BREAKER_ANNOTATION], BREAKER_FORMAT);
  const reason = breaker.status === 'ok' ? pausedBecause(breaker.value) : undefined;
  const since = breaker.status === 'ok' ? breaker.value.pausedAt : undefined;
  return {
    queue: queue.status === 'ok' ? queue.value : {},
    ...(reason !== undefined && since !== undefined ? { paused: { since, reason } } : {}),
    damaged: damagedRecords(lease).map((damage) => ({ record: damage.what, problem: damage.reason })),
  };
}

/** One damaged record on the Lease and what repair writes instead (lib/workflow/repair.ts shows and applies it). */
export type AdmissionRepair = RepairAction;

/**
 * The damaged records on the admission Lease, each emptied; all in one write (the Lease is replaced
 * whole, conditional on the version read), which every action applies (the first writes, the rest find
 * it done). Reads only until applied.
 */
export async function planAdmissionRepair(client: KubeClient, namespace: string): Promise<AdmissionRepair[]> {
  const lease = await readAdmissionLease(client, namespace);
  if (!lease) return [];
  const damaged = damagedRecords(lease);
  const annotations = { ...lease.metadata?.annotations };
  for (const record of damaged) Object.assign(annotations, record.emptied);
  let written: Promise<unknown> | undefined;
  const apply = async () => {
    written ??= client.replaceLease(namespace, { ...lease, metadata: { ...lease.metadata, annotations } });
    await written;
  };
  return damaged.map((record) => ({
    record: `${record.what} ${namespace}/${ADMISSION_LEASE}`,
    problem: record.reason,
    current: record.text,
    next: Object.values(record.emptied)[0] ?? '{}',
    notes: [record.note],
    apply,
  }));
}
