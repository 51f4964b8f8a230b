/** The controllers' work queue: one pass per key per batch, and a slow pass holding its key. */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { SLOW_PASS_HOLD_FACTOR, WorkQueue } from '../../../sim/controllers/queue.ts';
import { createClock } from '../../../sim/store/clock.ts';
import type { Clock } from '../../../sim/store/types.ts';

function busyFor(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // a pass over thousands of objects, in miniature
  }
}

describe('work queue', () => {
  let clock: Clock | undefined;
  afterEach(() => clock?.stop());

  function queueOf(
    passMs: number,
    holdFactor?: number,
  ): { queue: WorkQueue; passes: { start: number; end: number }[] } {
    clock = createClock(1);
    const passes: { start: number; end: number }[] = [];
    const queue = new WorkQueue({
      name: 'test',
      clock,
      onError: (_, __, error) => assert.fail(String(error)),
      ...(holdFactor === undefined ? {} : { holdFactor }),
      reconcile: () => {
        const start = performance.now();
        busyFor(passMs);
        passes.push({ start, end: performance.now() });
        return undefined;
      },
    });
    return { queue, passes };
  }

  /** Marks the key once now and then once a millisecond for `count` more, each in its own turn. */
  async function markRepeatedly(queue: WorkQueue, count: number): Promise<void> {
    queue.add('k');
    for (let i = 0; i < count; i++) {
      await sleep(1);
      queue.add('k');
    }
  }

  it('folds the marks of one turn into one pass', async () => {
    const { queue, passes } = queueOf(0, SLOW_PASS_HOLD_FACTOR);
    queue.add('k');
    queue.add('k');
    queue.add('k');
    await sleep(20);
    assert.equal(passes.length, 1);
  });

  it('runs a cheap pass at every turn marked, hold or not', async () => {
    const { queue, passes } = queueOf(0, SLOW_PASS_HOLD_FACTOR);
    await markRepeatedly(queue, 4);
    await sleep(20);
    assert.equal(passes.length, 5);
  });

  it('holds a key whose pass was slow: the marks meanwhile fold into one later pass', async () => {
    const { queue, passes } = queueOf(6, SLOW_PASS_HOLD_FACTOR);
    await markRepeatedly(queue, 8);
    await sleep(120);
    const [first, second] = passes;
    assert.ok(first && second, `expected two passes, got ${passes.length}`);
    assert.equal(passes.length, 2);
    const took = first.end - first.start;
    // Timers may fire a fraction of a millisecond early; the hold is 3× the pass, at least 18 ms.
    assert.ok(second.start - first.end >= took * SLOW_PASS_HOLD_FACTOR - 1, `held ${second.start - first.end} ms`);
    queue.stop();
  });

  it('without a hold factor runs even a slow pass at every turn marked', async () => {
    const { queue, passes } = queueOf(6);
    await markRepeatedly(queue, 3);
    await sleep(60);
    assert.ok(passes.length >= 3, `expected a pass per turn, got ${passes.length}`);
    queue.stop();
  });
});
