/**
 * The node lifecycle controller's cordon taint and the API server's omitempty on a Node's spec, through
 * the real store and loops.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import type { V1Node } from '@kubernetes/client-node';
import { planHold, planRelease } from '../../../lib/node/ledger.ts';
import { cordonTaints } from '../../../sim/controllers/node-lifecycle.ts';
import type { Node } from '../../../sim/controllers/types.ts';
import { mergePatch } from '../../../sim/store/patch.ts';
import type { KubeObject } from '../../../sim/store/types.ts';
import { waitUntil } from '../../support/wait.ts';
import { NODES, node, type Sim, startSim } from './harness.ts';

const CORDON_TAINT = 'node.kubernetes.io/unschedulable';

let sim: Sim | undefined;
afterEach(() => sim?.close());

interface TaintView {
  key: string;
  effect: string;
  value?: string;
  timeAdded?: string;
}

const specOf = (object: KubeObject | undefined) =>
  (object?.spec ?? {}) as { unschedulable?: boolean; taints?: TaintView[] };

function setUnschedulable(store: Sim['store'], name: string, value: boolean): void {
  store.mutate(NODES, { name }, (copy) => {
    (copy.spec as Record<string, unknown>).unschedulable = value;
    return copy;
  });
}

describe('node lifecycle controller: the cordon taint', () => {
  it('a cordon gets node.kubernetes.io/unschedulable:NoSchedule with timeAdded; an uncordon removes it and omits spec.unschedulable', async () => {
    sim = startSim();
    const { store } = sim;
    store.create(NODES, node('node-1'));
    assert.equal(Object.hasOwn(specOf(store.mustGet(NODES, undefined, 'node-1')), 'unschedulable'), false);
    setUnschedulable(store, 'node-1', true);
    const tainted = await waitUntil('the cordon taint', () =>
      specOf(store.get(NODES, undefined, 'node-1')).taints?.find((t) => t.key === CORDON_TAINT),
    );
    assert.equal(tainted.effect, 'NoSchedule');
    assert.equal(tainted.value, undefined);
    assert.match(tainted.timeAdded ?? '', /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}/);

    setUnschedulable(store, 'node-1', false);
    await waitUntil('the taint gone', () => specOf(store.get(NODES, undefined, 'node-1')).taints === undefined);
    const spec = specOf(store.mustGet(NODES, undefined, 'node-1'));
    assert.equal(Object.hasOwn(spec, 'unschedulable'), false, 'omitempty: false is not served');
    assert.equal(Object.hasOwn(spec, 'taints'), false, 'omitempty: an empty list is not served');
  });

  it('leaves other taints alone, and a node created cordoned is tainted too', async () => {
    sim = startSim();
    const { store } = sim;
    const gpu = { key: 'gpu', value: 'true', effect: 'NoSchedule' };
    const cordoned = node('node-2', { unschedulable: true });
    (cordoned.spec as Record<string, unknown>).taints = [gpu];
    store.create(NODES, cordoned);
    await waitUntil('two taints', () => specOf(store.get(NODES, undefined, 'node-2')).taints?.length === 2);
    setUnschedulable(store, 'node-2', false);
    await waitUntil('one taint', () => specOf(store.get(NODES, undefined, 'node-2')).taints?.length === 1);
    assert.deepEqual(specOf(store.mustGet(NODES, undefined, 'node-2')).taints, [gpu]);
  });
});

describe("drainbridge's hold and release around the controller's taint", () => {
  /** Applies a ledger plan's merge patch as the API server would (resourceVersion checked by update). */
  function applyPlan(store: Sim['store'], name: string, patch: unknown): void {
    const stored = store.mustGet(NODES, undefined, name);
    const next = mergePatch(stored as never, patch as never) as unknown as KubeObject;
    store.update(NODES, next);
  }

  it('hold with a compatibility taint, controller taints, release: the node ends as it began, the gpu taint kept', async () => {
    sim = startSim();
    const { store } = sim;
    const gpu = { key: 'gpu', value: 'true', effect: 'NoSchedule' };
    const start = node('node-3');
    (start.spec as Record<string, unknown>).taints = [gpu];
    store.create(NODES, start);
    const settings = { tombstoneSeconds: 86_400, compatibilityTaints: ['medik8s.io/drain'] as const };
    const now = new Date();
    const hold = planHold(
      store.mustGet(NODES, undefined, 'node-3') as V1Node,
      { requestId: 'r1', requester: 't', origin: 'cli' },
      now,
      settings,
    );
    assert.equal(hold.action, 'patch');
    if (hold.action === 'patch') applyPlan(store, 'node-3', hold.patch);
    await waitUntil('the cordon taint', () =>
      specOf(store.get(NODES, undefined, 'node-3')).taints?.some((t) => t.key === CORDON_TAINT),
    );
    assert.deepEqual(
      specOf(store.mustGet(NODES, undefined, 'node-3')).taints?.map((t) => t.key),
      ['gpu', 'medik8s.io/drain', CORDON_TAINT],
    );

    const release = planRelease(store.mustGet(NODES, undefined, 'node-3') as V1Node, 'r1', now, settings);
    assert.equal(release.action, 'patch');
    if (release.action !== 'patch') return;
    assert.equal(release.restored.uncordoned, true);
    assert.deepEqual(release.restored.taintsRemoved, ['medik8s.io/drain'], 'only the taint drainbridge added');
    applyPlan(store, 'node-3', release.patch);
    await waitUntil('the cordon taint gone', () =>
      specOf(store.get(NODES, undefined, 'node-3')).taints?.every((t) => t.key !== CORDON_TAINT),
    );
    const spec = specOf(store.mustGet(NODES, undefined, 'node-3'));
    assert.deepEqual(spec.taints, [gpu]);
    assert.equal(Object.hasOwn(spec, 'unschedulable'), false);
  });
});

describe('cordonTaints (pure)', () => {
  const at = '2026-01-01T00:00:00Z';
  const asNode = (spec: Node['spec']): Node => ({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n' }, spec });

  it('nothing to do when the taint matches the cordon', () => {
    assert.equal(cordonTaints(asNode({}), at), undefined);
    assert.equal(
      cordonTaints(asNode({ unschedulable: true, taints: [{ key: CORDON_TAINT, effect: 'NoSchedule' }] }), at),
      undefined,
    );
  });

  it('a NoExecute taint of the same key is not the cordon taint', () => {
    const taints = [{ key: CORDON_TAINT, effect: 'NoExecute' }];
    assert.deepEqual(cordonTaints(asNode({ unschedulable: true, taints }), at), [
      ...taints,
      { key: CORDON_TAINT, effect: 'NoSchedule', timeAdded: at },
    ]);
    assert.equal(cordonTaints(asNode({ taints }), at), undefined);
  });
});
