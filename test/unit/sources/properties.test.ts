/** Properties of the date readers, the request ids and the parsers, over generated input (fast-check). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { RequestId } from '../../../lib/bus/contracts/fields.ts';
import type { NoticeSource } from '../../../lib/model/notice.ts';
import { parseAwsBusEvent } from '../../../lib/sources/clouds/aws/eventbridge.ts';
import { parseAzureScheduledEvents } from '../../../lib/sources/clouds/azure/parse.ts';
import {
  formatEc2ImdsDate,
  formatRfc1123,
  parseEc2ImdsDate,
  parseRfc1123,
  parseRfc3339,
} from '../../../lib/sources/clouds/dates.ts';
import { noticeRequestId, requestIdPrefix } from '../../../lib/sources/clouds/ids.ts';
import { NoticeParseError } from '../../../lib/sources/clouds/notice.ts';
import { parseNoticeDocument } from '../../../lib/sources/node-agent/parse.ts';

/** Whole seconds between 1970 and 2200. */
const instant = fc.integer({ min: 0, max: 7_258_118_400 }).map((s) => new Date(s * 1000));

describe('dates', () => {
  it('RFC 1123 and the EC2 IMDS form read back the instant they were written from', () => {
    fc.assert(
      fc.property(instant, (time) => {
        assert.equal(parseRfc1123(formatRfc1123(time)), time.toISOString());
        assert.equal(parseEc2ImdsDate(formatEc2ImdsDate(time)), time.toISOString());
        assert.equal(parseRfc3339(time.toISOString()), time.toISOString());
      }),
    );
  });

  it('never accepts the other provider’s format', () => {
    fc.assert(
      fc.property(instant, (time) => {
        assert.equal(parseRfc1123(formatEc2ImdsDate(time)), undefined);
        assert.equal(parseEc2ImdsDate(formatRfc1123(time)), undefined);
        assert.equal(parseRfc1123(time.toISOString()), undefined);
      }),
    );
  });

  it('refuses days a month does not have and times past 23:59:59', () => {
    assert.equal(parseRfc1123('Fri, 29 Feb 2019 10:00:00 GMT'), undefined);
    assert.equal(parseRfc1123('Thu, 29 Feb 2024 10:00:00 GMT'), '2024-02-29T10:00:00.000Z');
    assert.equal(parseEc2ImdsDate('1 Jan 2019 24:00:00 GMT'), undefined);
    assert.equal(parseRfc3339('2024-02-30T00:00:00Z'), undefined);
    assert.equal(parseRfc3339('2024-01-01T00:00:00+02:00'), '2023-12-31T22:00:00.000Z');
  });
});

const sources: NoticeSource[] = ['azure-scheduled-events', 'aws-scheduled-events', 'gcp-maintenance-event'];
const nodeName = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,250}[a-z0-9])?$/);

describe('request ids', () => {
  it('are valid RequestIds, deterministic, and start with their source and node prefix', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...sources),
        nodeName,
        fc.string({ minLength: 1, maxLength: 400 }),
        (s, node, key) => {
          const id = noticeRequestId(s, node, key);
          assert.ok(RequestId.safeParse(id).success, `${id} is a RequestId`);
          assert.equal(id, noticeRequestId(s, node, key));
          assert.ok(id.startsWith(requestIdPrefix(s, node)));
        },
      ),
    );
  });

  it('differ for different event keys', () => {
    fc.assert(
      fc.property(nodeName, fc.string({ minLength: 1 }), fc.string({ minLength: 1 }), (node, a, b) => {
        fc.pre(a !== b);
        // Keys that differ only in characters the id cannot hold may meet; real ids (GUIDs, instance-event-…, ARNs) do not.
        fc.pre(/^[A-Za-z0-9._@/-]+$/.test(a) && /^[A-Za-z0-9._@/-]+$/.test(b));
        assert.notEqual(
          noticeRequestId('azure-scheduled-events', node, a),
          noticeRequestId('azure-scheduled-events', node, b),
        );
      }),
    );
  });
});

describe('the parsers are total', () => {
  it('any JSON gives notices or a NoticeParseError, never another exception', () => {
    const documentSources: NoticeSource[] = [
      'azure-scheduled-events',
      'aws-scheduled-events',
      'aws-spot-instance-action',
      'aws-rebalance-recommendation',
      'gcp-maintenance-event',
      'gcp-upcoming-maintenance',
      'gcp-preempted',
    ];
    fc.assert(
      fc.property(fc.constantFrom(...documentSources), fc.json(), (source, text) => {
        try {
          parseNoticeDocument(source, text, 'etag');
        } catch (error) {
          assert.ok(error instanceof NoticeParseError, String(error));
        }
      }),
    );
    fc.assert(
      fc.property(fc.anything(), (event) => {
        try {
          parseAwsBusEvent(event);
        } catch (error) {
          assert.ok(error instanceof NoticeParseError, String(error));
        }
      }),
    );
  });

  it('every well-formed Azure event becomes exactly one notice, whatever else it carries', () => {
    const event = fc.record({
      EventId: fc.uuid(),
      EventType: fc.constantFrom('Freeze', 'Reboot', 'Redeploy', 'Preempt', 'Terminate'),
      ResourceType: fc.constant('VirtualMachine'),
      Resources: fc.array(fc.stringMatching(/^[A-Za-z0-9_-]{1,20}$/), { minLength: 1, maxLength: 4 }),
      EventStatus: fc.constantFrom('Scheduled', 'Started'),
      NotBefore: fc.oneof(fc.constant(''), instant.map(formatRfc1123)),
      Description: fc.string(),
      EventSource: fc.constantFrom('Platform', 'User'),
      DurationInSeconds: fc.integer({ min: -1, max: 3600 }),
      SomethingNew: fc.anything(),
    });
    fc.assert(
      fc.property(
        fc.uniqueArray(event, { selector: (e) => e.EventId.toLowerCase(), maxLength: 5 }),
        fc.nat(),
        (events, n) => {
          const parsed = parseAzureScheduledEvents({ DocumentIncarnation: n, Events: events });
          assert.equal(parsed.rejected.length, 0);
          assert.deepEqual(
            parsed.notices.map((notice) => notice.eventId),
            events.map((e) => e.EventId),
          );
          assert.equal(parsed.version, String(n));
        },
      ),
    );
  });
});
