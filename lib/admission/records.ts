/**
 * The admission Lease's records and their codec: the waiting queue, the nodes admission has seen held,
 * and the admissions in flight, each a JSON annotation on the Lease `drainbridge-admission`. The only
 * module that names the annotations or parses them (a dependency-cruiser rule keeps it so): everything
 * else reads the Lease through lib/admission's facade (index.ts).
 */
import type { V1Lease } from '@kubernetes/client-node';
import { z } from 'zod';
import { RecordUnreadable } from '../errors/index.ts';
import { type RecordFormat, readJsonRecord, writeJsonRecord } from '../util/json-record.ts';
import { type BreakerRecord, NO_BREAKER_RECORD } from './breaker.ts';
import type { AdmissionQueue } from './decision.ts';
import type { Intents } from './intents.ts';

export const ADMISSION_LEASE = 'drainbridge-admission';
export const QUEUE_ANNOTATION = 'drainbridge.io/admission-queue';
export const INTENTS_ANNOTATION = 'drainbridge.io/admissions-in-flight';
export const BREAKER_ANNOTATION = 'drainbridge.io/admission-breaker';

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
export function readAdmitted(lease: V1Lease | undefined): string[] | 'unreadable' {
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
        why: z.string().optional(),
        whyAt: z.iso.datetime({ offset: true }).optional(),
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

export const INTENTS_FORMAT: RecordFormat<Intents> = {
  what: `admissions in flight (Lease annotation ${INTENTS_ANNOTATION})`,
  versions: [
    z.record(
      z.string(),
      z.looseObject({
        node: z.string().min(1),
        since: z.iso.datetime({ offset: true }),
        requester: z.string().min(1).optional(),
      }),
    ),
  ],
};

/** The intents on the Lease; unreadable is RecordUnreadable (never "none in flight"). */
export function readIntents(lease: V1Lease | undefined, nodeName?: string): Intents {
  const read = readJsonRecord(lease?.metadata?.annotations?.[INTENTS_ANNOTATION], INTENTS_FORMAT);
  if (read.status === 'ok') return read.value;
  if (read.status === 'absent') return {};
  throw new RecordUnreadable({ what: INTENTS_FORMAT.what, reason: read.reason, ...(nodeName ? { nodeName } : {}) });
}

const failureSchema = z.looseObject({
  at: z.iso.datetime({ offset: true }),
  requestId: z.string().min(1),
  node: z.string().min(1),
  error: z.string().min(1),
});

export const BREAKER_FORMAT: RecordFormat<BreakerRecord> = {
  what: `circuit breaker (Lease annotation ${BREAKER_ANNOTATION})`,
  versions: [
    z.looseObject({
      failures: z.array(failureSchema),
      pausedAt: z.iso.datetime({ offset: true }).optional(),
      reason: z.string().optional(),
      resumedAt: z.iso.datetime({ offset: true }).optional(),
      resumedBy: z.string().optional(),
      resumedFrom: z.looseObject({ pausedAt: z.iso.datetime({ offset: true }), reason: z.string() }).optional(),
      resumeAnnounced: z.boolean().optional(),
    }),
  ],
};

/**
 * The breaker's record; unreadable, it stops admission (RecordUnreadable, naming the record): a pause
 * nobody can read must not be read as "not paused". `drainbridge repair` empties it.
 */
export function readBreaker(lease: V1Lease | undefined, nodeName?: string): BreakerRecord {
  const read = readJsonRecord(lease?.metadata?.annotations?.[BREAKER_ANNOTATION], BREAKER_FORMAT);
  if (read.status === 'ok') return read.value;
  if (read.status === 'absent') return NO_BREAKER_RECORD;
  throw new RecordUnreadable({ what: BREAKER_FORMAT.what, reason: read.reason, ...(nodeName ? { nodeName } : {}) });
}

/** The records an edit of the Lease writes; those not given stay as they are. */
export interface LeaseRecords {
  readonly queue?: AdmissionQueue;
  readonly intents?: Intents;
  readonly admittedNodes?: readonly string[];
  readonly breaker?: BreakerRecord;
}

/** The annotations that hold `records`, to lay over the Lease's own. */
export function recordAnnotations(records: LeaseRecords): Record<string, string> {
  const annotations: Record<string, string> = {};
  if (records.queue) annotations[QUEUE_ANNOTATION] = writeJsonRecord(records.queue, ADMISSION_QUEUE_FORMAT);
  if (records.admittedNodes) {
    annotations[ADMITTED_ANNOTATION] = writeJsonRecord([...records.admittedNodes].sort(), ADMITTED_FORMAT);
  }
  if (records.intents) annotations[INTENTS_ANNOTATION] = writeJsonRecord(records.intents, INTENTS_FORMAT);
  if (records.breaker) annotations[BREAKER_ANNOTATION] = writeJsonRecord(records.breaker, BREAKER_FORMAT);
  return annotations;
}

/** One record on the Lease that cannot be read: what it is, why, and its text. */
export interface DamagedRecord {
  readonly what: string;
  readonly reason: string;
  readonly text: string;
  /** What emptying it means, for the operator reading the repair plan. */
  readonly note: string;
  /** The annotations that replace it with an empty record (what `drainbridge repair` writes). */
  readonly emptied: Record<string, string>;
}

/**
 * The records on the Lease that cannot be read (the queue and the admissions in flight: the admitted
 * nodes heal themselves, a damaged copy only makes admission read every node).
 */
export function damagedRecords(lease: V1Lease | undefined): DamagedRecord[] {
  const annotations = lease?.metadata?.annotations;
  const records = [
    {
      annotation: QUEUE_ANNOTATION,
      format: ADMISSION_QUEUE_FORMAT as RecordFormat<unknown>,
      note: 'the queue is emptied: every waiting request takes its place again at its next retry (within 30 s)',
      empty: '{}',
    },
    {
      annotation: INTENTS_ANNOTATION,
      format: INTENTS_FORMAT as RecordFormat<unknown>,
      note: 'emptied: a hold still being written lands in a ledger, where admission counts it',
      empty: '{}',
    },
    {
      annotation: BREAKER_ANNOTATION,
      format: BREAKER_FORMAT as RecordFormat<unknown>,
      note: 'emptied: admission is no longer paused and the failures it counted are forgotten',
      empty: JSON.stringify(NO_BREAKER_RECORD),
    },
  ];
  return records.flatMap(({ annotation, format, note, empty }) => {
    const text = annotations?.[annotation];
    const read = readJsonRecord(text, format);
    if (read.status !== 'unreadable') return [];
    return [{ what: format.what, reason: read.reason, text: text ?? '', note, emptied: { [annotation]: empty } }];
  });
}
