/**
 * EC2 instance metadata notices → notices. Pure. The documents, as documented:
 *  - `/latest/meta-data/events/maintenance/scheduled`: a JSON list of
 *    `{ "NotBefore": "21 Jan 2019 09:00:43 GMT", "Code": "system-reboot", "Description": "scheduled reboot",
 *       "EventId": "instance-event-0d59937288b749b32", "NotAfter": "21 Jan 2019 09:17:23 GMT", "State": "active" }`
 *    with Code one of instance-reboot, system-reboot, system-maintenance, instance-retirement,
 *    instance-stop, and State active, completed or canceled (completed and canceled events stay listed).
 *    NotAfter is optional (AWS leaves it out for events without an end, e.g. an instance-stop on degraded
 *    hardware) and has been seen as `""` (AWS Node Termination Handler #147, PR #182): both mean no end.
 *    Dates are read in the IMDS form and also as RFC 3339 (the form AWS's EC2 metadata mock takes them in);
 *  - `/latest/meta-data/spot/instance-action` (404 until an interruption is scheduled):
 *    `{ "action": "terminate", "time": "2017-09-18T08:22:00Z" }`, action terminate, stop or hibernate,
 *    about two minutes ahead;
 *  - `/latest/meta-data/events/recommendations/rebalance` (404 until one is issued):
 *    `{ "noticeTime": "2020-10-27T08:22:00Z" }`, the time the recommendation was issued.
 */
import { z } from 'zod';
import { problemsOf, safeParseReporting } from '../../../bus/contracts/parse.ts';
import { type DateForm, describeDateForms, parseDateIn, parseRfc3339 } from '../dates.ts';
import { type Notice, NoticeParseError, type ParsedDocument } from '../notice.ts';

export const EC2_EVENT_CODES = [
  'instance-reboot',
  'system-reboot',
  'system-maintenance',
  'instance-retirement',
  'instance-stop',
] as const;
export const EC2_EVENT_STATES = ['active', 'completed', 'canceled'] as const;
export const SPOT_ACTIONS = ['terminate', 'stop', 'hibernate'] as const;

const oneOf = <T extends readonly [string, ...string[]]>(values: T) =>
  z.enum(values, { error: (issue) => `must be one of ${values.join(', ')} (got ${JSON.stringify(issue.input)})` });
/** The IMDS form as documented, and RFC 3339. */
const SCHEDULED_DATE_FORMS: readonly DateForm[] = ['ec2-imds', 'rfc3339'];
const SCHEDULED_DATE_MESSAGE = `must be ${describeDateForms(SCHEDULED_DATE_FORMS)}`;
const readScheduledDate = (text: string) => parseDateIn(text, SCHEDULED_DATE_FORMS);
const imdsDate = z
  .string({ error: SCHEDULED_DATE_MESSAGE })
  .refine((text) => readScheduledDate(text) !== undefined, { error: SCHEDULED_DATE_MESSAGE });
/** `""` is no end, as an absent NotAfter. */
const imdsEndDate = z
  .string({ error: `${SCHEDULED_DATE_MESSAGE}, or ""` })
  .refine((text) => text === '' || readScheduledDate(text) !== undefined, {
    error: `${SCHEDULED_DATE_MESSAGE}, or ""`,
  });
const rfc3339 = z
  .string({ error: 'must be an RFC 3339 time such as "2017-09-18T08:22:00Z"' })
  .refine((text) => parseRfc3339(text) !== undefined, {
    error: 'must be an RFC 3339 time such as "2017-09-18T08:22:00Z"',
  });

const ScheduledEvent = z.looseObject({
  Code: oneOf(EC2_EVENT_CODES),
  EventId: z.string({ error: 'must be a string' }).min(1, 'must not be empty').max(256),
  State: oneOf(EC2_EVENT_STATES),
  NotBefore: imdsDate,
  NotAfter: imdsEndDate.optional(),
  Description: z.string({ error: 'must be a string' }).optional(),
});
type ScheduledEvent = z.infer<typeof ScheduledEvent>;

function scheduledNotice(event: ScheduledEvent): Notice {
  const notBefore = readScheduledDate(event.NotBefore);
  const notAfter = event.NotAfter ? readScheduledDate(event.NotAfter) : undefined;
  return {
    provider: 'aws',
    source: 'aws-scheduled-events',
    eventId: event.EventId,
    eventType: event.Code,
    policyKey: event.Code,
    status: event.State === 'active' ? 'scheduled' : 'ended',
    providerStatus: event.State,
    ...(notBefore ? { notBefore } : {}),
    ...(notAfter ? { notAfter } : {}),
    description: event.Description || event.Code,
  };
}

function parseScheduledEvent(raw: unknown, index: number, repeated: ReadonlySet<string>): Notice | NoticeParseError {
  const parsed = safeParseReporting(ScheduledEvent, raw);
  if (!parsed.success) return new NoticeParseError('aws-scheduled-events', problemsOf(parsed.error, `[${index}]`));
  // Two events with one id: neither can be trusted to be the real one.
  if (repeated.has(parsed.data.EventId)) {
    return new NoticeParseError('aws-scheduled-events', [
      { path: `[${index}].EventId`, message: 'is listed twice in the document' },
    ]);
  }
  const notice = scheduledNotice(parsed.data);
  if (notice.notAfter && notice.notBefore && notice.notAfter < notice.notBefore) {
    return new NoticeParseError('aws-scheduled-events', [
      { path: `[${index}].NotAfter`, message: 'is before NotBefore' },
    ]);
  }
  return notice;
}

function repeatedIds(events: readonly unknown[]): Set<string> {
  const ids = events
    .map((event) => (event as { EventId?: unknown } | null)?.EventId)
    .filter((id) => typeof id === 'string');
  return new Set(ids.filter((id, index) => ids.indexOf(id) !== index));
}

/** The scheduled events of `events/maintenance/scheduled`; anything but a list throws NoticeParseError. */
export function parseEc2ScheduledEvents(document: unknown): ParsedDocument {
  if (!Array.isArray(document)) {
    throw new NoticeParseError('aws-scheduled-events', [{ path: '', message: 'must be a JSON list of events' }]);
  }
  const repeated = repeatedIds(document);
  const results = document.map((raw, index) => parseScheduledEvent(raw, index, repeated));
  return {
    notices: results.filter((r): r is Notice => !(r instanceof NoticeParseError)),
    rejected: results.filter((r): r is NoticeParseError => r instanceof NoticeParseError),
  };
}

const InstanceAction = z.looseObject({ action: oneOf(SPOT_ACTIONS), time: rfc3339 });

function objectOrThrow(source: Notice['source'], document: unknown): void {
  if (typeof document !== 'object' || document === null || Array.isArray(document)) {
    throw new NoticeParseError(source, [{ path: '', message: 'must be a JSON object' }]);
  }
}

/** The spot interruption notice (`spot/instance-action`); `undefined` document (404) → no notice. */
export function parseSpotInstanceAction(document: unknown): ParsedDocument {
  if (document === undefined) return { notices: [], rejected: [] };
  objectOrThrow('aws-spot-instance-action', document);
  const parsed = safeParseReporting(InstanceAction, document);
  if (!parsed.success) throw new NoticeParseError('aws-spot-instance-action', problemsOf(parsed.error));
  const time = parseRfc3339(parsed.data.time) as string;
  const notice: Notice = {
    provider: 'aws',
    source: 'aws-spot-instance-action',
    eventId: `instance-action-${parsed.data.action}-${time}`,
    eventType: parsed.data.action,
    policyKey: 'spot-interruption',
    status: 'scheduled',
    providerStatus: parsed.data.action,
    notBefore: time,
    description: `spot instance interruption: ${parsed.data.action} at ${time}`,
  };
  return { notices: [notice], rejected: [] };
}

const Rebalance = z.looseObject({ noticeTime: rfc3339 });

/** The rebalance recommendation (`events/recommendations/rebalance`); `undefined` (404) → no notice. */
export function parseRebalanceRecommendation(document: unknown): ParsedDocument {
  if (document === undefined) return { notices: [], rejected: [] };
  objectOrThrow('aws-rebalance-recommendation', document);
  const parsed = safeParseReporting(Rebalance, document);
  if (!parsed.success) throw new NoticeParseError('aws-rebalance-recommendation', problemsOf(parsed.error));
  const issued = parseRfc3339(parsed.data.noticeTime) as string;
  const notice: Notice = {
    provider: 'aws',
    source: 'aws-rebalance-recommendation',
    eventId: `rebalance-${issued}`,
    eventType: 'rebalance-recommendation',
    policyKey: 'rebalance-recommendation',
    status: 'scheduled',
    providerStatus: 'issued',
    description: `EC2 rebalance recommendation issued at ${issued}: an interruption is likely soon`,
  };
  return { notices: [notice], rejected: [] };
}
