/**
 * The publishing path through the real @aws-sdk/client-eventbridge to a PutEvents endpoint on the
 * in-process bus: batches within the limits, partially failed entries retried, coalescing per subject
 * while the bus is unreachable, refused events not retried, and a flush before stopping; a bus that is
 * down is retried at the pace of the backoff, not once per new event, and a flush cuts the backoff short.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { EVENTBRIDGE_CLIENT_DEFAULTS, EventBridgePublisher } from '../../lib/bus/eventbridge-publisher.ts';
import { InProcessBus } from '../../lib/bus/in-process-bus.ts';
import type { BusAdapter } from '../../lib/bus/types.ts';
import { createLogger } from '../../lib/log/logger.ts';
import { createForwarderMetrics } from '../../lib/sources/forwarder/metrics.ts';
import { Publisher } from '../../lib/sources/forwarder/publisher.ts';
import type { ForwardedEvent, PublishReceipt } from '../../lib/sources/types.ts';
import { type EventBridgeEndpoint, startEventBridgeEndpoint } from '../../sim/eventbridge/endpoint.ts';
import { waitUntil } from '../support/wait.ts';
import { metric } from './harness.ts';

const cordoned = (node: string, requestId = `cordon.${node}.1`): ForwardedEvent => ({
  key: `cordon/${node}`,
  detailType: 'Node Cordoned',
  detail: {
    version: '1',
    requestId,
    requester: 'kubectl',
    target: { nodeName: node },
    observedAt: '2026-11-21T10:00:00Z',
  },
});

/** The real SDK client, one attempt per call, to the local endpoint. */
const sdkClient = (url: string): EventBridgeClient =>
  new EventBridgeClient({
    ...EVENTBRIDGE_CLIENT_DEFAULTS,
    maxAttempts: 1,
    endpoint: url,
    region: 'eu-west-1',
    credentials: { accessKeyId: 'AKIDTEST', secretAccessKey: 'test' },
  });

describe('publishing to EventBridge (real SDK, local PutEvents endpoint)', () => {
  let bus: InProcessBus;
  let endpoint: EventBridgeEndpoint;
  let publisher: Publisher;
  const receipts: PublishReceipt[] = [];
  const metrics = createForwarderMetrics();

  before(async () => {
    bus = new InProcessBus({ rules: [], busName: 'drainbridge', start: async () => undefined });
    endpoint = await startEventBridgeEndpoint(bus);
    publisher = new Publisher({
      sink: new EventBridgePublisher(sdkClient(endpoint.url), 'drainbridge'),
      capacity: 100,
      metrics,
      logger: createLogger('publisher-test', 'ERROR'),
      onReceipt: (receipt) => receipts.push(receipt),
      backoff: { baseMs: 20, maxMs: 100 },
    });
    publisher.start();
    publisher.activate();
  });
  after(async () => {
    await publisher?.stop();
    await endpoint?.close();
  });

  it('sends 25 events in batches of at most 10', async () => {
    const start = endpoint.calls.length;
    for (let i = 0; i < 25; i++) publisher.offer(cordoned(`n${i}`));
    assert.equal(await publisher.flush(10_000), true);
    const calls = endpoint.calls.slice(start);
    assert.ok(calls.every((c) => c.entries <= 10 && c.status === 200));
    assert.equal(
      calls.reduce((s, c) => s + c.entries, 0),
      25,
    );
    assert.equal(bus.accepted.length, 25);
  });

  it('throttled entries are retried until accepted', async () => {
    const heal = endpoint.throttleEntries();
    publisher.offer(cordoned('t1'));
    await waitUntil(
      'retried at least twice',
      async () =>
        metric(await metrics.registry.metrics(), 'drainbridge_forwarder_publish_failures_total', {
          kind: 'transient',
        }) >= 2,
    );
    heal();
    assert.equal(await publisher.flush(10_000), true);
    assert.ok(bus.accepted.some((e) => (e.detail.target as { nodeName: string }).nodeName === 't1'));
  });

  it('while the bus is unreachable, events coalesce per subject; all go out once it is back', async () => {
    const heal = endpoint.failCalls();
    publisher.offer(cordoned('u1', 'first'));
    await waitUntil('a failed call', () => endpoint.calls.at(-1)?.status === 500);
    publisher.offer(cordoned('u1', 'second'));
    publisher.offer(cordoned('u2'));
    assert.ok(publisher.depth <= 2, `one waiting event per subject (depth ${publisher.depth})`);
    heal();
    assert.equal(await publisher.flush(10_000), true);
    const u1 = bus.accepted
      .filter((e) => (e.detail.target as { nodeName: string }).nodeName === 'u1')
      .map((e) => e.detail.requestId);
    assert.deepEqual(u1, ['second'], 'the newer state of u1 replaced the waiting one');
  });

  it('an invalid event is refused alone and not retried', async () => {
    const bad = cordoned('bad');
    (bad.detail as { requestId: string }).requestId = 'not valid!';
    publisher.offer(bad);
    publisher.offer(cordoned('good'));
    assert.equal(await publisher.flush(10_000), true);
    assert.equal(receipts.find((r) => r.event.key === 'cordon/bad')?.outcome, 'rejected');
    assert.equal(receipts.find((r) => r.event.key === 'cordon/good')?.outcome, 'published');
  });

  it('while the bus is down new events wait out the backoff (no call per event); a flush cuts it short', async () => {
    // The bus adapter's sends, counted as the loop makes them (the loop calls send in the same turn an offer would
    // wake it): an offer that ended the backoff would show before the next setImmediate, however loaded the
    // machine. The backoff is a minute, so only the flush below can end it.
    const inner = new EventBridgePublisher(sdkClient(endpoint.url), 'drainbridge');
    let sends = 0;
    const counting: BusAdapter = {
      name: inner.name,
      busName: inner.busName,
      maxBatch: inner.maxBatch,
      publish: (detailType, detail) => inner.publish(detailType, detail),
      fits: (events) => inner.fits(events),
      send: (events, signal) => {
        sends++;
        return inner.send(events, signal);
      },
    };
    const slow = new Publisher({
      sink: counting,
      capacity: 100,
      metrics: createForwarderMetrics(),
      logger: createLogger('publisher-test', 'ERROR'),
      onReceipt: () => undefined,
      backoff: { baseMs: 60_000, maxMs: 60_000 },
    });
    slow.start();
    slow.activate();
    const heal = endpoint.failCalls();
    try {
      const start = endpoint.calls.length;
      slow.offer(cordoned('b0'));
      await waitUntil('the first send failed', () => endpoint.calls.length === start + 1 && slow.depth === 1);
      // Five more events during the backoff, the loop given its turn after each.
      for (let i = 1; i <= 5; i++) {
        slow.offer(cordoned(`b${i}`));
        await new Promise((resolve) => setImmediate(resolve));
      }
      assert.equal(sends, 1, 'no send before the backoff ends');
      assert.equal(endpoint.calls.length, start + 1);
      assert.equal(slow.depth, 6);
      heal();
      const flushedAt = Date.now();
      assert.equal(await slow.flush(4000), true, 'the flush sent them without waiting out the backoff');
      assert.ok(Date.now() - flushedAt < 4000);
      assert.deepEqual(
        endpoint.calls.slice(start).map((c) => c.status),
        [500, 200],
      );
    } finally {
      heal();
      await slow.stop();
    }
  });
});
