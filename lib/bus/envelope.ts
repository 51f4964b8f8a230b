/**
 * PutEvents entries in, EventBridge events out: checks each entry as PutEvents does (a bad entry
 * fails alone, with an ErrorCode, while the others are accepted) and builds the envelope every
 * target and pattern sees.
 */
import { randomUUID } from 'node:crypto';
import { isPlainObject } from './pattern/operators.ts';

/** One PutEvents entry (the SDK's field names). */
export interface PutEventsEntry {
  readonly Source?: string;
  readonly DetailType?: string;
  /** JSON text of an object. */
  readonly Detail?: string;
  /** Name or ARN; PutEvents sends entries without one to the account's `default` bus. */
  readonly EventBusName?: string;
  readonly Resources?: readonly string[];
  readonly Time?: Date | string;
}

/** The EventBridge event as rules and targets see it. */
export interface BusEnvelope {
  readonly version: '0';
  readonly id: string;
  readonly 'detail-type': string;
  readonly source: string;
  readonly account: string;
  readonly time: string;
  readonly region: string;
  readonly resources: readonly string[];
  readonly detail: Record<string, unknown>;
}

/** Where the envelope is built: the bus's identity and clock. */
export interface EnvelopeContext {
  readonly account: string;
  readonly region: string;
  readonly now: Date;
  readonly newId?: () => string;
}

/** An entry PutEvents refuses, with the code it would report. */
export interface EntryRefusal {
  readonly ErrorCode: string;
  readonly ErrorMessage: string;
}

const refuse = (ErrorCode: string, ErrorMessage: string): EntryRefusal => ({ ErrorCode, ErrorMessage });

/** EventBridge's time format: ISO 8601 to the second. */
export function eventTime(time: Date): string {
  return `${time.toISOString().slice(0, 19)}Z`;
}

function readTime(time: Date | string | undefined, now: Date): Date | undefined {
  if (time === undefined) return now;
  const parsed = time instanceof Date ? time : new Date(time);
  return Number.isNaN(parsed.getTime()) ? undefined : parsed;
}

function parseDetail(detail: string | undefined): Record<string, unknown> | undefined {
  if (typeof detail !== 'string') return undefined;
  try {
    const parsed: unknown = JSON.parse(detail);
    return isPlainObject(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

function hasText(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0;
}

/** Builds the envelope for `entry`, or says why PutEvents would refuse it. */
export function toEnvelope(entry: PutEventsEntry, context: EnvelopeContext): BusEnvelope | EntryRefusal {
  if (!hasText(entry.Source))
    return refuse('InvalidArgument', 'Parameter Source is not valid. Reason: Source is a required argument.');
  if (entry.Source.startsWith('aws.')) {
    return refuse(
      'NotAuthorizedForSourceException',
      `Not authorized for the source "${entry.Source}" (aws.* is reserved).`,
    );
  }
  if (!hasText(entry.DetailType)) {
    return refuse('InvalidArgument', 'Parameter DetailType is not valid. Reason: DetailType is a required argument.');
  }
  const detail = parseDetail(entry.Detail);
  if (!detail) return refuse('MalformedDetail', 'Detail is malformed: it must be the JSON text of an object.');
  const time = readTime(entry.Time, context.now);
  if (!time) return refuse('InvalidArgument', `Parameter Time is not valid: ${String(entry.Time)}.`);
  const resources = entry.Resources ?? [];
  if (!resources.every(hasText)) return refuse('InvalidArgument', 'Parameter Resources must hold non-empty strings.');
  return {
    version: '0',
    id: (context.newId ?? randomUUID)(),
    'detail-type': entry.DetailType,
    source: entry.Source,
    account: context.account,
    time: eventTime(time),
    region: context.region,
    resources: [...resources],
    detail,
  };
}

/** Whether `result` is an envelope rather than a refusal. */
export function isEnvelope(result: BusEnvelope | EntryRefusal): result is BusEnvelope {
  return 'id' in result;
}
