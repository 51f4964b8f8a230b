/**
 * The normalised notice every source turns its provider's document into (NTH's model: one folder per
 * event source, each producing this shape; sources read and parse, they never act). The agent and the
 * AWS normaliser turn notices into bus events with lib/sources/clouds/notice-details.ts.
 */

import { type FieldProblem, InvalidInput } from '../../errors/index.ts';
import type { NoticeProvider, NoticeSource } from '../../model/notice.ts';
import { SOURCE_LABELS } from './registry/descriptors.ts';

/** Where a notice is in its life: announced, under way, or over (completed or canceled). */
export const NOTICE_STATUSES = ['scheduled', 'started', 'ended'] as const;
export type NoticeStatus = (typeof NOTICE_STATUSES)[number];

export interface Notice {
  readonly provider: NoticeProvider;
  readonly source: NoticeSource;
  /** The provider's id for the event (Azure EventId, EC2 instance event id, Health event ARN), or one derived from the document where the provider gives none. */
  readonly eventId: string;
  /** The provider's type as written: Reboot, system-reboot, AWS_EC2_INSTANCE_STOP_SCHEDULED, terminate, MIGRATE_ON_HOST_MAINTENANCE, … */
  readonly eventType: string;
  /** The key of the notice policy rule that decides about it (lib/sources/clouds/policy.ts). */
  readonly policyKey: string;
  readonly status: NoticeStatus;
  /** The provider's own status word (Scheduled, active, canceled, upcoming, PENDING, …). */
  readonly providerStatus: string;
  /** When the impact may start (ISO 8601), when the provider says. */
  readonly notBefore?: string;
  /** When the impact is over at the latest (ISO 8601), when the provider says. */
  readonly notAfter?: string;
  /** The provider's description, or one made from the document. */
  readonly description: string;
  /** Azure: the resources (VM or scale-set instance names) the event applies to. */
  readonly resources?: readonly string[];
  /** AWS Health / spot warning: the EC2 instances the event names. */
  readonly instanceIds?: readonly string[];
}

/** A parsed document: its notices, the events in it that could not be read, and its version if it has one. */
export interface ParsedDocument {
  readonly notices: readonly Notice[];
  /**
   * Events of the document that were malformed: each is reported (logged, counted) and publishes
   * nothing. While any is present the document is incomplete, so nothing is taken as having disappeared.
   */
  readonly rejected: readonly NoticeParseError[];
  /** Azure DocumentIncarnation, GCE ETag. */
  readonly version?: string;
}

/** What a document is, for messages: from the clouds' descriptors (descriptors.ts). */
export { SOURCE_LABELS };

/**
 * A provider document (or one event in it) that is malformed or unexpected. Names every bad field; the
 * caller logs it, counts it and publishes nothing for it.
 */
export class NoticeParseError extends InvalidInput {
  readonly source: NoticeSource;
  readonly provider: NoticeProvider;

  constructor(source: NoticeSource, problems: readonly FieldProblem[]) {
    super(`unexpected ${SOURCE_LABELS[source]} document`, problems);
    this.name = 'NoticeParseError';
    this.source = source;
    this.provider = source.split('-')[0] as NoticeProvider;
  }
}

/** JSON text → value; text that is not JSON is a NoticeParseError for `source`. */
export function parseJsonText(source: NoticeSource, text: string): unknown {
  if (text.trim() === '') {
    // A 200 with no body is not one of the documented empty answers ([], {}, Events: [], or 404).
    throw new NoticeParseError(source, [{ path: '', message: 'is empty: unreadable, not "no events"' }]);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new NoticeParseError(source, [{ path: '', message: `is not JSON (${(error as Error).message})` }]);
  }
}

/** A notice's one-line description for logs and the request's reason (at most 1024 characters). */
export function describeNotice(notice: Notice): string {
  const when = notice.notBefore ? ` not before ${notice.notBefore}` : '';
  const text = `${SOURCE_LABELS[notice.source]}: ${notice.eventType} (${notice.providerStatus})${when} — ${notice.description}`;
  return text.length <= 1024 ? text : `${text.slice(0, 1021)}...`;
}
