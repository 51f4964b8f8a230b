/**
 * GCE metadata maintenance notices → notices. Pure. The documents, as documented:
 *  - `instance/maintenance-event`: the text `NONE`, `MIGRATE_ON_HOST_MAINTENANCE` or
 *    `TERMINATE_ON_HOST_MAINTENANCE`; it changes about 60 s before a live migration or a stop for host
 *    maintenance and goes back to `NONE` afterwards. It carries no id and no time: the response's ETag
 *    (which changes with the value) stands in for the id.
 *  - `instance/upcoming-maintenance?alt=json` (VMs with notified maintenance windows):
 *    `{ "can_reschedule": "true", "latest_window_start_time": "2024-12-01T19:00:01Z", "maintenance_reasons": […],
 *       "maintenance_status": "PENDING", "type": "SCHEDULED", "window_end_time": "2024-12-01T21:00:01Z",
 *       "window_start_time": "2024-12-01T19:00:01Z" }`, or `{}` when nothing is scheduled (some VMs answer
 *    `{ "error": "no notifications have been received yet, …" }` or `"NONE"` instead: also nothing).
 *  - `instance/preempted` (Spot and preemptible VMs; "Create and use preemptible VMs", section "Detecting
 *    if a VM was preempted", https://cloud.google.com/compute/docs/instances/create-use-preemptible): the
 *    text `FALSE`, or `TRUE` once Compute Engine has sent the preemption notice (an ACPI G2 Soft Off);
 *    30 s later the VM is stopped (ACPI G3 Mechanical Off) whatever still runs (Compute API
 *    `Scheduling.skipGuestOsShutdown`: "30 seconds for Spot VMs" between the two). Read hanging
 *    (`wait_for_change=true`). No id, no time: the notice counts from when it was first read.
 */
import { z } from 'zod';
import { problemsOf, safeParseReporting } from '../../../bus/contracts/parse.ts';
import { parseRfc3339 } from '../dates.ts';
import { type Notice, NoticeParseError, type ParsedDocument } from '../notice.ts';

export const GCE_MAINTENANCE_EVENTS = ['NONE', 'MIGRATE_ON_HOST_MAINTENANCE', 'TERMINATE_ON_HOST_MAINTENANCE'] as const;
export const GCE_MAINTENANCE_STATUSES = ['PENDING', 'ONGOING'] as const;
export const GCE_MAINTENANCE_TYPES = ['SCHEDULED', 'UNSCHEDULED', 'MULTIPLE'] as const;

/** The maintenance-event value with the response's ETag → at most one notice. */
export function parseGceMaintenanceEvent(value: string, etag: string | undefined): ParsedDocument {
  const source = 'gcp-maintenance-event';
  if (!(GCE_MAINTENANCE_EVENTS as readonly string[]).includes(value)) {
    throw new NoticeParseError(source, [
      { path: '', message: `must be one of ${GCE_MAINTENANCE_EVENTS.join(', ')} (got ${JSON.stringify(value)})` },
    ]);
  }
  if (!etag) throw new NoticeParseError(source, [{ path: 'ETag', message: 'the response has no ETag header' }]);
  if (value === 'NONE') return { notices: [], rejected: [], version: etag };
  const notice: Notice = {
    provider: 'gcp',
    source,
    eventId: `maintenance-event-${etag}`,
    eventType: value,
    policyKey: value,
    status: 'started',
    providerStatus: value,
    description:
      value === 'MIGRATE_ON_HOST_MAINTENANCE'
        ? 'the VM is live-migrated for host maintenance in about 60 s'
        : 'the VM is stopped for host maintenance in about 60 s',
  };
  return { notices: [notice], rejected: [], version: etag };
}

export const GCE_PREEMPTED_VALUES = ['FALSE', 'TRUE'] as const;

/** Seconds from the preemption notice (ACPI G2 Soft Off) to the stop (ACPI G3 Mechanical Off): GCE's documented 30 s. */
export const GCE_PREEMPTION_SECONDS = 30;

/**
 * The preempted value → at most one notice. `noticedAt`: when `TRUE` was first read (the caller keeps
 * it while the value stays `TRUE`): the notice's id, and its deadline 30 s later.
 */
export function parseGcePreempted(value: string, noticedAt: Date): ParsedDocument {
  const source = 'gcp-preempted';
  const text = value.trim();
  if (!(GCE_PREEMPTED_VALUES as readonly string[]).includes(text)) {
    throw new NoticeParseError(source, [
      { path: '', message: `must be one of ${GCE_PREEMPTED_VALUES.join(', ')} (got ${JSON.stringify(value)})` },
    ]);
  }
  if (text === 'FALSE') return { notices: [], rejected: [] };
  const stopsAt = new Date(noticedAt.getTime() + GCE_PREEMPTION_SECONDS * 1000).toISOString();
  const notice: Notice = {
    provider: 'gcp',
    source,
    eventId: `preempted-${noticedAt.toISOString()}`,
    eventType: 'PREEMPTED',
    policyKey: 'preempted',
    status: 'started',
    providerStatus: 'TRUE',
    notBefore: stopsAt,
    description: `the Spot or preemptible VM is preempted: stopped at ${stopsAt} (${GCE_PREEMPTION_SECONDS} s after the notice)`,
  };
  return { notices: [notice], rejected: [] };
}

const oneOf = <T extends readonly [string, ...string[]]>(values: T) =>
  z.enum(values, { error: (issue) => `must be one of ${values.join(', ')} (got ${JSON.stringify(issue.input)})` });
const rfc3339 = z
  .string({ error: 'must be an RFC 3339 time such as "2024-12-01T19:00:01Z"' })
  .refine((text) => parseRfc3339(text) !== undefined, {
    error: 'must be an RFC 3339 time such as "2024-12-01T19:00:01Z"',
  });

const Upcoming = z.looseObject({
  type: oneOf(GCE_MAINTENANCE_TYPES),
  maintenance_status: oneOf(GCE_MAINTENANCE_STATUSES),
  window_start_time: rfc3339,
  window_end_time: rfc3339.optional(),
  latest_window_start_time: rfc3339.optional(),
  can_reschedule: z.union([z.boolean(), z.enum(['true', 'false'])], { error: 'must be true or false' }).optional(),
  maintenance_reasons: z.array(z.string(), { error: 'must be a list of reasons' }).optional(),
});
type Upcoming = z.infer<typeof Upcoming>;

function isNothingScheduled(document: unknown): boolean {
  if (document === 'NONE') return true;
  if (typeof document !== 'object' || document === null || Array.isArray(document)) return false;
  const keys = Object.keys(document);
  return keys.length === 0 || (keys.length === 1 && typeof (document as { error?: unknown }).error === 'string');
}

function upcomingNotice(upcoming: Upcoming): Notice {
  const start = parseRfc3339(upcoming.window_start_time) as string;
  // The window an owner may move (can_reschedule) keeps its latest start: the id stays when the start
  // moves, so a reschedule revises the request (lib/progress/reschedule.ts) instead of ending it.
  const latest = upcoming.latest_window_start_time ? parseRfc3339(upcoming.latest_window_start_time) : undefined;
  const end = upcoming.window_end_time ? parseRfc3339(upcoming.window_end_time) : undefined;
  const reasons = upcoming.maintenance_reasons?.length ? ` (${upcoming.maintenance_reasons.join(', ')})` : '';
  return {
    provider: 'gcp',
    source: 'gcp-upcoming-maintenance',
    eventId: `upcoming-${latest ?? start}`,
    eventType: upcoming.type,
    policyKey: 'upcoming-maintenance',
    status: upcoming.maintenance_status === 'PENDING' ? 'scheduled' : 'started',
    providerStatus: upcoming.maintenance_status,
    notBefore: start,
    ...(end ? { notAfter: end } : {}),
    description: `${upcoming.type.toLowerCase()} host maintenance window from ${start}${end ? ` to ${end}` : ''}${reasons}`,
  };
}

/** The upcoming-maintenance document; `undefined` (404: not offered for this VM) → no notice. */
export function parseGceUpcomingMaintenance(document: unknown): ParsedDocument {
  const source = 'gcp-upcoming-maintenance';
  if (document === undefined || isNothingScheduled(document)) return { notices: [], rejected: [] };
  if (typeof document !== 'object' || document === null || Array.isArray(document)) {
    throw new NoticeParseError(source, [{ path: '', message: 'must be a JSON object' }]);
  }
  const parsed = safeParseReporting(Upcoming, document);
  if (!parsed.success) throw new NoticeParseError(source, problemsOf(parsed.error));
  const notice = upcomingNotice(parsed.data);
  if (notice.notAfter && notice.notBefore && notice.notAfter < notice.notBefore) {
    throw new NoticeParseError(source, [{ path: 'window_end_time', message: 'is before window_start_time' }]);
  }
  return { notices: [notice], rejected: [] };
}
