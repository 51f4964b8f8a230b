import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { type AdmissionFacts, planAdmission } from '../../../lib/admission/decision.ts';
import type { PoolNode } from '../../../lib/admission/spread.ts';
import { loadConfig } from '../../../lib/config/index.ts';

const NOW = new Date('2026-11-21T10:00:00Z');
const ZONE = 'topology.kubernetes.io/zone';
// Six nodes in three zones, and one with no zone label at all.
const LABELS: Record<string, Record<string, string>> = {
  a1: { [ZONE]: 'zone-a' },
  a2: { [ZONE]: 'zone-a' },
  b1: { [ZONE]: 'zone-b' },
  b2: { [ZONE]: 'zone-b' },
  c1: { [ZONE]: 'zone-c' },
  c2: { [ZONE]: 'zone-c' },
  bare: {},
};

function facts(overrides: Partial<AdmissionFacts>): AdmissionFacts {
  return {
    requestId: 'r1',
    node: 'a1',
    now: NOW,
    heldNodes: [],
    maxHeldNodes: 10,
    queue: {},
    queueTtlSeconds: 180,
    labelsOf: (name) => LABELS[name] ?? {},
    ...overrides,
  };
}

const WORKER = 'node-role.kubernetes.io/worker';
const worker = (name: string, schedulable = true): PoolNode => ({ name, labels: { [WORKER]: '' }, schedulable });

describe('spread limits (one node per zone, for every zone)', () => {
  const spreadLimits = [{ key: ZONE, max: 1 }];

  it('holds back a second node of a zone, naming the zone and the node in maintenance, and keeps its place', () => {
    const decision = planAdmission(facts({ node: 'a2', heldNodes: ['a1'], spreadLimits }));
    assert.equal(decision.admit, false);
    assert.equal(
      decision.why,
      'topology.kubernetes.io/zone=zone-a already has 1 node(s) in maintenance (a1); at most 1 per topology.kubernetes.io/zone (DRAINBRIDGE_SPREAD_LIMITS)',
    );
    assert.ok(decision.queue.r1, 'it waits in line');
    assert.equal(decision.admit === false && decision.limited, true, 'at the slower pace of a limited request');
  });

  it('admits a node of another zone, and a node without the key', () => {
    assert.equal(planAdmission(facts({ node: 'b1', heldNodes: ['a1'], spreadLimits })).admit, true);
    assert.equal(planAdmission(facts({ node: 'bare', heldNodes: ['a1', 'b1', 'c1'], spreadLimits })).admit, true);
  });

  it('allows MAX per zone', () => {
    const two = [{ key: ZONE, max: 2 }];
    assert.equal(planAdmission(facts({ node: 'a2', heldNodes: ['a1'], spreadLimits: two })).admit, true);
  });

  it('never holds two nodes of one zone, whatever the order of requests and releases', () => {
    const nodes = Object.keys(LABELS);
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom(...nodes), fc.boolean()), { maxLength: 20 }), (steps) => {
        const held: string[] = [];
        for (const [i, [node, release]] of steps.entries()) {
          if (release && held.includes(node)) {
            held.splice(held.indexOf(node), 1);
            continue;
          }
          const decision = planAdmission(facts({ requestId: `r${i}`, node, heldNodes: held, spreadLimits }));
          if (decision.admit && !held.includes(node)) held.push(node);
        }
        for (const zone of ['zone-a', 'zone-b', 'zone-c']) {
          assert.ok(held.filter((name) => LABELS[name]?.[ZONE] === zone).length <= 1, `one of ${zone}`);
        }
      }),
    );
  });
});

describe('minimum schedulable nodes per pool', () => {
  const minSchedulable = [{ selector: WORKER, min: 2 }];
  const labelsOf = (name: string): Record<string, string> => (name.startsWith('w') ? { [WORKER]: '' } : {});

  it('waits rather than leave fewer than MIN schedulable, naming those that would remain', () => {
    const pool = [worker('w1'), worker('w2'), worker('w3')];
    const ok = planAdmission(facts({ node: 'w1', labelsOf, minSchedulable, pool }));
    assert.equal(ok.admit, true, 'w2 and w3 remain');
    const decision = planAdmission(facts({ node: 'w2', heldNodes: ['w1'], labelsOf, minSchedulable, pool }));
    assert.equal(decision.admit, false);
    assert.equal(
      decision.why,
      'only 1 schedulable node(s) would remain in pool "node-role.kubernetes.io/worker" (w3); at least 2 must stay (DRAINBRIDGE_MIN_SCHEDULABLE)',
    );
    assert.ok(decision.queue.r1, 'it keeps its place in line');
  });

  it('counts a NotReady or cordoned node as gone, and does not hold back a node that is not schedulable itself', () => {
    const pool = [worker('w1'), worker('w2'), worker('w3', false)];
    assert.equal(planAdmission(facts({ node: 'w1', labelsOf, minSchedulable, pool })).admit, false);
    // Draining w3 (already cordoned or NotReady) takes no capacity away.
    assert.equal(planAdmission(facts({ node: 'w3', labelsOf, minSchedulable, pool })).admit, true);
  });

  it('binds only nodes of the pool', () => {
    const pool = [worker('w1'), worker('w2')];
    assert.equal(planAdmission(facts({ node: 'a1', labelsOf, minSchedulable, pool })).admit, true);
  });
});

describe('DRAINBRIDGE_SPREAD_LIMITS and DRAINBRIDGE_MIN_SCHEDULABLE', () => {
  it('parse their lists', () => {
    const config = loadConfig({
      DRAINBRIDGE_SPREAD_LIMITS: 'topology.kubernetes.io/zone=1; rack=2',
      DRAINBRIDGE_MIN_SCHEDULABLE: 'node-role.kubernetes.io/worker=2; pool in (gpu,fpga)=1',
    });
    assert.deepEqual(config.spreadLimits, [
      { key: ZONE, max: 1 },
      { key: 'rack', max: 2 },
    ]);
    assert.deepEqual(config.minSchedulable, [
      { selector: WORKER, min: 2 },
      { selector: 'pool in (gpu,fpga)', min: 1 },
    ]);
    assert.deepEqual(loadConfig({}).spreadLimits, []);
  });

  it('refuse bad entries, naming the variable', () => {
    for (const bad of ['topology.kubernetes.io/zone', 'zone=0', 'zone=a=1', 'zone in (a)=1', '=1', 'zone=one']) {
      assert.throws(() => loadConfig({ DRAINBRIDGE_SPREAD_LIMITS: bad }), {
        message: /DRAINBRIDGE_SPREAD_LIMITS\[0\]: .* must be LABEL_KEY=MAX/,
      });
    }
    assert.throws(() => loadConfig({ DRAINBRIDGE_MIN_SCHEDULABLE: 'worker=0' }), {
      message: /DRAINBRIDGE_MIN_SCHEDULABLE\[0\]: "worker=0" must be SELECTOR=MIN/,
    });
    assert.throws(() => loadConfig({ DRAINBRIDGE_MIN_SCHEDULABLE: 'pool in (gpu=2' }), {
      message: /DRAINBRIDGE_MIN_SCHEDULABLE\[0\]: "pool in \(gpu" is not a valid label selector/,
    });
  });
});

describe('the reason kept on a place in line', () => {
  it('is the limit a request waits on, capped in length; none when it waits for the cluster-wide slots', () => {
    const spreadLimits = [{ key: ZONE, max: 1 }];
    const limited = planAdmission(facts({ node: 'a2', heldNodes: ['a1'], spreadLimits }));
    assert.match(limited.queue.r1?.why ?? '', /^topology\.kubernetes\.io\/zone=zone-a already has 1 node\(s\)/);
    const many = Array.from({ length: 40 }, (_, i) => `a-node-with-a-long-name-${i}`);
    const long = planAdmission(
      facts({
        node: 'a2',
        heldNodes: many,
        labelsOf: (): Record<string, string> => ({ [ZONE]: 'zone-a' }),
        spreadLimits: [{ key: ZONE, max: 40 }],
      }),
    );
    assert.equal(long.queue.r1?.why?.length, 240);
    const slot = planAdmission(facts({ node: 'b1', heldNodes: ['a1'], maxHeldNodes: 1, queue: limited.queue }));
    assert.equal(slot.admit, false);
    assert.equal(slot.queue.r1?.why, undefined, 'a wait for the slots drops the old reason');
    assert.equal(slot.queue.r1?.whyAt, undefined, 'and when it was decided');
  });

  it('says when it was decided: `drainbridge status` tells a reason kept since from a current one', () => {
    const limited = planAdmission(facts({ node: 'a2', heldNodes: ['a1'], spreadLimits: [{ key: ZONE, max: 1 }] }));
    assert.equal(limited.queue.r1?.whyAt, NOW.toISOString());
    assert.equal(limited.queue.r1?.whyAt, limited.queue.r1?.seen);
  });
});
