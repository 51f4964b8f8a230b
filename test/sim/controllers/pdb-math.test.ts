import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  type BudgetPod,
  computeBudgetStatus,
  DELETION_TIMEOUT_MS,
  expectedAndDesired,
  pruneDisruptedPods,
  type ScaleLookup,
  scaledValue,
} from '../../../sim/controllers/pdb-math.ts';

const NOW = Date.parse('2026-01-01T00:10:00Z');
const iso = (ms: number): string => `${new Date(ms).toISOString().slice(0, 19)}Z`;

function pod(name: string, opts: { ready?: boolean; deleting?: boolean; owner?: string } = {}): BudgetPod {
  return {
    metadata: {
      name,
      ...(opts.deleting ? { deletionTimestamp: iso(NOW) } : {}),
      ...(opts.owner === undefined
        ? {}
        : {
            ownerReferences: [
              {
                apiVersion: 'apps/v1',
                kind: 'ReplicaSet',
                name: opts.owner,
                uid: `uid-${opts.owner}`,
                controller: true,
              },
            ],
          }),
    },
    status: { conditions: [{ type: 'Ready', status: opts.ready === false ? 'False' : 'True' }] },
  };
}

const scales: ScaleLookup = (ref) => ({ uid: ref.uid, scale: ref.name === 'big' ? 10 : 4 });

describe('scaledValue (GetScaledValueFromIntOrPercent, rounding up)', () => {
  const cases: [number | string, number, number][] = [
    [3, 10, 3],
    ['50%', 4, 2],
    ['50%', 5, 3],
    ['10%', 5, 1],
    ['0%', 5, 0],
    ['100%', 7, 7],
    ['34%', 3, 2],
  ];
  for (const [value, total, expected] of cases) {
    it(`${value} of ${total} → ${expected}`, () => assert.equal(scaledValue(value, total), expected));
  }
  it('rejects a string that is not a percentage', () => {
    assert.throws(() => scaledValue('5', 10), /not a percentage/);
  });
});

describe('expectedAndDesired', () => {
  const pods = [pod('a', { owner: 'rs' }), pod('b', { owner: 'rs' }), pod('c', { owner: 'rs' })];
  const cases: [string, Parameters<typeof expectedAndDesired>[0], { expectedCount: number; desiredHealthy: number }][] =
    [
      ['int minAvailable counts matching pods', { minAvailable: 2 }, { expectedCount: 3, desiredHealthy: 2 }],
      [
        'percent minAvailable uses controller scale, rounds up',
        { minAvailable: '30%' },
        { expectedCount: 4, desiredHealthy: 2 },
      ],
      ['int maxUnavailable', { maxUnavailable: 1 }, { expectedCount: 4, desiredHealthy: 3 }],
      ['percent maxUnavailable rounds up', { maxUnavailable: '30%' }, { expectedCount: 4, desiredHealthy: 2 }],
      ['maxUnavailable above scale floors at 0', { maxUnavailable: 9 }, { expectedCount: 4, desiredHealthy: 0 }],
      ['neither field', {}, { expectedCount: 0, desiredHealthy: 0 }],
    ];
  for (const [name, spec, expected] of cases) {
    it(name, () => {
      const { expectedCount, desiredHealthy } = expectedAndDesired(spec, pods, scales);
      assert.deepEqual({ expectedCount, desiredHealthy }, expected);
    });
  }

  it('sums distinct controllers and reports unmanaged pods', () => {
    const mixed = [pod('a', { owner: 'rs' }), pod('b', { owner: 'big' }), pod('c', { owner: 'big' }), pod('bare')];
    assert.deepEqual(expectedAndDesired({ maxUnavailable: 0 }, mixed, scales), {
      expectedCount: 14,
      desiredHealthy: 14,
      unmanaged: ['bare'],
    });
  });

  it('fails when a controller is unknown', () => {
    assert.throws(
      () => expectedAndDesired({ maxUnavailable: 1 }, pods, () => undefined),
      /found no controllers for pod "a"/,
    );
  });
});

describe('pruneDisruptedPods', () => {
  it('keeps fresh entries of live pods, drops deleting, expired and missing ones', () => {
    const pods = [pod('fresh'), pod('old'), pod('gone-deleting', { deleting: true })];
    const disrupted = {
      fresh: iso(NOW - 30_000),
      old: iso(NOW - DELETION_TIMEOUT_MS - 1000),
      'gone-deleting': iso(NOW - 1000),
      missing: iso(NOW - 1000),
    };
    const { kept, recheckAtMs } = pruneDisruptedPods(pods, disrupted, NOW);
    assert.deepEqual(kept, { fresh: disrupted.fresh });
    assert.equal(recheckAtMs, Date.parse(disrupted.fresh) + DELETION_TIMEOUT_MS);
  });
});

describe('computeBudgetStatus', () => {
  const base = { generation: 3, scaleOf: scales, nowMs: NOW };

  it('allows currentHealthy - desiredHealthy disruptions and says so in the condition', () => {
    const pods = [
      pod('a', { owner: 'rs' }),
      pod('b', { owner: 'rs' }),
      pod('c', { owner: 'rs', ready: false }),
      pod('d', { owner: 'rs', deleting: true }),
    ];
    const { status } = computeBudgetStatus({ ...base, spec: { minAvailable: 1 }, pods });
    assert.equal(status.currentHealthy, 2);
    assert.equal(status.desiredHealthy, 1);
    assert.equal(status.expectedPods, 4);
    assert.equal(status.disruptionsAllowed, 1);
    assert.equal(status.observedGeneration, 3);
    assert.deepEqual(
      status.conditions.map((c) => [c.type, c.status, c.reason]),
      [['DisruptionAllowed', 'True', 'SufficientPods']],
    );
  });

  it('does not count a pod with a fresh disruptedPods entry, and asks for a recheck when it expires', () => {
    const pods = [pod('a', { owner: 'rs' }), pod('b', { owner: 'rs' })];
    const sync = computeBudgetStatus({
      ...base,
      spec: { minAvailable: 1 },
      pods,
      previous: { disruptedPods: { a: iso(NOW - 1000) } },
    });
    assert.equal(sync.status.currentHealthy, 1);
    assert.equal(sync.status.disruptionsAllowed, 0);
    assert.deepEqual(sync.status.disruptedPods, { a: iso(NOW - 1000) });
    assert.equal(sync.recheckAtMs, NOW - 1000 + DELETION_TIMEOUT_MS);
    assert.equal(sync.status.conditions[0]?.reason, 'InsufficientPods');
  });

  it('allows nothing while no pods match (expectedCount 0)', () => {
    const { status } = computeBudgetStatus({ ...base, spec: { maxUnavailable: 1 }, pods: [] });
    assert.equal(status.disruptionsAllowed, 0);
    assert.equal(status.expectedPods, 0);
  });

  it('fails safe with SyncFailed when the scale cannot be found', () => {
    const sync = computeBudgetStatus({
      ...base,
      spec: { maxUnavailable: 1 },
      pods: [pod('a', { owner: 'rs' })],
      scaleOf: () => undefined,
    });
    assert.match(sync.error ?? '', /found no controllers/);
    assert.equal(sync.status.disruptionsAllowed, 0);
    assert.equal(sync.status.conditions[0]?.reason, 'SyncFailed');
  });

  it('keeps the condition transition time while the status stays the same', () => {
    const pods = [pod('a', { owner: 'rs' }), pod('b', { owner: 'rs' })];
    const first = computeBudgetStatus({ ...base, spec: { minAvailable: 1 }, pods });
    const later = computeBudgetStatus({
      ...base,
      nowMs: NOW + 60_000,
      spec: { minAvailable: 1 },
      pods,
      previous: first.status,
    });
    assert.equal(later.status.conditions[0]?.lastTransitionTime, first.status.conditions[0]?.lastTransitionTime);
  });

  it('never allows a negative number, nor more than the healthy pods', () => {
    fc.assert(
      fc.property(
        fc.array(fc.boolean(), { maxLength: 12 }),
        fc.integer({ min: 0, max: 15 }),
        (readiness, minAvailable) => {
          const pods = readiness.map((ready, i) => pod(`p${i}`, { owner: 'rs', ready }));
          const { status } = computeBudgetStatus({ ...base, spec: { minAvailable }, pods });
          return (
            status.disruptionsAllowed >= 0 &&
            status.disruptionsAllowed <= status.currentHealthy &&
            status.disruptionsAllowed ===
              Math.max(0, readiness.filter(Boolean).length - minAvailable) * (pods.length > 0 ? 1 : 0)
          );
        },
      ),
    );
  });
});
