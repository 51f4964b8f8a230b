/**
 * Malformed and unexpected provider documents, each with the field its refusal must name. Shared by the
 * parser tests (each refused on its own) and the agent tests (each served by a fake metadata server:
 * nothing published, one parse error counted).
 */
import type { NoticeSource } from '../../../lib/model/notice.ts';

export interface MalformedCase {
  readonly name: string;
  readonly source: NoticeSource;
  /** The document as served (text, exactly as the metadata service would send it). */
  readonly body: string;
  /** Text the NoticeParseError's message must contain (the field and what is wrong). */
  readonly names: string;
}

const azureEvent = {
  EventId: '602d9444-d2cd-49c7-8624-8643e7171297',
  EventStatus: 'Scheduled',
  EventType: 'Reboot',
  ResourceType: 'VirtualMachine',
  Resources: ['vm-0'],
  NotBefore: 'Mon, 19 Sep 2016 18:29:47 GMT',
  Description: 'Host server is undergoing maintenance.',
  EventSource: 'Platform',
  DurationInSeconds: 9,
};
const azure = (events: unknown[], incarnation: unknown = 7) =>
  JSON.stringify({ DocumentIncarnation: incarnation, Events: events });
const azureWith = (change: Record<string, unknown>) => azure([{ ...azureEvent, ...change }]);
const without = <T extends Record<string, unknown>>(object: T, key: keyof T) => {
  const copy: Record<string, unknown> = { ...object };
  delete copy[key as string];
  return copy;
};

const ec2Event = {
  NotBefore: '21 Jan 2019 09:00:43 GMT',
  Code: 'system-reboot',
  Description: 'scheduled reboot',
  EventId: 'instance-event-0d59937288b749b32',
  NotAfter: '21 Jan 2019 09:17:23 GMT',
  State: 'active',
};
const ec2With = (change: Record<string, unknown>) => JSON.stringify([{ ...ec2Event, ...change }]);

const upcoming = {
  maintenance_status: 'PENDING',
  type: 'SCHEDULED',
  window_start_time: '2024-12-01T19:00:01Z',
  window_end_time: '2024-12-01T21:00:01Z',
};
const upcomingWith = (change: Record<string, unknown>) => JSON.stringify({ ...upcoming, ...change });

export const MALFORMED: readonly MalformedCase[] = [
  // Azure Scheduled Events
  { name: 'Azure: not JSON', source: 'azure-scheduled-events', body: '<html>proxy error</html>', names: 'is not JSON' },
  {
    name: 'Azure: 200 with an empty body (no events are "Events": [])',
    source: 'azure-scheduled-events',
    body: '',
    names: 'is empty: unreadable, not "no events"',
  },
  {
    name: 'Azure: a list, not a document',
    source: 'azure-scheduled-events',
    body: '[]',
    names: 'must be a JSON object',
  },
  {
    name: 'Azure: no DocumentIncarnation',
    source: 'azure-scheduled-events',
    body: JSON.stringify({ Events: [] }),
    names: 'DocumentIncarnation: is required',
  },
  {
    name: 'Azure: DocumentIncarnation not a number',
    source: 'azure-scheduled-events',
    body: azure([], '7'),
    names: 'DocumentIncarnation: must be a whole number',
  },
  {
    name: 'Azure: Events not a list',
    source: 'azure-scheduled-events',
    body: JSON.stringify({ DocumentIncarnation: 1, Events: {} }),
    names: 'Events: must be a list of events',
  },
  {
    name: 'Azure: unknown EventType',
    source: 'azure-scheduled-events',
    body: azureWith({ EventType: 'Explode' }),
    names: 'Events[0].EventType: must be one of Freeze, Reboot, Redeploy, Preempt, Terminate (got "Explode")',
  },
  {
    name: 'Azure: unknown EventStatus',
    source: 'azure-scheduled-events',
    body: azureWith({ EventStatus: 'Completed' }),
    names: 'Events[0].EventStatus: must be one of Scheduled, Started',
  },
  {
    name: 'Azure: NotBefore in ISO 8601 without an offset (names no instant)',
    source: 'azure-scheduled-events',
    body: azureWith({ NotBefore: '2016-09-19T18:29:47' }),
    names:
      'Events[0].NotBefore: must be a date such as "Mon, 19 Sep 2016 18:29:47 GMT" or "2019-01-21T09:00:43Z", or ""',
  },
  {
    name: 'Azure: NotBefore on a day the month does not have',
    source: 'azure-scheduled-events',
    body: azureWith({ NotBefore: 'Thu, 31 Apr 2026 10:00:00 GMT' }),
    names: 'Events[0].NotBefore: must be a date such as',
  },
  {
    name: 'Azure: no EventId',
    source: 'azure-scheduled-events',
    body: azure([without(azureEvent, 'EventId')]),
    names: 'Events[0].EventId: is required',
  },
  {
    name: 'Azure: Resources not a list of names',
    source: 'azure-scheduled-events',
    body: azureWith({ Resources: 'vm-0' }),
    names: 'Events[0].Resources: must be a list of resource names',
  },
  {
    name: 'Azure: an unexpected ResourceType',
    source: 'azure-scheduled-events',
    body: azureWith({ ResourceType: 'Disk' }),
    names: 'Events[0].ResourceType: must be VirtualMachine',
  },
  {
    name: 'Azure: the same EventId twice',
    source: 'azure-scheduled-events',
    body: azure([azureEvent, azureEvent]),
    names: 'Events[1].EventId: is listed twice',
  },
  // EC2 IMDS
  { name: 'EC2: not JSON', source: 'aws-scheduled-events', body: 'scheduled reboot', names: 'is not JSON' },
  {
    name: 'EC2: 200 with an empty body (unreadable, not "no events": those are [] or 404)',
    source: 'aws-scheduled-events',
    body: '',
    names: 'is empty: unreadable, not "no events"',
  },
  {
    name: 'EC2: an object, not a list',
    source: 'aws-scheduled-events',
    body: JSON.stringify(ec2Event),
    names: 'must be a JSON list of events',
  },
  {
    name: 'EC2: unknown Code',
    source: 'aws-scheduled-events',
    body: ec2With({ Code: 'system-explode' }),
    names:
      '[0].Code: must be one of instance-reboot, system-reboot, system-maintenance, instance-retirement, instance-stop',
  },
  {
    name: 'EC2: NotBefore in RFC 1123 instead of the IMDS form',
    source: 'aws-scheduled-events',
    body: ec2With({ NotBefore: 'Mon, 21 Jan 2019 09:00:43 GMT' }),
    names: '[0].NotBefore: must be a date such as "21 Jan 2019 09:00:43 GMT"',
  },
  {
    name: 'EC2: unknown State',
    source: 'aws-scheduled-events',
    body: ec2With({ State: 'pending' }),
    names: '[0].State: must be one of active, completed, canceled',
  },
  {
    name: 'EC2: NotAfter before NotBefore',
    source: 'aws-scheduled-events',
    body: ec2With({ NotAfter: '20 Jan 2019 09:00:00 GMT' }),
    names: '[0].NotAfter: is before NotBefore',
  },
  {
    name: 'EC2: NotAfter in no date form',
    source: 'aws-scheduled-events',
    body: ec2With({ NotAfter: 'soon' }),
    names: '[0].NotAfter: must be a date such as "21 Jan 2019 09:00:43 GMT" or "2019-01-21T09:00:43Z", or ""',
  },
  {
    name: 'EC2 spot: unknown action',
    source: 'aws-spot-instance-action',
    body: JSON.stringify({ action: 'reboot', time: '2017-09-18T08:22:00Z' }),
    names: 'action: must be one of terminate, stop, hibernate',
  },
  {
    name: 'EC2 spot: time without a zone',
    source: 'aws-spot-instance-action',
    body: JSON.stringify({ action: 'terminate', time: '2017-09-18 08:22:00' }),
    names: 'time: must be an RFC 3339 time',
  },
  {
    name: 'EC2 rebalance: no noticeTime',
    source: 'aws-rebalance-recommendation',
    body: JSON.stringify({ notice: '2020-10-27T08:22:00Z' }),
    names: 'noticeTime: is required',
  },
  // GCE metadata
  {
    name: 'GCE: unknown maintenance-event value',
    source: 'gcp-maintenance-event',
    body: 'SHUTDOWN_NOW',
    names: 'must be one of NONE, MIGRATE_ON_HOST_MAINTENANCE, TERMINATE_ON_HOST_MAINTENANCE (got "SHUTDOWN_NOW")',
  },
  {
    name: 'GCE: empty maintenance-event value',
    source: 'gcp-maintenance-event',
    body: '',
    names: '(got "")',
  },
  {
    name: 'GCE upcoming: unknown maintenance_status',
    source: 'gcp-upcoming-maintenance',
    body: upcomingWith({ maintenance_status: 'UNKNOWN' }),
    names: 'maintenance_status: must be one of PENDING, ONGOING',
  },
  {
    name: 'GCE upcoming: window_start_time not RFC 3339',
    source: 'gcp-upcoming-maintenance',
    body: upcomingWith({ window_start_time: 'tomorrow' }),
    names: 'window_start_time: must be an RFC 3339 time',
  },
  {
    name: 'GCE upcoming: the window ends before it starts',
    source: 'gcp-upcoming-maintenance',
    body: upcomingWith({ window_end_time: '2024-12-01T18:00:00Z' }),
    names: 'window_end_time: is before window_start_time',
  },
];
