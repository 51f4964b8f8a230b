/**
 * ECS active system events (`/latest/maintenance/active-system-events`), one JSON list of events, each with
 * the fields ECS documents for a system event (instance event notifications, `content`):
 *
 *   [{ "eventId": "e-bp11trd********pqum2", "publishTime": "2019-04-09T04:18:26Z",
 *      "notBefore": "2019-04-12T01:01:01Z", "instanceId": "i-bp1ecr********5go2go",
 *      "eventType": "SystemMaintenance.Reboot", "eventStatus": "Scheduled" }]
 *
 * `[]` and a 404 are "no events". Scheduled, Executing and Inquiring events are active; Avoided, Executed,
 * Canceled and Failed are over. One event that cannot be read is rejected on its own, naming its field.
 */
import { z } from 'zod';
import { problemsOf, safeParseReporting } from '../../../bus/contracts/parse.ts';
import { parseRfc3339 } from '../dates.ts';
import { type Notice, NoticeParseError, type NoticeStatus, type ParsedDocument } from '../notice.ts';
import { ECS_EVENT_TYPES } from './descriptor.ts';

const SOURCE = 'alibaba-system-events';

/** DescribeInstanceHistoryEvents' lifecycle statuses, and what each means for a request. */
export const ECS_EVENT_STATUSES: Readonly<Record<string, NoticeStatus>> = Object.freeze({
  Scheduled: 'scheduled',
  Inquiring: 'scheduled',
  Executing: 'started',
  Avoided: 'ended',
  Executed: 'ended',
  Canceled: 'ended',
  Failed: 'ended',
});

const oneOf = <T extends readonly [string, ...string[]]>(values: T) =>
  z.enum(values, { error: (issue) => `must be one of ${values.join(', ')} (got ${JSON.stringify(issue.input)})` });

const ISO_MESSAGE = 'must be an ISO 8601 UTC time such as "2019-04-12T01:01:01Z"';
const iso = z.string({ error: ISO_MESSAGE }).refine((text) => parseRfc3339(text) !== undefined, { error: ISO_MESSAGE });

const SystemEvent = z.looseObject({
  eventId: z.string({ error: 'must be a string' }).min(1, 'must not be empty').max(128),
  eventType: oneOf(ECS_EVENT_TYPES),
  eventStatus: oneOf(Object.keys(ECS_EVENT_STATUSES) as [string, ...string[]]),
  notBefore: iso,
  instanceId: z.string({ error: 'must be a string' }).optional(),
  publishTime: iso.optional(),
});
type SystemEvent = z.infer<typeof SystemEvent>;

function noticeOf(event: SystemEvent): Notice {
  return {
    provider: 'alibaba',
    source: SOURCE,
    eventId: event.eventId,
    eventType: event.eventType,
    policyKey: event.eventType,
    status: ECS_EVENT_STATUSES[event.eventStatus] ?? 'scheduled',
    providerStatus: event.eventStatus,
    notBefore: parseRfc3339(event.notBefore) as string,
    description: `${event.eventType} of ${event.instanceId ?? 'this instance'}`,
  };
}

function parseEvent(raw: unknown, index: number, repeated: ReadonlySet<unknown>): Notice | NoticeParseError {
  const parsed = safeParseReporting(SystemEvent, raw);
  if (!parsed.success) return new NoticeParseError(SOURCE, problemsOf(parsed.error, `[${index}]`));
  if (repeated.has(parsed.data.eventId)) {
    return new NoticeParseError(SOURCE, [{ path: `[${index}].eventId`, message: 'is listed twice in the document' }]);
  }
  return noticeOf(parsed.data);
}

/** The active system events; `undefined` (404) → none; anything but a list throws NoticeParseError. */
export function parseEcsSystemEvents(document: unknown): ParsedDocument {
  if (document === undefined) return { notices: [], rejected: [] };
  if (!Array.isArray(document))
    throw new NoticeParseError(SOURCE, [{ path: '', message: 'must be a JSON list of events' }]);
  const ids = document.map((event) => (event as { eventId?: unknown } | null)?.eventId);
  const repeated = new Set(ids.filter((id, index) => typeof id === 'string' && ids.indexOf(id) !== index));
  const results = document.map((raw, index) => parseEvent(raw, index, repeated));
  return {
    notices: results.filter((r): r is Notice => !(r instanceof NoticeParseError)),
    rejected: results.filter((r): r is NoticeParseError => r instanceof NoticeParseError),
  };
}
