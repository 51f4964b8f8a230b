/**
 * Alibaba Cloud ECS active system events (lib/sources/clouds/alibaba/parse.ts). The fixtures are written
 * from "ECS instance event notifications" (alibabacloud.com/help/en/ecs/user-guide/instance-event-notification):
 * the `content` of its SystemMaintenance.Reboot notifications, Scheduled and then Avoided, as the list the
 * metadata item `/maintenance/active-system-events` ("ECS instance metadata") serves; `[]` is no events.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseEcsSystemEvents } from '../../../lib/sources/clouds/alibaba/parse.ts';
import { NoticeParseError } from '../../../lib/sources/clouds/notice.ts';
import { parseNoticeDocument } from '../../../lib/sources/node-agent/parse.ts';
import { fixture, fixtureText } from './fixtures.ts';

const EVENT = {
  eventId: 'e-bp11trd0000000pqum2',
  notBefore: '2019-04-12T01:01:01Z',
  eventType: 'SystemMaintenance.Reboot',
  eventStatus: 'Scheduled',
};

describe('ECS active system events', () => {
  it('the documented Scheduled SystemMaintenance.Reboot → one scheduled notice with its NotBefore', () => {
    const text = fixtureText('alibaba/system-maintenance-reboot-scheduled.json');
    const { notices, rejected } = parseNoticeDocument('alibaba-system-events', text);
    assert.deepEqual(rejected, []);
    assert.equal(notices.length, 1);
    assert.deepEqual(
      { ...notices[0] },
      {
        provider: 'alibaba',
        source: 'alibaba-system-events',
        eventId: 'e-bp11trd0000000pqum2',
        eventType: 'SystemMaintenance.Reboot',
        policyKey: 'SystemMaintenance.Reboot',
        status: 'scheduled',
        providerStatus: 'Scheduled',
        notBefore: '2019-04-12T01:01:01.000Z',
        description: 'SystemMaintenance.Reboot of i-bp1ecr0000005go2go',
      },
    );
  });

  it('Avoided (the instance was restarted before NotBefore) ends it; Executing has started; Inquiring waits', () => {
    const [avoided] = parseEcsSystemEvents(fixture('alibaba/system-maintenance-reboot-avoided.json')).notices;
    assert.equal(avoided?.status, 'ended');
    for (const [status, expected] of [
      ['Executing', 'started'],
      ['Inquiring', 'scheduled'],
      ['Executed', 'ended'],
      ['Canceled', 'ended'],
      ['Failed', 'ended'],
    ] as const) {
      assert.equal(parseEcsSystemEvents([{ ...EVENT, eventStatus: status }]).notices[0]?.status, expected, status);
    }
  });

  it('no events: `[]` and a 404; an empty body or anything but a list is unreadable', () => {
    assert.deepEqual(parseNoticeDocument('alibaba-system-events', fixtureText('alibaba/no-events.json')).notices, []);
    assert.deepEqual(parseNoticeDocument('alibaba-system-events', undefined).notices, []);
    assert.throws(() => parseNoticeDocument('alibaba-system-events', ''), NoticeParseError);
    assert.throws(() => parseEcsSystemEvents({ events: [] }), /must be a JSON list of events/);
  });

  it('one event that cannot be read is rejected with its field named; the others count', () => {
    const { notices, rejected } = parseEcsSystemEvents([
      { ...EVENT, eventId: 'e-good' },
      { ...EVENT, eventId: 'e-bad', notBefore: 'Friday' },
      { ...EVENT, eventId: 'e-odd', eventType: 'SystemMaintenance.Dance' },
    ]);
    assert.deepEqual(
      notices.map((n) => n.eventId),
      ['e-good'],
    );
    assert.equal(rejected.length, 2);
    assert.match(JSON.stringify(rejected[0]?.problems), /\[1\]\.notBefore/);
    assert.match(JSON.stringify(rejected[1]?.problems), /\[2\]\.eventType/);
  });

  it('an event listed twice is trusted in neither place', () => {
    const { notices, rejected } = parseEcsSystemEvents([EVENT, EVENT]);
    assert.deepEqual(notices, []);
    assert.equal(rejected.length, 2);
  });
});
