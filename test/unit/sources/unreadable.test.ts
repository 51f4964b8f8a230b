/** Which open requests an unreadable source ends: past the notice's end, or past the limit without one. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Notice } from '../../../lib/sources/clouds/notice.ts';
import { DEFAULT_NOTICE_POLICY, type NoticeRule } from '../../../lib/sources/clouds/policy.ts';
import { overdueRequests, Unreadability } from '../../../lib/sources/clouds/unreadable.ts';

const rule = DEFAULT_NOTICE_POLICY.aws['system-reboot'] as NoticeRule;
const notice = (notAfter?: string): Notice => ({
  provider: 'aws',
  source: 'aws-scheduled-events',
  eventId: 'e',
  eventType: 'system-reboot',
  policyKey: 'system-reboot',
  status: 'scheduled',
  providerStatus: 'active',
  notBefore: '2026-01-01T09:00:00.000Z',
  ...(notAfter ? { notAfter } : {}),
  description: 'd',
});
const since = new Date('2026-01-01T09:30:00.000Z');
const at = (iso: string) => new Date(iso);

describe('overdueRequests', () => {
  it('a notice with an end: ended once the end passed, whatever the limit', () => {
    const open = [{ requestId: 'r', notice: notice('2026-01-01T10:00:00.000Z'), rule }];
    assert.deepEqual(overdueRequests(open, since, at('2026-01-01T10:00:00.000Z'), 60), []);
    const [overdue] = overdueRequests(open, since, at('2026-01-01T10:00:01.000Z'), 999_999);
    assert.equal(overdue?.requestId, 'r');
    assert.match(
      overdue?.why ?? '',
      /unreadable since 2026-01-01T09:30:00.000Z.*end \(2026-01-01T10:00:00.000Z\) has passed/,
    );
    assert.equal(overdue?.last?.notice.eventId, 'e');
    assert.equal(overdue?.unreadableSince, since.toISOString(), 'the first unreadable read, for Maintenance Ended');
  });

  it('a notice without an end, or a request taken over without its notice: ended past the limit', () => {
    const open = [{ requestId: 'r', notice: notice(), rule }, { requestId: 'adopted' }];
    assert.deepEqual(overdueRequests(open, since, at('2026-01-01T10:30:00.000Z'), 3600), []);
    const overdue = overdueRequests(open, since, at('2026-01-01T10:30:01.000Z'), 3600);
    assert.deepEqual(
      overdue.map((o) => o.requestId),
      ['r', 'adopted'],
    );
    assert.match(overdue[0]?.why ?? '', /longer than 3600 s, and the notice gives no end/);
    assert.equal(overdue[1]?.last, undefined);
  });

  it('a limit of 0 ends nothing', () => {
    const open = [{ requestId: 'r', notice: notice('2026-01-01T09:00:00.000Z'), rule }];
    assert.deepEqual(overdueRequests(open, since, at('2027-01-01T00:00:00.000Z'), 0), []);
  });

  it('Unreadability keeps the first unreadable time until a readable read', () => {
    const unreadable = new Unreadability();
    assert.equal(unreadable.begin(since), true);
    assert.equal(unreadable.begin(at('2026-01-01T11:00:00.000Z')), false);
    assert.equal(unreadable.since?.toISOString(), since.toISOString());
    assert.equal(unreadable.end()?.toISOString(), since.toISOString());
    assert.equal(unreadable.end(), undefined);
  });
});
