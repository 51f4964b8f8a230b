/**
 * The owner claim on an Evacuation record (annotation drainbridge.io/owner) and its codec: the only module
 * that names the annotation or parses it. lib/workflow/ownership.ts decides who owns a request and is the
 * one module that uses this (a dependency-cruiser rule); status and repair ask it.
 */
import { z } from 'zod';
import type { EvacuationObject } from '../clients/kube/paths.ts';
import { RecordUnreadable } from '../errors/index.ts';
import { type RecordFormat, readJsonRecord, writeJsonRecord } from '../util/json-record.ts';

export const OWNER_ANNOTATION = 'drainbridge.io/owner';

/** Who runs a request's evacuation, and when it last said so (ISO 8601). */
export interface Owner {
  readonly executionId: string;
  readonly seen: string;
  /**
   * The process that runs it, `pid@host`, for an execution embedded in a drainbridge process; absent on
   * AWS, where the execution's ARN names it.
   */
  readonly driver?: string | undefined;
  /**
   * When the execution handed the request back (Ctrl-C): the mark stays, so that `drainbridge status`
   * can say who drove the request last and since when nobody does, but it claims nothing any more.
   */
  readonly released?: string | undefined;
}

/** The owner claim as executions write it (extra fields are dropped: the claim is rewritten whole). */
export const OWNER_FORMAT: RecordFormat<Owner> = {
  what: `owner claim (Evacuation annotation ${OWNER_ANNOTATION})`,
  versions: [
    z.object({
      executionId: z.string().min(1),
      seen: z.iso.datetime({ offset: true }),
      driver: z.string().min(1).optional(),
      released: z.iso.datetime({ offset: true }).optional(),
    }),
  ],
};

/**
 * The owner recorded on the Evacuation record, or undefined when none is. An unreadable claim throws
 * RecordUnreadable rather than reading as "no owner": another execution may be running the request, and
 * claiming it would let two evict side by side. `drainbridge repair` clears it.
 */
export function readOwner(record: EvacuationObject): Owner | undefined {
  const read = readJsonRecord(record.metadata.annotations?.[OWNER_ANNOTATION], OWNER_FORMAT);
  if (read.status === 'ok') return read.value;
  if (read.status === 'absent') return undefined;
  throw new RecordUnreadable({ what: OWNER_FORMAT.what, reason: read.reason, nodeName: record.spec.nodeName });
}

/** The record with `owner` as its claim, or with no claim (undefined). */
export function withOwner(record: EvacuationObject, owner: Owner | undefined): EvacuationObject {
  const annotations = { ...record.metadata.annotations };
  if (owner) annotations[OWNER_ANNOTATION] = writeJsonRecord(owner, OWNER_FORMAT);
  else delete annotations[OWNER_ANNOTATION];
  return { ...record, metadata: { ...record.metadata, annotations } };
}

/** The record's owner claim when it cannot be read: what it is, why, and its text; undefined when it can. */
export function damagedOwner(record: EvacuationObject): { what: string; reason: string; text: string } | undefined {
  const text = record.metadata.annotations?.[OWNER_ANNOTATION];
  const read = readJsonRecord(text, OWNER_FORMAT);
  if (read.status !== 'unreadable') return undefined;
  return { what: `${OWNER_FORMAT.what} of Evacuation ${record.metadata.name}`, reason: read.reason, text: text ?? '' };
}
