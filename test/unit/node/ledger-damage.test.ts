/**
 * Issue 12, item 1 (unit level): a damaged ledger is a blocker, never read as empty. Every way the tester
 * damaged it is unreadable; every decision that reads it stops with RecordUnreadable naming the node and
 * the record; the node still counts as held. A huge ledger (3,000 holds) is read, released from and
 * refused a new hold without crashing.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { V1Node } from '@kubernetes/client-node';
import { RecordUnreadable } from '../../../lib/errors/index.ts';
import {
  countHeldNodes,
  countsAsHeld,
  fitLedger,
  isUncordonedOutOfBand,
  LEDGER_ANNOTATION,
  LEDGER_BUDGET_BYTES,
  ledgerBytes,
  ledgerOf,
  planHold,
  planOutOfBandMark,
  planRelease,
  readLedger,
} from '../../../lib/node/ledger.ts';
import { NOW, node } from '../drain/fixtures.ts';

const SINCE = '2026-01-01T00:00:00.000Z';
const HOLD = { requester: 'alice', origin: 'manual', since: SINCE };
const CHANGES = { priorUnschedulable: false, cordoned: true, annotations: {}, taints: [] };

/** The damage the tester did, each as the annotation's text. */
export const DAMAGED_LEDGERS: Readonly<Record<string, string>> = {
  'not JSON': '{"holds": {"req-1": ',
  null: 'null',
  'an array': '[{"holds":{}}]',
  'a number': '42',
  'holds a string': JSON.stringify({ holds: 'req-1', released: {}, changes: CHANGES }),
  'a hold that is null': JSON.stringify({ holds: { 'req-1': null }, released: {}, changes: CHANGES }),
  'a hold that is a number': JSON.stringify({ holds: { 'req-1': 7 }, released: {}, changes: CHANGES }),
  'changes a string': JSON.stringify({ holds: { 'req-1': HOLD }, released: {}, changes: 'cordoned' }),
  'a tombstone with a bad date': JSON.stringify({ holds: {}, released: { 'req-0': 'yesterday' } }),
  'a hold with a bad since': JSON.stringify({ holds: { 'req-1': { ...HOLD, since: 'now' } }, released: {} }),
  'released missing': JSON.stringify({ holds: { 'req-1': HOLD }, changes: CHANGES }),
  'a newer format version': JSON.stringify({ $version: 9, holds: {}, released: {} }),
};

function damaged(text: string, name = 'node-a'): V1Node {
  return node({ name, unschedulable: true, annotations: { [LEDGER_ANNOTATION]: text } });
}

describe('issue 12 item 1: a damaged ledger is a blocker, never read as empty', () => {
  for (const [what, text] of Object.entries(DAMAGED_LEDGERS)) {
    test(`${what}: unreadable, every decision stops naming node and record, the node counts as held`, () => {
      const target = damaged(text);
      const read = ledgerOf(target);
      assert.equal(read.status, 'unreadable');
      const isBlocker = (error: unknown) =>
        error instanceof RecordUnreadable &&
        error.nodeName === 'node-a' &&
        /ledger \(node annotation drainbridge\.io\/ledger\)/.test(error.message) &&
        /drainbridge repair node-a/.test(error.message);
      assert.throws(() => readLedger(target), isBlocker);
      assert.throws(() => planHold(target, { requestId: 'req-2', requester: 'bob', origin: 'manual' }, NOW), isBlocker);
      assert.throws(() => planRelease(target, 'req-1', NOW), isBlocker);
      assert.throws(() => isUncordonedOutOfBand(target), isBlocker);
      assert.throws(() => planOutOfBandMark(target, NOW), isBlocker);
      assert.equal(countsAsHeld(target), true, 'an unreadable ledger counts as held');
      assert.equal(countHeldNodes([target, node({ name: 'node-b' })]), 1);
    });
  }

  test('a missing annotation is an empty ledger (nothing damaged, nothing held)', () => {
    assert.deepEqual(ledgerOf(node()), { status: 'ok', ledger: { holds: {}, released: {} } });
    assert.equal(countsAsHeld(node()), false);
  });
});

/** A ledger of `holds` holds with short ids, as large as the apiserver would still store on a node. */
function bigLedger(holds: number): string {
  const entries = Object.fromEntries(Array.from({ length: holds }, (_, i) => [`r${i}`, HOLD]));
  return JSON.stringify({ holds: entries, released: {}, changes: CHANGES });
}

describe('issue 12 item 1: a huge ledger (3,000 holds) is handled on every path', () => {
  const text = bigLedger(3000);
  const huge = damaged(text);

  test("it is readable and under the apiserver limit, but over drainbridge's budget", () => {
    const ledger = readLedger(huge);
    assert.equal(Object.keys(ledger.holds).length, 3000);
    assert.ok(Buffer.byteLength(text) < 256 * 1024, `${Buffer.byteLength(text)} bytes fit the apiserver's limit`);
    assert.ok(ledgerBytes(ledger) > LEDGER_BUDGET_BYTES);
    assert.equal(countsAsHeld(huge), true);
  });

  test('a new hold is refused with a reason that says what to do, not written', () => {
    const decision = planHold(huge, { requestId: 'one-more', requester: 'bob', origin: 'manual' }, NOW);
    assert.equal(decision.action, 'refuse');
    if (decision.action !== 'refuse') return;
    assert.match(decision.why, /node node-a already has 3000 maintenance holds/);
    assert.match(decision.why, /drainbridge restore/);
  });

  test('releasing one hold works and the ledger shrinks', () => {
    const decision = planRelease(huge, 'r17', NOW);
    assert.equal(decision.action, 'patch');
    if (decision.action !== 'patch') return;
    assert.equal(decision.last, false);
    const annotations = (decision.patch.metadata as { annotations: Record<string, string> }).annotations;
    const written = annotations[LEDGER_ANNOTATION] ?? '';
    assert.ok(written.length < text.length + 64);
    assert.equal(Object.keys(JSON.parse(written).holds).length, 2999);
  });

  test('tombstones are dropped oldest first to stay within the budget; holds never are', () => {
    const released = Object.fromEntries(
      Array.from({ length: 6000 }, (_, i) => [`old-${i}`, new Date(Date.parse(SINCE) + i * 1000).toISOString()]),
    );
    const ledger = { holds: { 'req-1': HOLD }, released, changes: CHANGES };
    const fitted = fitLedger(ledger);
    assert.ok(fitted);
    assert.ok(ledgerBytes(fitted) <= LEDGER_BUDGET_BYTES);
    assert.deepEqual(Object.keys(fitted.holds), ['req-1']);
    assert.ok(Object.hasOwn(fitted.released, 'old-5999'), 'the newest tombstone is kept');
    assert.ok(!Object.hasOwn(fitted.released, 'old-0'), 'the oldest went first');
  });
});
