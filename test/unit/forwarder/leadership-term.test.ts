/**
 * LeadershipTerm (lib/sources/term.ts), what the cluster sources keep per leadership term: each event is
 * offered once per term, offered again after a refused or dropped receipt, and a new term starts empty.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LeadershipTerm } from '../../../lib/sources/term.ts';
import type { ForwardedEvent, PublishReceipt } from '../../../lib/sources/types.ts';

function receipt(requestId: string, outcome: PublishReceipt['outcome']): PublishReceipt {
  const event = {
    detailType: 'Maintenance Ended',
    key: `test/${requestId}`,
    detail: { version: '1', requestId, requester: 'test', origin: 'manual', target: { nodeName: 'node-1' } },
  } as ForwardedEvent;
  return { event, outcome };
}

describe('LeadershipTerm', () => {
  it('leads between lead() and follow() or stop()', () => {
    const term = new LeadershipTerm();
    assert.equal(term.leading, false);
    term.lead();
    assert.equal(term.leading, true);
    term.stop();
    assert.equal(term.leading, false);
    term.lead();
    term.follow();
    assert.equal(term.leading, false);
  });

  it('offers an event once per term; the detail-type is part of what it remembers', () => {
    const term = new LeadershipTerm();
    assert.equal(term.offerOnce('Maintenance Ended', 'r-1'), true);
    assert.equal(term.offerOnce('Maintenance Ended', 'r-1'), false);
    assert.equal(term.offerOnce('Maintenance Requested', 'r-1'), true);
  });

  it('offers again after a refused or dropped receipt, not after a published one', () => {
    const term = new LeadershipTerm();
    for (const id of ['published', 'rejected', 'dropped'] as const) term.offerOnce('Maintenance Ended', id);
    term.receipt(receipt('published', 'published'));
    term.receipt(receipt('rejected', 'rejected'));
    term.receipt(receipt('dropped', 'dropped'));
    assert.equal(term.offerOnce('Maintenance Ended', 'published'), false);
    assert.equal(term.offerOnce('Maintenance Ended', 'rejected'), true);
    assert.equal(term.offerOnce('Maintenance Ended', 'dropped'), true);
  });

  it('forgets what it offered when leadership is lost (the new leader derives it again)', () => {
    const term = new LeadershipTerm();
    term.lead();
    term.offerOnce('Node Cordoned', 'r-1');
    term.follow();
    term.lead();
    assert.equal(term.offerOnce('Node Cordoned', 'r-1'), true);
  });
});
