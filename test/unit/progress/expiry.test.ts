/** planExpiry and dueRecords (lib/progress/expiry.ts): when a record may go, and which go first. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Node } from '@kubernetes/client-node';
import type { EvacuationObject } from '../../../lib/clients/kube/paths.ts';
import { LEDGER_ANNOTATION } from '../../../lib/node/ledger.ts';
import { dueRecords, planExpiry } from '../../../lib/progress/expiry.ts';

const NOW = new Date('2030-01-10T12:00:00.000Z');
const hoursAgo = (hours: number) => new Date(NOW.getTime() - hours * 3_600_000).toISOString();

function record(requestId: string, finishedAt?: string): EvacuationObject {
  return {
    apiVersion: 'drainbridge.io/v1alpha1',
    kind: 'Evacuation',
    metadata: { name: requestId, resourceVersion: '7' },
    spec: { requestId, nodeName: 'node-1' },
    status: { phase: 'NodeDrained', ...(finishedAt ? { restore: { startedAt: finishedAt, finishedAt } } : {}) },
  };
}

function node(ledger?: string): V1Node {
  return { metadata: { name: 'node-1', annotations: ledger === undefined ? {} : { [LEDGER_ANNOTATION]: ledger } } };
}

const since = hoursAgo(30);
const held = JSON.stringify({ holds: { r1: { requester: 'a', origin: 'manual', since } }, released: {} });
const released = JSON.stringify({ holds: {}, released: { r1: since } });
const check = (over: Partial<Parameters<typeof planExpiry>[1]> = {}) => ({
  now: NOW,
  ttlHours: 24,
  node: node(released),
  stillRunning: false,
  ...over,
});

describe('planExpiry', () => {
  it('deletes a record restored more than the TTL ago whose node no longer holds the request (or is gone)', () => {
    assert.deepEqual(planExpiry(record('r1', hoursAgo(25)), check()), { action: 'delete' });
    assert.deepEqual(planExpiry(record('r1', hoursAgo(25)), check({ node: undefined })), { action: 'delete' });
    assert.deepEqual(planExpiry(record('r1', hoursAgo(25)), check({ node: node() })), { action: 'delete' });
  });

  it('keeps a record not restored, or restored less than the TTL ago (saying until when)', () => {
    assert.equal(planExpiry(record('r1'), check()).action, 'keep');
    const young = planExpiry(record('r1', hoursAgo(23)), check());
    assert.deepEqual(young, { action: 'keep', why: `it expires at ${hoursAgo(-1)}` });
    assert.equal(planExpiry(record('r1', hoursAgo(2)), check({ ttlHours: 1 })).action, 'delete');
  });

  it('keeps a record still needed: its node held by the request, its ledger unreadable, an execution claiming it', () => {
    const old = record('r1', hoursAgo(100));
    assert.match(JSON.stringify(planExpiry(old, check({ node: node(held) }))), /still held by the request/);
    assert.match(JSON.stringify(planExpiry(old, check({ node: node('{"holds": 1}') }))), /ledger cannot be read/);
    assert.match(JSON.stringify(planExpiry(old, check({ stillRunning: true }))), /an execution still claims/);
  });
});

describe('a request that never held its node (status.endedAt, set when it failed)', () => {
  const neverHeld = (endedAt: string): EvacuationObject => ({
    ...record('r2'),
    status: { phase: 'Failed', endedAt },
  });
  const free = node(JSON.stringify({ holds: {}, released: {} }));

  it('expires like a restored one: kept until the TTL, deleted after, still kept while held or claimed', () => {
    assert.deepEqual(planExpiry(neverHeld(hoursAgo(23)), check({ node: free })), {
      action: 'keep',
      why: `it expires at ${hoursAgo(-1)}`,
    });
    assert.deepEqual(planExpiry(neverHeld(hoursAgo(25)), check({ node: free })), { action: 'delete' });
    const heldByR2 = JSON.stringify({ holds: { r2: { requester: 'a', origin: 'manual', since } }, released: {} });
    assert.equal(planExpiry(neverHeld(hoursAgo(25)), check({ node: node(heldByR2) })).action, 'keep');
    assert.equal(planExpiry(neverHeld(hoursAgo(25)), check({ node: free, stillRunning: true })).action, 'keep');
    assert.deepEqual(
      dueRecords([neverHeld(hoursAgo(25)), record('r3', hoursAgo(26)), neverHeld(hoursAgo(1))], NOW, 24, 10).map(
        (r) => `${r.metadata.name}:${r.status?.endedAt ?? r.status?.restore?.finishedAt}`,
      ),
      [`r3:${hoursAgo(26)}`, `r2:${hoursAgo(25)}`],
    );
  });
});

describe('dueRecords', () => {
  it('only restored records past the TTL, oldest first, at most the limit', () => {
    const records = [
      record('young', hoursAgo(1)),
      record('older', hoursAgo(50)),
      record('never'),
      record('old', hoursAgo(30)),
      record('oldest', hoursAgo(70)),
    ];
    assert.deepEqual(
      dueRecords(records, NOW, 24, 10).map((r) => r.metadata.name),
      ['oldest', 'older', 'old'],
    );
    assert.deepEqual(
      dueRecords(records, NOW, 24, 2).map((r) => r.metadata.name),
      ['oldest', 'older'],
    );
  });
});
