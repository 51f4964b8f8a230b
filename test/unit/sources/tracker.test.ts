/** NoticeTracker's reschedules (lib/sources/clouds/tracker.ts): a moved start is revised once; nothing else is. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Notice } from '../../../lib/sources/clouds/notice.ts';
import { DEFAULT_NOTICE_POLICY } from '../../../lib/sources/clouds/policy.ts';
import { NoticeTracker, type TrackerAction } from '../../../lib/sources/clouds/tracker.ts';

function notice(notBefore: string | undefined, over: Partial<Notice> = {}): Notice {
  return {
    provider: 'aws',
    source: 'aws-scheduled-events',
    eventId: 'instance-event-0aaaa1111bbbb2222',
    eventType: 'system-reboot',
    policyKey: 'system-reboot',
    status: 'scheduled',
    providerStatus: 'active',
    ...(notBefore ? { notBefore } : {}),
    description: 'scheduled system-reboot',
    ...over,
  };
}

/** Plans one complete document and commits every action, as the agent does when each publish succeeds. */
function read(tracker: NoticeTracker, notices: Notice[]): TrackerAction[] {
  const actions = tracker.plan({ notices, complete: true });
  for (const action of actions) tracker.commit(action);
  return actions;
}

describe('NoticeTracker reschedules', () => {
  it('a requested notice whose NotBefore moves is revised once, with the start it had', () => {
    const tracker = new NoticeTracker('aws-scheduled-events', 'node-1', DEFAULT_NOTICE_POLICY);
    assert.deepEqual(
      read(tracker, [notice('2030-01-24T12:00:00.000Z')]).map((a) => a.kind),
      ['request'],
    );
    assert.deepEqual(
      read(tracker, [notice('2030-01-24T12:00:00Z')]),
      [],
      'the same instant written otherwise: no move',
    );
    const [revise] = read(tracker, [notice('2030-01-10T13:01:00.000Z')]);
    assert.equal(revise?.kind, 'revise');
    assert.equal(revise?.kind === 'revise' ? revise.previousNotBefore : '', '2030-01-24T12:00:00.000Z');
    assert.deepEqual(read(tracker, [notice('2030-01-10T13:01:00.000Z')]), [], 'once');
  });

  it('a notice whose rule starts at once (spot: its time is a deadline) is never revised', () => {
    const tracker = new NoticeTracker('aws-spot-instance-action', 'node-1', DEFAULT_NOTICE_POLICY);
    const spot = (time: string) =>
      notice(time, { source: 'aws-spot-instance-action', eventType: 'terminate', policyKey: 'spot-interruption' });
    read(tracker, [spot('2030-01-10T12:02:00.000Z')]);
    assert.deepEqual(read(tracker, [spot('2030-01-10T12:04:00.000Z')]), []);
  });

  it('a request taken over from a previous run is revised at its first sight (a move while no agent ran counts)', () => {
    const tracker = new NoticeTracker('aws-scheduled-events', 'node-1', DEFAULT_NOTICE_POLICY);
    const seen = notice('2030-01-24T12:00:00.000Z');
    tracker.adopt([tracker.requestIdOf(seen)]);
    const [revise] = read(tracker, [seen]);
    assert.equal(revise?.kind, 'revise');
    assert.equal(revise?.kind === 'revise' ? revise.previousNotBefore : 'none', undefined);
    assert.deepEqual(read(tracker, [seen]), []);
  });
});

describe('NoticeTracker: a request whose publish was not confirmed', () => {
  it('is requested again while listed, and ended once its notice is gone (it may have reached the bus)', () => {
    const tracker = new NoticeTracker('aws-scheduled-events', 'node-1', DEFAULT_NOTICE_POLICY);
    const listed = notice('2026-12-01T10:00:00.000Z');
    const [request] = tracker.plan({ notices: [listed], complete: true });
    assert.equal(request?.kind, 'request');
    tracker.unconfirmed(request as TrackerAction);
    assert.deepEqual(
      tracker.plan({ notices: [listed], complete: true }).map((a) => a.kind),
      ['request'],
      'offered again while listed',
    );
    assert.deepEqual(tracker.plan({ notices: [], complete: false }), [], 'an incomplete document ends nothing');
    const ended = read(tracker, []);
    assert.deepEqual(
      ended.map((a) => [a.kind, a.requestId]),
      [['end', request?.requestId]],
    );
    assert.deepEqual(read(tracker, []), [], 'ended once');
  });
});
