/**
 * NMO's first status counts (its controller's initMaintenanceStatus: totalpods every pod on the node,
 * evictionPods/pendingPods the ones its drain evicts), and how they stand until drainbridge's evacuation
 * has counted the pods itself. Pure.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import type { EvacuationObject } from '../../../lib/clients/kube/paths.ts';
import { type NodeMaintenanceFacts, planNodeMaintenance } from '../../../lib/sources/node-maintenance/decide.ts';
import { firstCounts } from '../../../lib/sources/node-maintenance/first-counts.ts';
import { DRAINBRIDGE_FINALIZER, type NodeMaintenance } from '../../../lib/sources/node-maintenance/types.ts';

const pod = (namespace: string, name: string, extra: Partial<NonNullable<V1Pod['metadata']>> = {}): V1Pod => ({
  metadata: { namespace, name, ...extra },
});
const PODS = [
  pod('shop', 'web-b'),
  pod('shop', 'web-a', {
    ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', uid: 'r', controller: true }],
  }),
  pod('monitoring', 'agent-x', {
    ownerReferences: [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'agent', uid: 'd', controller: true }],
  }),
  pod('kube-system', 'etcd-node-1', { annotations: { 'kubernetes.io/config.mirror': 'x' } }),
];

describe("NMO's first status counts", () => {
  it('initMaintenanceStatus: every pod counted; up for eviction all but mirror and DaemonSet pods', () => {
    assert.deepEqual(firstCounts(PODS), {
      totalpods: 4,
      evictionPods: 2,
      pendingPods: ['web-a', 'web-b'],
      pendingPodsRefs: [
        { namespace: 'shop', name: 'web-a' },
        { namespace: 'shop', name: 'web-b' },
      ],
    });
    assert.deepEqual(firstCounts([]), { totalpods: 0, evictionPods: 0 });
  });

  const adopted: NodeMaintenance = {
    metadata: { name: 'nm-1', uid: 'u1', finalizers: [DRAINBRIDGE_FINALIZER] },
    spec: { nodeName: 'node-1' },
  };
  const facts = (over: Partial<NodeMaintenanceFacts>): NodeMaintenanceFacts => ({
    nm: adopted,
    node: { metadata: { name: 'node-1' }, spec: {} },
    servedNode: 'node-1',
    record: undefined,
    others: [],
    nmoInstalled: undefined,
    coexistence: 'refuse',
    lease: { kind: 'taken' },
    now: new Date('2026-11-28T09:00:00Z'),
    ...over,
  });
  const statusOf = (f: NodeMaintenanceFacts) =>
    planNodeMaintenance(f).find((a) => a.kind === 'status')?.patch as Record<string, unknown> | undefined;

  it('the first status carries them; they stand until the evacuation has counted the pods', () => {
    const first = statusOf(facts({ firstCounts: firstCounts(PODS) }));
    assert.equal(first?.phase, 'Running');
    assert.equal(first?.totalpods, 4);
    assert.equal(first?.evictionPods, 2);
    // The record written, its pod branches not started: the counts shown are not replaced by zeros.
    const shown = {
      ...adopted,
      status: {
        phase: 'Running' as const,
        totalpods: 4,
        evictionPods: 2,
        pendingPods: ['web-a', 'web-b'],
        pendingPodsRefs: firstCounts(PODS).pendingPodsRefs,
      },
    };
    const record = {
      metadata: { name: 'r' },
      spec: { nodeName: 'node-1' },
      status: { phase: 'Cordoned' },
    } as unknown as EvacuationObject;
    const kept = statusOf(facts({ nm: shown, record }));
    for (const field of ['totalpods', 'evictionPods', 'pendingPods', 'pendingPodsRefs'])
      assert.equal(Object.hasOwn(kept ?? {}, field), false, `${field} not rewritten`);
    // Once the pod branch has counted: its numbers.
    const counted = {
      ...record,
      status: { phase: 'Draining', branches: { pods: { total: 3, moved: 1, skipped: 2 } } },
    } as unknown as EvacuationObject;
    const patch = statusOf(facts({ nm: shown, record: counted }));
    assert.equal(patch?.evictionPods, 3);
    assert.equal(patch?.totalpods, 5);
  });
});
