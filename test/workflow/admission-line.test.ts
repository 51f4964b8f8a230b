/**
 * Entering the line when others enter at the same moment: a request's place is written without the
 * mutex, conditional on the Lease as it read it. When another waiter wrote first (a hundred requests
 * arriving within a second), the write reads the Lease again and puts its place onto that — within the
 * same attempt — instead of losing its place until its next Step Functions retry.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { admitRequest } from '../../lib/admission/index.ts';
import { ADMISSION_LEASE, QUEUE_ANNOTATION, readQueue } from '../../lib/admission/records.ts';
import { SlotUnavailable } from '../../lib/errors/index.ts';
import type { ResolvedRequest } from '../../lib/model/request.ts';
import { KUBECTL_DRAIN_DEFAULTS } from '../../lib/model/request.ts';
import { type DrainSim, startDrainSim } from '../drain/harness.ts';

const NAMESPACE = 'drainbridge';
const SETTINGS = { namespace: NAMESPACE, maxHeldNodes: 1 };

function requestFor(node: string): ResolvedRequest {
  return {
    requestId: `line-${node}`,
    requester: 'alice@ops',
    origin: 'manual',
    target: { nodeName: node },
    nodeName: node,
    reason: 'admission line test',
    drain: KUBECTL_DRAIN_DEFAULTS,
  };
}

describe('entering the line at the same moment as another request', () => {
  let w: DrainSim;
  before(async () => {
    w = await startDrainSim('small');
  });
  after(async () => {
    await w?.stop();
  });

  it('a place written on a Lease another waiter changed meanwhile lands in the same attempt, beside theirs', async () => {
    const holder = await admitRequest(w.client, requestFor('node-1'), SETTINGS, { now: new Date() });
    assert.equal(holder.acquired, true, 'node-1 takes the only slot');
    // What the late request read before the other one wrote its place.
    const stale = await w.client.getLease(NAMESPACE, ADMISSION_LEASE);
    const first = requestFor('node-2');
    await assert.rejects(admitRequest(w.client, first, SETTINGS, { now: new Date() }), SlotUnavailable);
    const late = requestFor('node-3');
    await assert.rejects(
      admitRequest(w.client, late, SETTINGS, { now: new Date(), lease: stale }),
      (error: unknown) => error instanceof SlotUnavailable && /node node-3/.test(error.message),
    );
    const lease = await w.client.getLease(NAMESPACE, ADMISSION_LEASE);
    assert.notEqual(lease.metadata?.resourceVersion, stale.metadata?.resourceVersion);
    const queue = readQueue(lease);
    assert.deepEqual(Object.keys(queue).sort(), [first.requestId, late.requestId]);
    assert.ok(
      Date.parse(queue[first.requestId]?.since ?? '') <= Date.parse(queue[late.requestId]?.since ?? ''),
      `the earlier request stays ahead: ${lease.metadata?.annotations?.[QUEUE_ANNOTATION]}`,
    );
  });
});
