import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type BreakerFailure,
  type BreakerRecord,
  NO_BREAKER_RECORD,
  noteFailure,
  pausedBecause,
  resumeBreaker,
} from '../../../lib/admission/breaker.ts';
import { planAdmission } from '../../../lib/admission/decision.ts';
import { BREAKER_ANNOTATION, damagedRecords, readBreaker, recordAnnotations } from '../../../lib/admission/records.ts';
import { loadConfig } from '../../../lib/config/index.ts';
import { RecordUnreadable } from '../../../lib/errors/index.ts';

const SETTING = { failures: 3, windowSeconds: 1800 };
const failure = (minute: number, node = `node-${minute}`): BreakerFailure => ({
  at: new Date(Date.UTC(2026, 10, 21, 10, minute)).toISOString(),
  requestId: `r-${node}`,
  node,
  error: 'DeadlineExceeded',
});

function noteAll(minutes: readonly number[], start: BreakerRecord = NO_BREAKER_RECORD) {
  let record = start;
  const trips: number[] = [];
  for (const minute of minutes) {
    const noted = noteFailure(record, failure(minute), SETTING);
    record = noted.record;
    if (noted.tripped) trips.push(minute);
  }
  return { record, trips };
}

describe('circuit breaker (pure)', () => {
  it('trips at the K-th failure within the window, and says which nodes failed how', () => {
    const { record, trips } = noteAll([0, 10, 20]);
    assert.deepEqual(trips, [20]);
    assert.equal(record.pausedAt, failure(20).at);
    assert.match(
      pausedBecause(record) ?? '',
      /^3 evacuations failed within 30m: node-0 \(DeadlineExceeded\), node-10 \(DeadlineExceeded\), node-20 \(DeadlineExceeded\); admission is paused until `drainbridge resume`$/,
    );
  });

  it('forgets failures older than the window', () => {
    const { record, trips } = noteAll([0, 10, 41, 50]);
    assert.deepEqual(trips, []);
    assert.equal(pausedBecause(record), undefined);
    assert.deepEqual(
      record.failures.map((seen) => seen.node),
      ['node-41', 'node-50'],
    );
  });

  it('counts a request failing again once, and trips only once while paused', () => {
    const again = noteFailure(
      noteFailure(NO_BREAKER_RECORD, failure(0), SETTING).record,
      failure(1, 'node-0'),
      SETTING,
    );
    assert.equal(again.record.failures.length, 1);
    const { record, trips } = noteAll([0, 1, 2, 3, 4]);
    assert.deepEqual(trips, [2]);
    assert.equal(record.pausedAt, failure(2).at);
    assert.equal(record.failures.length, 3, 'at most K failures are kept');
  });

  it('resume re-opens admission and the next K failures count anew', () => {
    const paused = noteAll([0, 1, 2]).record;
    const resumed = resumeBreaker('alice', new Date(failure(3).at));
    assert.equal(pausedBecause(resumed), undefined);
    assert.equal(resumed.resumedBy, 'alice');
    assert.ok(paused.pausedAt);
    assert.deepEqual(noteAll([4, 5], resumed).trips, []);
    assert.deepEqual(noteAll([4, 5, 6], resumed).trips, [6]);
  });
});

describe('admission while paused', () => {
  const facts = {
    requestId: 'r1',
    node: 'n1',
    now: new Date('2026-11-21T10:00:00Z'),
    heldNodes: ['n9'],
    maxHeldNodes: 5,
    queue: {},
    queueTtlSeconds: 180,
  };

  it('admits no new node; the request keeps its place with the reason', () => {
    const decision = planAdmission({ ...facts, paused: 'three failed' });
    assert.equal(decision.admit, false);
    assert.equal(decision.queue.r1?.why, 'three failed');
    assert.equal(decision.queue.r1?.since, facts.now.toISOString());
    const later = planAdmission({
      ...facts,
      now: new Date('2026-11-21T10:00:20Z'),
      queue: decision.queue,
      paused: 'three failed',
    });
    assert.equal(later.queue.r1?.since, facts.now.toISOString(), 'the place is kept');
    assert.equal(planAdmission({ ...facts, queue: later.queue, now: new Date('2026-11-21T10:00:30Z') }).admit, true);
  });

  it('a node already held is admitted: running evacuations go on', () => {
    assert.equal(planAdmission({ ...facts, node: 'n9', paused: 'three failed' }).admit, true);
  });
});

describe('breaker record on the Lease', () => {
  const lease = (text: string) => ({ metadata: { annotations: { [BREAKER_ANNOTATION]: text } } });

  it('round-trips, and reads absent as not paused', () => {
    const { record } = noteAll([0, 1, 2]);
    const text = recordAnnotations({ breaker: record })[BREAKER_ANNOTATION] ?? '';
    assert.deepEqual(readBreaker(lease(text)), record);
    assert.deepEqual(readBreaker(undefined), NO_BREAKER_RECORD);
  });

  it('unreadable stops admission naming the record, and repair empties it', () => {
    assert.throws(() => readBreaker(lease('{"pausedAt": 7')), RecordUnreadable);
    const [damaged] = damagedRecords(lease('not json'));
    assert.match(damaged?.what ?? '', /circuit breaker \(Lease annotation drainbridge.io\/admission-breaker\)/);
    assert.deepEqual(readBreaker(lease(damaged?.emptied[BREAKER_ANNOTATION] ?? '')), NO_BREAKER_RECORD);
  });
});

describe('DRAINBRIDGE_BREAKER', () => {
  it('reads FAILURES/WINDOW, off by default', () => {
    assert.deepEqual(loadConfig({ DRAINBRIDGE_BREAKER: '3/1h' }).breaker, { failures: 3, windowSeconds: 3600 });
    assert.deepEqual(loadConfig({ DRAINBRIDGE_BREAKER: '5/30m' }).breaker, { failures: 5, windowSeconds: 1800 });
    assert.equal(loadConfig({}).breaker, undefined);
    assert.equal(loadConfig({ DRAINBRIDGE_BREAKER: 'off' }).breaker, undefined);
  });

  it('refuses a bad value, naming the variable', () => {
    for (const bad of ['3', '0/1h', '3/1', '3/0m', 'x/1h', '3/1h/2', '3/1w', '-1/1h']) {
      assert.throws(() => loadConfig({ DRAINBRIDGE_BREAKER: bad }), {
        message: /DRAINBRIDGE_BREAKER: .*FAILURES\/WINDOW/,
      });
    }
  });
});
