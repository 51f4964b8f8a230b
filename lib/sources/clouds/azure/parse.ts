/**
 * Azure Scheduled Events (IMDS `/metadata/scheduledevents`, api-version 2020-07-01) → notices. Pure.
 *
 * The document, as documented:
 *   { "DocumentIncarnation": 2, "Events": [ { "EventId": "C7061BAC-…", "EventStatus": "Scheduled",
 *     "EventType": "Freeze", "ResourceType": "VirtualMachine", "Resources": ["WestNO_0", "WestNO_1"],
 *     "NotBefore": "Mon, 11 Apr 2026 22:26:58 GMT", "Description": "…", "EventSource": "Platform",
 *     "DurationInSeconds": 5 } ] }
 * `NotBefore` is an RFC 1123 date (the day in one or two digits), or "" once the event has started;
 * Microsoft's own Scheduled Events mock server (github.com/Azure-Samples/scheduled-events-mock-server,
 * the tool its docs point testers to) writes ISO 8601 instead (`2025-07-01T10:15:00Z`), so both are
 * read. There is no completed status: an
 * event that is over (or was cancelled by Azure) is no longer listed. A malformed event is rejected on
 * its own; a malformed document (no incarnation, no event list) is rejected whole.
 */
import { z } from 'zod';
import { problemsOf, safeParseReporting } from '../../../bus/contracts/parse.ts';
import type { FieldProblem } from '../../../errors/index.ts';
import { type DateForm, describeDateForms, parseDateIn } from '../dates.ts';
import { type Notice, NoticeParseError, type ParsedDocument } from '../notice.ts';

export const AZURE_EVENT_TYPES = ['Freeze', 'Reboot', 'Redeploy', 'Preempt', 'Terminate'] as const;
export const AZURE_EVENT_STATUSES = ['Scheduled', 'Started'] as const;
const SOURCE = 'azure-scheduled-events';
/** RFC 1123 as Azure's IMDS documents it; RFC 3339 as Microsoft's mock server writes it. */
const NOT_BEFORE_FORMS: readonly DateForm[] = ['rfc1123', 'rfc3339'];
const NOT_BEFORE_MESSAGE = `must be ${describeDateForms(NOT_BEFORE_FORMS)}, or ""`;

const oneOf = <T extends readonly [string, ...string[]]>(values: T) =>
  z.enum(values, { error: (issue) => `must be one of ${values.join(', ')} (got ${JSON.stringify(issue.input)})` });

const Document = z.looseObject({
  DocumentIncarnation: z
    .number({ error: 'must be a whole number' })
    .int('must be a whole number')
    .min(0, 'must not be negative'),
  Events: z.array(z.unknown(), { error: 'must be a list of events' }),
});

const AzureEvent = z.looseObject({
  EventId: z.string({ error: 'must be a string' }).min(1, 'must not be empty').max(256),
  EventType: oneOf(AZURE_EVENT_TYPES),
  ResourceType: z.literal('VirtualMachine', { error: 'must be VirtualMachine' }),
  Resources: z
    .array(z.string({ error: 'must be a resource name' }).min(1, 'must not be empty'), {
      error: 'must be a list of resource names',
    })
    .min(1, 'must name at least one resource'),
  EventStatus: oneOf(AZURE_EVENT_STATUSES),
  NotBefore: z
    .string({ error: NOT_BEFORE_MESSAGE })
    .refine((text) => text === '' || parseDateIn(text, NOT_BEFORE_FORMS) !== undefined, {
      error: NOT_BEFORE_MESSAGE,
    }),
  Description: z.string({ error: 'must be a string' }).optional(),
  EventSource: oneOf(['Platform', 'User']).optional(),
  DurationInSeconds: z.number({ error: 'must be a number' }).int('must be a whole number').min(-1).optional(),
});
type AzureEvent = z.infer<typeof AzureEvent>;

function describe(event: AzureEvent): string {
  const parts = [event.Description || `${event.EventType} of ${event.Resources.join(', ')}`];
  if (event.EventSource) parts.push(`initiated by ${event.EventSource}`);
  if (event.DurationInSeconds !== undefined && event.DurationInSeconds >= 0) {
    parts.push(`impact ${event.DurationInSeconds} s`);
  }
  return parts.join('; ');
}

function toNotice(event: AzureEvent): Notice {
  const notBefore = event.NotBefore === '' ? undefined : parseDateIn(event.NotBefore, NOT_BEFORE_FORMS);
  return {
    provider: 'azure',
    source: SOURCE,
    eventId: event.EventId,
    eventType: event.EventType,
    policyKey: event.EventType,
    status: event.EventStatus === 'Scheduled' ? 'scheduled' : 'started',
    providerStatus: event.EventStatus,
    ...(notBefore ? { notBefore } : {}),
    description: describe(event),
    resources: [...event.Resources],
  };
}

function parseEvent(raw: unknown, index: number, repeated: ReadonlySet<string>): Notice | NoticeParseError {
  const parsed = safeParseReporting(AzureEvent, raw);
  if (!parsed.success) return new NoticeParseError(SOURCE, problemsOf(parsed.error, `Events[${index}]`));
  // Two events with one id: neither can be trusted to be the real one.
  if (repeated.has(parsed.data.EventId.toLowerCase())) {
    const problem: FieldProblem = { path: `Events[${index}].EventId`, message: 'is listed twice in the document' };
    return new NoticeParseError(SOURCE, [problem]);
  }
  return toNotice(parsed.data);
}

function repeatedIds(events: readonly unknown[]): Set<string> {
  const seen = new Set<string>();
  const repeated = new Set<string>();
  for (const event of events) {
    const id = (event as { EventId?: unknown } | null)?.EventId;
    if (typeof id !== 'string') continue;
    if (seen.has(id.toLowerCase())) repeated.add(id.toLowerCase());
    seen.add(id.toLowerCase());
  }
  return repeated;
}

/** The notices of a Scheduled Events document; a document that is not one throws NoticeParseError. */
export function parseAzureScheduledEvents(document: unknown): ParsedDocument {
  if (typeof document !== 'object' || document === null || Array.isArray(document)) {
    throw new NoticeParseError(SOURCE, [{ path: '', message: 'must be a JSON object' }]);
  }
  const parsed = safeParseReporting(Document, document);
  if (!parsed.success) throw new NoticeParseError(SOURCE, problemsOf(parsed.error));
  const repeated = repeatedIds(parsed.data.Events);
  const results = parsed.data.Events.map((raw, index) => parseEvent(raw, index, repeated));
  return {
    notices: results.filter((r): r is Notice => !(r instanceof NoticeParseError)),
    rejected: results.filter((r): r is NoticeParseError => r instanceof NoticeParseError),
    version: String(parsed.data.DocumentIncarnation),
  };
}
