/** The scheduler looks at a window of the nodes in large clusters, as kube-scheduler does, and at all when none fits there. */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { nodesToSearch } from '../../../sim/controllers/scheduler.ts';
import type { KubeObject } from '../../../sim/store/types.ts';
import { waitUntil } from '../../support/wait.ts';
import { NODES, node, PODS, type Sim, startSim } from './harness.ts';

function pendingPod(name: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', labels: { run: name } },
    spec: { containers: [{ name: 'c', image: 'busybox:1.37' }] },
  };
}

const nodeNameOf = (pod: KubeObject | undefined): string =>
  (pod?.spec as { nodeName?: string } | undefined)?.nodeName ?? '';

describe('scheduler window', () => {
  let sim: Sim | undefined;
  afterEach(() => sim?.close());

  it("searches kube-scheduler's share of the nodes: all below 100, then 50 % less 1 % per 125 nodes, at least 5 % and 100", () => {
    assert.deepEqual(
      [10, 99, 100, 250, 1000, 5000, 6000, 20_000].map(nodesToSearch),
      [10, 99, 100, 120, 420, 500, 300, 1000],
    );
  });

  it('places a pod on the one node that fits even when it lies outside the window', async () => {
    sim = startSim(100);
    const { store } = sim;
    // 150 nodes: a window of 100 from the first; only the last one schedulable.
    for (let i = 0; i < 150; i++) {
      const name = `n${String(i).padStart(3, '0')}`;
      store.create(NODES, node(name, { unschedulable: i !== 149 }));
    }
    store.create(PODS, pendingPod('solo'));
    const bound = await waitUntil('solo bound', () => nodeNameOf(store.get(PODS, 'default', 'solo')) || undefined);
    assert.equal(bound, 'n149');
  });

  it('spreads pods placed one after another over different windows of the nodes', async () => {
    sim = startSim(100);
    const { store } = sim;
    for (let i = 0; i < 200; i++) store.create(NODES, node(`n${String(i).padStart(3, '0')}`));
    for (const name of ['a', 'b']) store.create(PODS, pendingPod(name));
    const [a, b] = await waitUntil('both bound', () => {
      const names = ['a', 'b'].map((name) => nodeNameOf(store.get(PODS, 'default', name)));
      return names.every(Boolean) && names;
    });
    // Every node is empty: the least-loaded rule picks each window's first node by name, so the two
    // pods land in different windows (n000 and n100), not both at the start of the node list.
    assert.deepEqual([a, b].sort(), ['n000', 'n100']);
  });
});
