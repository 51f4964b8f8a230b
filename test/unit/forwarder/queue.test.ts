/** The forwarder's coalescing queue and PutEvents batching. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chunkEntries, entrySize, fitsOnePut, MAX_PUT_BYTES } from '../../../lib/bus/batch.ts';
import { CoalescingQueue } from '../../../lib/sources/forwarder/queue.ts';
import type { ForwardedEvent } from '../../../lib/sources/types.ts';

const event = (key: string, requestId = key): ForwardedEvent => ({
  key,
  detailType: 'Node Cordoned',
  detail: {
    version: '1',
    requestId,
    requester: 'kubectl',
    target: { nodeName: 'node-1' },
    observedAt: '2026-11-21T10:00:00Z',
  },
});

describe('CoalescingQueue', () => {
  it('keeps one event per key (the newest), in the place of the first', () => {
    const queue = new CoalescingQueue(10);
    queue.offer(event('a', 'a1'));
    queue.offer(event('b'));
    assert.deepEqual(queue.offer(event('a', 'a2')), { coalesced: true });
    assert.deepEqual(
      queue.take(10).map((e) => e.detail.requestId),
      ['a2', 'b'],
    );
  });

  it('full: drops the oldest and says which', () => {
    const queue = new CoalescingQueue(2);
    queue.offer(event('a'));
    queue.offer(event('b'));
    assert.equal(queue.offer(event('c')).dropped?.key, 'a');
    assert.equal(queue.depth, 2);
  });

  it('failed events go back to the front unless a newer one for the key arrived', () => {
    const queue = new CoalescingQueue(10);
    queue.offer(event('a', 'a1'));
    queue.offer(event('b'));
    const batch = queue.take(2);
    queue.offer(event('a', 'a2'));
    queue.offer(event('c'));
    queue.requeue(batch);
    assert.deepEqual(
      queue.take(10).map((e) => e.detail.requestId),
      ['b', 'a2', 'c'],
    );
  });

  it('take respects the batch limit and the size check', () => {
    const queue = new CoalescingQueue(20);
    for (let i = 0; i < 15; i++) queue.offer(event(`k${i}`));
    assert.equal(queue.take(10).length, 10);
    assert.equal(queue.take(10, (batch) => batch.length <= 3).length, 3);
  });
});

describe('PutEvents batching', () => {
  const entry = (bytes: number) => ({
    Source: 'drainbridge.cluster',
    DetailType: 'Node Cordoned',
    Detail: 'x'.repeat(bytes),
    EventBusName: 'b',
  });

  it('counts an entry as EventBridge does', () => {
    assert.equal(entrySize(entry(100)), 'drainbridge.cluster'.length + 'Node Cordoned'.length + 100);
    assert.equal(
      entrySize({ ...entry(0), Time: new Date() }),
      'drainbridge.cluster'.length + 'Node Cordoned'.length + 14,
    );
  });

  it('at most 10 entries and 256 KiB per call', () => {
    assert.equal(fitsOnePut(Array.from({ length: 10 }, () => entry(10))), true);
    assert.equal(fitsOnePut(Array.from({ length: 11 }, () => entry(10))), false);
    const big = entry(100 * 1024);
    assert.deepEqual(
      chunkEntries([big, big, big, entry(10)]).map((b) => b.length),
      [2, 2],
    );
    for (const batch of chunkEntries(Array.from({ length: 25 }, () => entry(30_000)))) {
      assert.ok(batch.reduce((s, e) => s + entrySize(e), 0) <= MAX_PUT_BYTES && batch.length <= 10);
    }
  });
});
