/** kubectl's clock for a waiting pods pass (lib/branches/pods/wake.ts): when each limit comes due. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { isStuckTerminating } from '../../../lib/branches/pods/filters.ts';
import { INITIAL_DRAIN_STATE } from '../../../lib/branches/pods/tracking.ts';
import { stuckAt, timeoutAt, wakes } from '../../../lib/branches/pods/wake.ts';
import { requestFor } from '../../drain/harness.ts';

const STARTED = '2026-11-28T06:00:00.000Z';
const startMs = Date.parse(STARTED);

function terminatingPod(uid: string, deletionTimestamp: string): V1Pod {
  return { metadata: { uid, name: uid, namespace: 'shop', deletionTimestamp: new Date(deletionTimestamp) } };
}

describe('wake', () => {
  it('the --timeout comes due at the first instant isPastTimeout says so', () => {
    assert.equal(timeoutAt(requestFor('node-1', { timeoutSeconds: 10 }), STARTED), startMs + 10_001);
    assert.equal(timeoutAt(requestFor('node-1', { timeoutSeconds: 0 }), STARTED), undefined);
  });

  it('a terminating pod comes due at the first instant kubectl skips it', () => {
    const pod = terminatingPod('a', '2026-11-28T06:00:05Z');
    const at = stuckAt(pod, 3);
    assert.equal(at, Date.parse('2026-11-28T06:00:09Z'));
    assert.equal(isStuckTerminating(pod, 3, new Date((at ?? 0) - 1)), false);
    assert.equal(isStuckTerminating(pod, 3, new Date(at ?? 0)), true);
    assert.equal(stuckAt(pod, 0), undefined, '0 never skips');
  });

  it('the first limit and the next instant to look again, after now only', () => {
    const request = requestFor('node-1', { timeoutSeconds: 60, skipWaitForDeleteTimeoutSeconds: 3 });
    const pods = [terminatingPod('a', '2026-11-28T06:00:05Z')];
    const state = {
      ...INITIAL_DRAIN_STATE,
      pods: { a: { name: 'shop/a', attempts: 1, nextAttemptAt: '2026-11-28T06:00:07.000Z' } },
    };
    const early = wakes({ request, startedAt: STARTED }, { toEvict: pods, state }, startMs);
    assert.equal(early.firstLimit, Date.parse('2026-11-28T06:00:09Z'), 'the skip before the timeout');
    assert.equal(early.next, Date.parse('2026-11-28T06:00:07Z'), 'the backoff first');
    const later = wakes({ request, startedAt: STARTED }, { toEvict: pods, state }, Date.parse('2026-11-28T06:00:09Z'));
    assert.equal(later.firstLimit, startMs + 60_001, 'limits already reached are not ahead');
    assert.equal(later.next, startMs + 60_001);
  });
});
