/**
 * The parsers, table-driven from the providers' documented payloads (test/fixtures/notices/): each
 * document → the exact normalised notices.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseAwsBusEvent } from '../../../lib/sources/clouds/aws/eventbridge.ts';
import {
  parseEc2ScheduledEvents,
  parseRebalanceRecommendation,
  parseSpotInstanceAction,
} from '../../../lib/sources/clouds/aws/parse.ts';
import { parseAzureScheduledEvents } from '../../../lib/sources/clouds/azure/parse.ts';
import { parseGceMaintenanceEvent, parseGceUpcomingMaintenance } from '../../../lib/sources/clouds/gcp/parse.ts';
import type { Notice, ParsedDocument } from '../../../lib/sources/clouds/notice.ts';
import { fixture } from './fixtures.ts';

interface Case {
  readonly file: string;
  readonly parse: (document: unknown) => ParsedDocument;
  readonly version?: string;
  readonly notices: readonly Partial<Notice>[];
}

const freeze = {
  provider: 'azure',
  source: 'azure-scheduled-events',
  eventId: 'C7061BAC-AFDC-4513-B24B-AA5F13A16123',
  eventType: 'Freeze',
  policyKey: 'Freeze',
  resources: ['WestNO_0', 'WestNO_1'],
} as const;

const systemReboot = {
  provider: 'aws',
  source: 'aws-scheduled-events',
  eventId: 'instance-event-0d59937288b749b32',
  eventType: 'system-reboot',
  policyKey: 'system-reboot',
  notBefore: '2019-01-21T09:00:43.000Z',
  notAfter: '2019-01-21T09:17:23.000Z',
} as const;

const CASES: readonly Case[] = [
  {
    file: 'azure/freeze-two-vms-scheduled.json',
    parse: parseAzureScheduledEvents,
    version: '2',
    notices: [
      {
        ...freeze,
        status: 'scheduled',
        providerStatus: 'Scheduled',
        // "Mon, 11 Apr 2026" is a Saturday: the documented example's weekday is wrong, the instant is not.
        notBefore: '2026-04-11T22:26:58.000Z',
        description:
          'Virtual machine is being paused because of a memory-preserving Live Migration operation.; initiated by Platform; impact 5 s',
      },
    ],
  },
  {
    file: 'azure/freeze-two-vms-started.json',
    parse: parseAzureScheduledEvents,
    version: '3',
    notices: [{ ...freeze, status: 'started', providerStatus: 'Started' }],
  },
  { file: 'azure/no-events.json', parse: parseAzureScheduledEvents, version: '4', notices: [] },
  {
    file: 'azure/reboot-user.json',
    parse: parseAzureScheduledEvents,
    version: '2',
    notices: [
      {
        eventId: '4CAEA225-A741-474D-A72E-428C86FCD853',
        eventType: 'Reboot',
        status: 'scheduled',
        notBefore: '2021-07-22T04:50:17.000Z',
        resources: ['flatcar-vm1'],
        description: 'Reboot of flatcar-vm1; initiated by User',
      },
    ],
  },
  {
    file: 'azure/reboot-api-2017-08-01.json',
    parse: parseAzureScheduledEvents,
    version: '1',
    notices: [
      {
        eventId: 'F3E6E2D2-E86A-47F0-AA8E-18918049A2B1',
        eventType: 'Reboot',
        notBefore: '2019-06-30T16:22:03.000Z',
        resources: ['controlplane_0'],
        description: 'Reboot of controlplane_0',
      },
    ],
  },
  {
    file: 'azure/freeze-aks-started.json',
    parse: parseAzureScheduledEvents,
    version: '32',
    notices: [{ eventType: 'Freeze', status: 'started', resources: ['aks-testspot-38041100-vmss_25'] }],
  },
  {
    file: 'azure/mock-server-reboot-scheduled.json',
    parse: parseAzureScheduledEvents,
    version: '1',
    // Microsoft's mock server writes NotBefore in ISO 8601: the same instant as RFC 1123 would say.
    notices: [
      { eventType: 'Reboot', status: 'scheduled', notBefore: '2025-11-05T20:19:11.000Z', resources: ['vmss_vm1'] },
    ],
  },
  {
    file: 'aws/scheduled-instance-stop-no-end.json',
    parse: parseEc2ScheduledEvents,
    notices: [{ eventType: 'instance-stop', notBefore: '2021-02-25T02:00:00.000Z', notAfter: undefined }],
  },
  {
    file: 'aws/scheduled-instance-stop-empty-end.json',
    parse: parseEc2ScheduledEvents,
    // "NotAfter": "" is no end, as an absent NotAfter (AWS NTH PR #182), not a malformed event.
    notices: [{ eventType: 'instance-stop', notBefore: '2020-12-28T06:00:00.000Z', notAfter: undefined }],
  },
  {
    file: 'aws/scheduled-instance-reboot-rfc3339.json',
    parse: parseEc2ScheduledEvents,
    notices: [
      { eventType: 'instance-reboot', notBefore: '2022-07-19T22:25:00.000Z', notAfter: '2022-07-19T23:00:00.000Z' },
    ],
  },
  {
    file: 'aws/scheduled-system-reboot.json',
    parse: parseEc2ScheduledEvents,
    notices: [{ ...systemReboot, status: 'scheduled', providerStatus: 'active', description: 'scheduled reboot' }],
  },
  {
    file: 'aws/scheduled-canceled.json',
    parse: parseEc2ScheduledEvents,
    notices: [{ ...systemReboot, status: 'ended', providerStatus: 'canceled' }],
  },
  {
    file: 'aws/scheduled-completed.json',
    parse: parseEc2ScheduledEvents,
    notices: [{ ...systemReboot, status: 'ended', providerStatus: 'completed' }],
  },
  {
    file: 'aws/spot-instance-action.json',
    parse: parseSpotInstanceAction,
    notices: [
      {
        source: 'aws-spot-instance-action',
        eventId: 'instance-action-terminate-2017-09-18T08:22:00.000Z',
        eventType: 'terminate',
        policyKey: 'spot-interruption',
        notBefore: '2017-09-18T08:22:00.000Z',
      },
    ],
  },
  {
    file: 'aws/rebalance-recommendation.json',
    parse: parseRebalanceRecommendation,
    notices: [
      {
        source: 'aws-rebalance-recommendation',
        eventId: 'rebalance-2020-10-27T08:22:00.000Z',
        policyKey: 'rebalance-recommendation',
        notBefore: undefined,
      },
    ],
  },
  {
    file: 'gcp/upcoming-maintenance.json',
    parse: parseGceUpcomingMaintenance,
    notices: [
      {
        provider: 'gcp',
        source: 'gcp-upcoming-maintenance',
        eventId: 'upcoming-2024-12-01T19:00:01.000Z',
        eventType: 'SCHEDULED',
        policyKey: 'upcoming-maintenance',
        status: 'scheduled',
        providerStatus: 'PENDING',
        notBefore: '2024-12-01T19:00:01.000Z',
        notAfter: '2024-12-01T21:00:01.000Z',
      },
    ],
  },
  { file: 'gcp/upcoming-none.json', parse: parseGceUpcomingMaintenance, notices: [] },
  { file: 'gcp/upcoming-no-notifications.json', parse: parseGceUpcomingMaintenance, notices: [] },
];

function pick(notice: Notice, expected: Partial<Notice>): Partial<Notice> {
  return Object.fromEntries(Object.keys(expected).map((key) => [key, notice[key as keyof Notice]]));
}

describe('notice parsers on the documented payloads', () => {
  for (const c of CASES) {
    it(c.file, () => {
      const parsed = c.parse(fixture(c.file));
      assert.deepEqual(parsed.rejected, []);
      assert.equal(parsed.version, c.version);
      assert.equal(parsed.notices.length, c.notices.length);
      c.notices.forEach((expected, i) => {
        assert.deepEqual(pick(parsed.notices[i] as Notice, expected), expected);
      });
    });
  }

  it('AWS Health: an upcoming instance stop names its instance, maps to instance-stop and keeps its window', () => {
    const notice = parseAwsBusEvent(fixture('aws/health-instance-stop-scheduled.json'));
    assert.equal(notice.source, 'aws-health');
    assert.equal(
      notice.eventId,
      'arn:aws:health:us-west-2::event/EC2/AWS_EC2_INSTANCE_STOP_SCHEDULED/AWS_EC2_INSTANCE_STOP_SCHEDULED_ABC123-DEF456',
    );
    assert.equal(notice.eventType, 'AWS_EC2_INSTANCE_STOP_SCHEDULED');
    assert.equal(notice.policyKey, 'instance-stop');
    assert.equal(notice.status, 'scheduled');
    assert.equal(notice.notBefore, '2023-02-11T06:00:00.000Z');
    assert.equal(notice.notAfter, '2023-02-11T10:00:00.000Z');
    assert.deepEqual(notice.instanceIds, ['i-abcd1111']);
    assert.match(notice.description, /^EC2 has detected degradation/);
  });

  it('AWS Health: a closed system reboot is over, for both instances', () => {
    const notice = parseAwsBusEvent(fixture('aws/health-system-reboot-closed.json'));
    assert.equal(notice.policyKey, 'system-reboot');
    assert.equal(notice.status, 'ended');
    assert.deepEqual(notice.instanceIds, ['i-abcd2222', 'i-abcd3333']);
  });

  it('EC2 Spot Instance Interruption Warning: the action two minutes after the warning', () => {
    const notice = parseAwsBusEvent(fixture('aws/spot-interruption-warning.json'));
    assert.equal(notice.source, 'aws-spot-interruption-warning');
    assert.equal(notice.policyKey, 'spot-interruption');
    assert.equal(notice.eventType, 'terminate');
    assert.equal(notice.notBefore, '2021-02-11T22:15:41.000Z');
    assert.deepEqual(notice.instanceIds, ['i-1234567890abcdef0']);
  });

  it('GCE maintenance-event: NONE is no notice, the other values one, keyed by the ETag', () => {
    assert.deepEqual(parseGceMaintenanceEvent('NONE', 'a1').notices, []);
    const migrate = parseGceMaintenanceEvent('MIGRATE_ON_HOST_MAINTENANCE', '9b06e1ff9c2fe9bd');
    assert.equal(migrate.version, '9b06e1ff9c2fe9bd');
    assert.deepEqual(pick(migrate.notices[0] as Notice, { eventId: '', policyKey: '', status: 'started' }), {
      eventId: 'maintenance-event-9b06e1ff9c2fe9bd',
      policyKey: 'MIGRATE_ON_HOST_MAINTENANCE',
      status: 'started',
    });
    assert.equal(
      parseGceMaintenanceEvent('TERMINATE_ON_HOST_MAINTENANCE', 'b2').notices[0]?.eventType,
      'TERMINATE_ON_HOST_MAINTENANCE',
    );
  });

  it('Azure: an RFC 1123 NotBefore with a one-digit day (RFC 1123 §5.2.14 allows 1*2DIGIT) and an ISO 8601 one with an offset', () => {
    const event = {
      EventId: 'a',
      EventStatus: 'Scheduled',
      EventType: 'Reboot',
      ResourceType: 'VirtualMachine',
      Resources: ['vm-0'],
    };
    const read = (NotBefore: string) =>
      parseAzureScheduledEvents({ DocumentIncarnation: 1, Events: [{ ...event, NotBefore }] }).notices[0]?.notBefore;
    assert.equal(read('Mon, 5 Jan 2026 09:05:00 GMT'), '2026-01-05T09:05:00.000Z');
    assert.equal(read('Mon, 05 Jan 2026 09:05:00 GMT'), '2026-01-05T09:05:00.000Z');
    assert.equal(read('2026-01-05T10:05:00+01:00'), '2026-01-05T09:05:00.000Z');
    assert.equal(read(''), undefined, 'started: no NotBefore');
  });

  it('EC2: the IMDS form with a one-digit day, as Go layout "2 Jan 2006" writes it', () => {
    const parsed = parseEc2ScheduledEvents([
      { Code: 'system-reboot', EventId: 'e', State: 'active', NotBefore: '5 Jan 2026 09:05:00 GMT' },
    ]);
    assert.equal(parsed.notices[0]?.notBefore, '2026-01-05T09:05:00.000Z');
  });

  it('a 404 (no document) is no notice', () => {
    assert.deepEqual(parseSpotInstanceAction(undefined), { notices: [], rejected: [] });
    assert.deepEqual(parseRebalanceRecommendation(undefined), { notices: [], rejected: [] });
    assert.deepEqual(parseGceUpcomingMaintenance(undefined), { notices: [], rejected: [] });
  });
});
