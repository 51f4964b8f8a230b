import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import fc from 'fast-check';
import {
  fits,
  isNodeReady,
  placePod,
  podCapacity,
  REASONS,
  type SchedulingNode,
  type SchedulingPod,
  type Taint,
  type Toleration,
  toleratesTaint,
  unschedulableMessage,
  whyNot,
} from '../../../lib/clients/kube/scheduling.ts';

const ready = [{ type: 'Ready', status: 'True' }];

function node(
  name: string,
  extra: Partial<{
    labels: Record<string, string>;
    unschedulable: boolean;
    taints: Taint[];
    pods: string;
    notReady: boolean;
  }> = {},
): SchedulingNode {
  return {
    metadata: { name, labels: extra.labels ?? { 'kubernetes.io/hostname': name } },
    spec: { unschedulable: extra.unschedulable ?? false, taints: extra.taints ?? [] },
    status: {
      allocatable: { pods: extra.pods ?? '110' },
      conditions: extra.notReady ? [{ type: 'Ready', status: 'False' }] : ready,
    },
  };
}

function pod(spec: SchedulingPod['spec'] = {}, phase = 'Pending'): SchedulingPod {
  return { metadata: { name: 'p', namespace: 'default' }, spec, status: { phase } };
}

const unschedulableToleration: Toleration = {
  key: 'node.kubernetes.io/unschedulable',
  operator: 'Exists',
  effect: 'NoSchedule',
};

describe('toleratesTaint', () => {
  const taint: Taint = { key: 'dedicated', value: 'gpu', effect: 'NoSchedule' };
  const cases: [string, Toleration, Taint, boolean][] = [
    [
      'Equal with same key, value, effect',
      { key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' },
      taint,
      true,
    ],
    ['Equal is the default operator', { key: 'dedicated', value: 'gpu' }, taint, true],
    [
      'Equal with another value',
      { key: 'dedicated', operator: 'Equal', value: 'cpu', effect: 'NoSchedule' },
      taint,
      false,
    ],
    ['Exists ignores the value', { key: 'dedicated', operator: 'Exists' }, taint, true],
    ['effect must match when given', { key: 'dedicated', operator: 'Exists', effect: 'NoExecute' }, taint, false],
    ['empty key with Exists tolerates everything', { operator: 'Exists' }, taint, true],
    ['another key', { key: 'other', operator: 'Exists' }, taint, false],
    [
      'Equal with no value matches an empty taint value',
      { key: 'k', operator: 'Equal' },
      { key: 'k', effect: 'NoSchedule' },
      true,
    ],
    ['unknown operator', { key: 'dedicated', operator: 'Matches', value: 'gpu' }, taint, false],
  ];
  for (const [name, toleration, t, expected] of cases) {
    it(name, () => assert.equal(toleratesTaint(toleration, t), expected));
  }
});

describe('whyNot', () => {
  const affinity = (terms: unknown[]) =>
    ({ nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: terms } } }) as NonNullable<
      SchedulingPod['spec']
    >['affinity'];
  const full = Array.from({ length: 2 }, () => pod({}, 'Running'));
  const cases: [string, SchedulingPod, SchedulingNode, SchedulingPod[], string[]][] = [
    ['fits a plain node', pod(), node('a'), [], []],
    ['cordoned node', pod(), node('a', { unschedulable: true }), [], [REASONS.unschedulable]],
    [
      'cordoned node, DaemonSet toleration',
      pod({ tolerations: [unschedulableToleration] }),
      node('a', { unschedulable: true }),
      [],
      [],
    ],
    [
      'untolerated NoSchedule taint',
      pod(),
      node('a', { taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }] }),
      [],
      ['node(s) had untolerated taint {dedicated: gpu}'],
    ],
    [
      'PreferNoSchedule is not a filter',
      pod(),
      node('a', { taints: [{ key: 'soft', effect: 'PreferNoSchedule' }] }),
      [],
      [],
    ],
    [
      'NoExecute taint with empty value',
      pod(),
      node('a', { taints: [{ key: 'node-role.kubernetes.io/control-plane', effect: 'NoExecute' }] }),
      [],
      ['node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }'],
    ],
    [
      'not ready node is tainted not-ready',
      pod(),
      node('a', { notReady: true }),
      [],
      ['node(s) had untolerated taint {node.kubernetes.io/not-ready: }'],
    ],
    ['nodeSelector mismatch', pod({ nodeSelector: { disk: 'ssd' } }), node('a'), [], [REASONS.affinity]],
    ['nodeSelector match', pod({ nodeSelector: { disk: 'ssd' } }), node('a', { labels: { disk: 'ssd' } }), [], []],
    [
      'affinity In',
      pod({ affinity: affinity([{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['z1', 'z2'] }] }]) }),
      node('a', { labels: { zone: 'z2' } }),
      [],
      [],
    ],
    [
      'affinity NotIn',
      pod({ affinity: affinity([{ matchExpressions: [{ key: 'zone', operator: 'NotIn', values: ['z2'] }] }]) }),
      node('a', { labels: { zone: 'z2' } }),
      [],
      [REASONS.affinity],
    ],
    [
      'affinity terms are ORed',
      pod({
        affinity: affinity([
          { matchExpressions: [{ key: 'x', operator: 'Exists' }] },
          { matchExpressions: [{ key: 'zone', operator: 'Exists' }] },
        ]),
      }),
      node('a', { labels: { zone: 'z' } }),
      [],
      [],
    ],
    [
      'affinity Gt',
      pod({ affinity: affinity([{ matchExpressions: [{ key: 'gen', operator: 'Gt', values: ['3'] }] }]) }),
      node('a', { labels: { gen: '4' } }),
      [],
      [],
    ],
    [
      'affinity Lt',
      pod({ affinity: affinity([{ matchExpressions: [{ key: 'gen', operator: 'Lt', values: ['3'] }] }]) }),
      node('a', { labels: { gen: '4' } }),
      [],
      [REASONS.affinity],
    ],
    [
      'matchFields metadata.name',
      pod({ affinity: affinity([{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['a'] }] }]) }),
      node('a'),
      [],
      [],
    ],
    [
      'matchFields other name',
      pod({ affinity: affinity([{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['b'] }] }]) }),
      node('a'),
      [],
      [REASONS.affinity],
    ],
    ['empty term matches nothing', pod({ affinity: affinity([{}]) }), node('a'), [], [REASONS.affinity]],
    ['full node', pod(), node('a', { pods: '2' }), full, [REASONS.tooManyPods]],
    ['terminal pods free capacity', pod(), node('a', { pods: '2' }), [pod({}, 'Running'), pod({}, 'Succeeded')], []],
    [
      'no pod capacity reported',
      pod(),
      { metadata: { name: 'a' }, status: { conditions: ready } },
      [],
      [REASONS.tooManyPods],
    ],
    [
      'all reasons in filter order',
      pod({ nodeSelector: { disk: 'ssd' } }),
      node('a', { unschedulable: true, pods: '2', taints: [{ key: 't', value: 'v', effect: 'NoSchedule' }] }),
      full,
      [REASONS.unschedulable, 'node(s) had untolerated taint {t: v}', REASONS.affinity, REASONS.tooManyPods],
    ],
  ];
  for (const [name, p, n, onNode, expected] of cases) {
    it(name, () => assert.deepEqual(whyNot(p, n, onNode), expected));
  }
});

describe('helpers', () => {
  it('reads Ready and capacity', () => {
    assert.equal(isNodeReady(node('a')), true);
    assert.equal(isNodeReady({ metadata: { name: 'x' } }), false);
    assert.equal(podCapacity(node('a', { pods: '7' })), 7);
    assert.equal(podCapacity({ metadata: { name: 'x' }, status: { allocatable: { pods: 12 } } }), 12);
    assert.equal(podCapacity({ metadata: { name: 'x' }, status: { allocatable: { pods: 'lots' } } }), 0);
  });

  it('words the FailedScheduling message like kube-scheduler', () => {
    assert.equal(
      unschedulableMessage([REASONS.unschedulable, REASONS.tooManyPods, REASONS.unschedulable]),
      '0/3 nodes are available: 1 Too many pods, 2 node(s) were unschedulable. preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling.',
    );
    assert.equal(unschedulableMessage([]), 'no nodes available to schedule pods');
  });
});

describe('placePod', () => {
  it('takes @kubernetes/client-node objects as they come (the drain planner passes them)', () => {
    const clientNode: V1Node = {
      metadata: { name: 'a' },
      status: { allocatable: { pods: '3' }, conditions: [{ type: 'Ready', status: 'True' }] },
    };
    const clientPod: V1Pod = { metadata: { name: 'p' }, spec: { containers: [{ name: 'c' }] } };
    assert.deepEqual(placePod(clientPod, [clientNode], new Map()).fitting, [clientNode]);
  });

  it('orders fitting nodes least loaded first, then by name', () => {
    const nodes = [node('c'), node('b'), node('a', { unschedulable: true })];
    const byNode = new Map([
      ['b', [pod({}, 'Running')]],
      ['c', []],
    ]);
    const placement = placePod(pod(), nodes, byNode);
    assert.deepEqual(
      placement.fitting.map((n) => n.metadata?.name),
      ['c', 'b'],
    );
    assert.equal(placement.reasons.get('a'), REASONS.unschedulable);
    assert.equal(placement.message, undefined);
  });

  it('prefers nodes matching preferred node affinity over less loaded ones', () => {
    const preferBusy = pod({
      affinity: {
        nodeAffinity: {
          preferredDuringSchedulingIgnoredDuringExecution: [
            {
              weight: 100,
              preference: { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['busy'] }] },
            },
          ],
        },
      },
    });
    const byNode = new Map([['busy', [pod({}, 'Running'), pod({}, 'Running')]]]);
    const nodes = [node('idle'), node('busy')];
    assert.deepEqual(
      placePod(preferBusy, nodes, byNode).fitting.map((n) => n.metadata?.name),
      ['busy', 'idle'],
    );
    // Cordoned, the preferred node no longer fits at all: the preference never overrides a filter.
    const cordoned = [node('idle'), node('busy', { unschedulable: true })];
    assert.deepEqual(
      placePod(preferBusy, cordoned, byNode).fitting.map((n) => n.metadata?.name),
      ['idle'],
    );
  });

  it('explains when nothing fits', () => {
    const placement = placePod(
      pod(),
      [node('a', { unschedulable: true }), node('b', { unschedulable: true })],
      new Map(),
    );
    assert.equal(placement.fitting.length, 0);
    assert.match(placement.message ?? '', /^0\/2 nodes are available: 2 node\(s\) were unschedulable\./);
  });
});

describe('properties', () => {
  const key = fc.constantFrom('a', 'b', 'dedicated', 'node.kubernetes.io/unschedulable');
  const value = fc.constantFrom('', 'x', 'y');
  const effect = fc.constantFrom('NoSchedule', 'NoExecute', 'PreferNoSchedule');
  const taintArb = fc.record({ key, value, effect });
  const tolerationArb = fc.record(
    {
      key: fc.option(key, { nil: undefined }),
      operator: fc.constantFrom('Equal', 'Exists'),
      value,
      effect: fc.option(effect, { nil: undefined }),
    },
    { requiredKeys: ['operator'] },
  );

  it('an empty-key Exists toleration tolerates every taint', () => {
    fc.assert(fc.property(taintArb, (taint) => toleratesTaint({ operator: 'Exists' }, taint)));
  });

  it('a toleration copied from the taint tolerates it', () => {
    fc.assert(
      fc.property(taintArb, (taint) =>
        toleratesTaint({ key: taint.key, operator: 'Equal', value: taint.value, effect: taint.effect }, taint),
      ),
    );
  });

  it('adding tolerations never adds reasons', () => {
    fc.assert(
      fc.property(
        fc.array(taintArb, { maxLength: 4 }),
        fc.array(tolerationArb, { maxLength: 3 }),
        fc.array(tolerationArb, { maxLength: 3 }),
        fc.boolean(),
        (taints, some, more, cordoned) => {
          const n = node('a', { taints, unschedulable: cordoned });
          const before = whyNot(pod({ tolerations: some }), n, []);
          const after = whyNot(pod({ tolerations: [...some, ...more] }), n, []);
          assert.ok(after.length <= before.length);
          return after.every((reason) => before.includes(reason) || reason.startsWith('node(s) had untolerated taint'));
        },
      ),
    );
  });

  it('a pod fits exactly while occupying pods stay below capacity', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 20 }),
        fc.integer({ min: 0, max: 20 }),
        fc.integer({ min: 0, max: 5 }),
        (capacity, running, finished) => {
          const onNode = [
            ...Array.from({ length: running }, () => pod({}, 'Running')),
            ...Array.from({ length: finished }, () => pod({}, 'Succeeded')),
          ];
          return fits(pod(), node('a', { pods: String(capacity) }), onNode) === running < capacity;
        },
      ),
    );
  });
});
