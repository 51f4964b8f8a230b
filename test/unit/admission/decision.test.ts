import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { type AdmissionFacts, planAdmission, requestsAhead } from '../../../lib/admission/decision.ts';
import { loadConfig } from '../../../lib/config/index.ts';

const NOW = new Date('2026-11-21T10:00:00Z');
const ZONES: Record<string, Record<string, string>> = {
  a1: { zone: 'a' },
  a2: { zone: 'a' },
  b1: { zone: 'b' },
  b2: { zone: 'b' },
};

function facts(overrides: Partial<AdmissionFacts>): AdmissionFacts {
  return {
    requestId: 'r1',
    node: 'a1',
    now: NOW,
    heldNodes: [],
    maxHeldNodes: 1,
    queue: {},
    queueTtlSeconds: 180,
    labelsOf: (name) => ZONES[name] ?? {},
    ...overrides,
  };
}

describe('planAdmission', () => {
  it('admits into a free slot and takes the request off the queue', () => {
    const decision = planAdmission(
      facts({ queue: { r1: { node: 'a1', since: NOW.toISOString(), seen: NOW.toISOString() } } }),
    );
    assert.equal(decision.admit, true);
    assert.deepEqual(decision.queue, {});
  });

  it('joins a node that is already held without taking a slot', () => {
    assert.equal(planAdmission(facts({ heldNodes: ['a1'], maxHeldNodes: 1 })).admit, true);
  });

  it('queues when every slot is taken, naming the held nodes', () => {
    const holdersOf = (node: string) =>
      node === 'a1' ? [{ requestId: 'r0', requester: 'alice@ops', since: '2026-11-21T09:00:00.000Z' }] : [];
    const decision = planAdmission(facts({ node: 'b1', heldNodes: ['a1'], holdersOf }));
    assert.equal(decision.admit, false);
    assert.equal(
      decision.why,
      'all 1 maintenance slot(s) are in use (held: a1 (request r0 by alice@ops since 2026-11-21T09:00:00.000Z); a slot frees when that maintenance ends: drainbridge restore a1); 0 request(s) ahead',
    );
    assert.ok(decision.queue.r1, 'the request waits in the queue');
  });

  it('admits the oldest waiting request first; stale entries are dropped', () => {
    const old = new Date(NOW.getTime() - 60_000).toISOString();
    const stale = new Date(NOW.getTime() - 3600_000).toISOString();
    const queue = {
      r0: { node: 'b1', since: old, seen: old },
      dead: { node: 'b2', since: stale, seen: stale },
    };
    const younger = planAdmission(facts({ node: 'a1', queue }));
    assert.equal(younger.admit, false, 'r0 is older');
    assert.equal(younger.queue.dead, undefined, 'a request that stopped asking is forgotten');
    assert.equal(planAdmission(facts({ requestId: 'r0', node: 'b1', queue })).admit, true);
  });

  it('forgets the place of a request that already holds its node: it stands ahead of nobody', () => {
    const old = new Date(NOW.getTime() - 60_000).toISOString();
    // r0 was admitted to b1 (its hold is on the ledger) but its place stayed: its admitter's unlock was lost.
    const queue = { r0: { node: 'b1', since: old, seen: old } };
    const holdersOf = (node: string) => (node === 'b1' ? [{ requestId: 'r0', requester: 'x', since: old }] : []);
    const decision = planAdmission(facts({ node: 'a1', maxHeldNodes: 2, heldNodes: ['b1'], queue, holdersOf }));
    assert.equal(decision.admit, true, 'r1 gets the second slot: nothing waits ahead of it');
    assert.deepEqual(decision.queue, {}, 'and the left-behind place is gone from the queue written back');
    // The same place without the hold on the ledger is a waiting request: it goes first.
    const waiting = planAdmission(
      facts({ node: 'a1', maxHeldNodes: 2, heldNodes: ['a2'], queue, holdersOf: () => [] }),
    );
    assert.equal(waiting.admit, false);
    assert.ok(waiting.queue.r0);
  });

  it('applies label-selector limits on top of the total: one node per zone', () => {
    const limits = [
      { selector: 'zone=a', max: 1 },
      { selector: 'zone=b', max: 1 },
    ];
    const sameZone = planAdmission(facts({ node: 'a2', heldNodes: ['a1'], maxHeldNodes: 3, slotLimits: limits }));
    assert.equal(sameZone.admit, false);
    assert.match(sameZone.why, /limit of 1 held node\(s\) matching "zone=a" is reached \(held: a1; a slot frees/);
    assert.equal(
      planAdmission(facts({ node: 'b1', heldNodes: ['a1'], maxHeldNodes: 3, slotLimits: limits })).admit,
      true,
    );
  });

  it('never admits more nodes than the limits allow, whatever the order of requests', () => {
    const nodes = Object.keys(ZONES);
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...nodes), { maxLength: 12 }),
        fc.integer({ min: 1, max: 3 }),
        (asks, max) => {
          const held: string[] = [];
          for (const [i, node] of asks.entries()) {
            const decision = planAdmission(
              facts({
                requestId: `r${i}`,
                node,
                heldNodes: held,
                maxHeldNodes: max,
                slotLimits: [{ selector: 'zone=a', max: 1 }],
              }),
            );
            if (decision.admit && !held.includes(node)) held.push(node);
          }
          assert.ok(held.length <= max);
          assert.ok(held.filter((n) => ZONES[n]?.zone === 'a').length <= 1);
        },
      ),
    );
  });
});

describe('DRAINBRIDGE_SLOT_LIMITS', () => {
  it('parses SELECTOR=MAX pairs and names a bad one', () => {
    const config = loadConfig({
      DRAINBRIDGE_SLOT_LIMITS: 'topology.kubernetes.io/zone=zone-a=1; pool in (gpu,fpga)=2',
    });
    assert.deepEqual(config.slotLimits, [
      { selector: 'topology.kubernetes.io/zone=zone-a', max: 1 },
      { selector: 'pool in (gpu,fpga)', max: 2 },
    ]);
    assert.throws(() => loadConfig({ DRAINBRIDGE_SLOT_LIMITS: 'zone=a=zero' }), {
      message: /DRAINBRIDGE_SLOT_LIMITS\[0\]: "zone=a=zero" must be SELECTOR=MAX with MAX a whole number ≥ 1/,
    });
  });
});

describe('requestsAhead', () => {
  const now = new Date('2026-11-27T10:00:00Z');
  const entry = (node: string, since: string, seen = '2026-11-27T09:59:50Z') => ({ node, since, seen });
  const queue = {
    late: entry('node-4', '2026-11-27T09:50:00Z'),
    early: entry('node-2', '2026-11-27T09:40:00Z'),
    gone: entry('node-9', '2026-11-27T09:30:00Z', '2026-11-27T09:40:00Z'),
    middle: entry('node-3', '2026-11-27T09:45:00Z'),
  };
  it('counts the fresh requests that asked earlier; expired entries and unknown requests have no place', () => {
    const at = { now, ttlSeconds: 180 };
    assert.equal(requestsAhead(queue, 'early', at), 0);
    assert.equal(requestsAhead(queue, 'middle', at), 1);
    assert.equal(requestsAhead(queue, 'late', at), 2, 'the expired entry asked first but no longer counts');
    assert.equal(requestsAhead(queue, 'gone', at), undefined);
    assert.equal(requestsAhead(queue, 'nobody', at), undefined);
  });
});
