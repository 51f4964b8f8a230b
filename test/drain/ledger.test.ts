/**
 * The ownership ledger against the simulator, as drainbridge's ServiceAccount: every write goes
 * through the least-privilege role, and "changed nothing" means zero writes in the request log.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createEvictionPass } from '../../lib/branches/pods/eviction-pass.ts';
import { EvacuationFailed, SkipEvent } from '../../lib/errors/index.ts';
import { acquireHold, countNodesHeld, releaseHold, setPhase } from '../../lib/node/hold.ts';
import { readLedger } from '../../lib/node/ledger.ts';
import { readPhase } from '../../lib/node/phase.ts';
import { resolveNode } from '../../lib/node/resolve.ts';
import { MemoryProgressStore } from '../../lib/progress/memory-store.ts';
import { type DrainSim, requestFor, SA_USER, startDrainSim } from './harness.ts';

const NODES = { group: '', resource: 'nodes' };
const alice = { requestId: 'req-a', requester: 'alice', origin: 'manual' };
const bob = { requestId: 'req-b', requester: 'bob', origin: 'aws' };

const SCENARIO = {
  name: 'ledger',
  nodes: [
    { name: 'node-1', providerID: 'aws:///eu-west-1a/i-0abc' },
    { name: 'node-2', unschedulable: true },
    { name: 'node-3' },
  ],
};

describe('ownership ledger in the simulator', () => {
  let env: DrainSim;
  before(async () => {
    env = await startDrainSim(SCENARIO);
  });
  after(async () => {
    await env.stop();
  });

  const writes = (since: number) => env.sim.requestLog.writes({ since, user: SA_USER });
  const nodeObject = (name: string) => env.sim.store.mustGet(NODES, undefined, name);

  test('resolves a node by name, providerID and instance id', async () => {
    assert.equal(await resolveNode(env.client, { nodeName: 'node-1' }), 'node-1');
    assert.equal(await resolveNode(env.client, { providerID: 'aws:///eu-west-1a/i-0abc' }), 'node-1');
    assert.equal(await resolveNode(env.client, { instance: { provider: 'aws', id: 'i-0abc' } }), 'node-1');
    await assert.rejects(resolveNode(env.client, { nodeName: 'nope' }), { name: 'TargetNotFound' });
  });

  test('two requesters, a duplicate, release order, and a late duplicate after release', async () => {
    const first = await acquireHold(env.client, 'node-1', alice);
    assert.deepEqual(first, { acquired: true, first: true });
    assert.equal((nodeObject('node-1').spec as { unschedulable?: boolean }).unschedulable, true);
    assert.equal(await countNodesHeld(env.client), 1);

    let mark = env.sim.requestLog.mark();
    assert.deepEqual(await acquireHold(env.client, 'node-1', alice), { acquired: false, first: false });
    assert.deepEqual(writes(mark), [], 'a duplicated request writes nothing');

    assert.deepEqual(await acquireHold(env.client, 'node-1', bob), { acquired: true, first: false });
    const one = await releaseHold(env.client, 'node-1', 'req-a');
    assert.equal(one.last, false);
    assert.equal((nodeObject('node-1').spec as { unschedulable?: boolean }).unschedulable, true);
    const two = await releaseHold(env.client, 'node-1', 'req-b');
    assert.equal(two.last, true);
    assert.equal(two.restored.uncordoned, true);
    // Uncordoned: the API server omits `unschedulable: false` (omitempty).
    assert.equal(Object.hasOwn(nodeObject('node-1').spec as object, 'unschedulable'), false);
    const annotations = (nodeObject('node-1').metadata.annotations ?? {}) as Record<string, string>;
    assert.equal(annotations['karpenter.sh/do-not-disrupt'], undefined);

    mark = env.sim.requestLog.mark();
    await assert.rejects(acquireHold(env.client, 'node-1', alice), SkipEvent);
    assert.deepEqual(writes(mark), [], 'a late duplicate writes nothing');
    assert.deepEqual(await releaseHold(env.client, 'node-1', 'req-a'), {
      last: true,
      restored: { uncordoned: false, annotationsRemoved: [], taintsRemoved: [] },
      nodeGone: false,
      alreadyReleased: true,
    });
    assert.deepEqual(writes(mark), [], 'a repeated release writes nothing');
  });

  test('a pre-cordoned node stays cordoned after the last release', async () => {
    await acquireHold(env.client, 'node-2', alice);
    const released = await releaseHold(env.client, 'node-2', 'req-a');
    assert.equal(released.restored.uncordoned, false);
    assert.equal((nodeObject('node-2').spec as { unschedulable?: boolean }).unschedulable, true);
  });

  test('conflicting writes are replanned on the new resourceVersion', async () => {
    let bumped = false;
    const remove = env.sim.store.admission.add({
      name: 'concurrent-writer',
      admit: (request) => {
        if (bumped || request.resource !== 'nodes' || request.verb !== 'patch') return undefined;
        bumped = true;
        // Someone else writes the node between drainbridge's read and its patch.
        env.sim.store.mutate(NODES, { name: 'node-3' }, (copy) => {
          copy.metadata.labels = { ...copy.metadata.labels, touched: 'yes' };
          return copy;
        });
        return undefined;
      },
    });
    try {
      await acquireHold(env.client, 'node-3', alice);
    } finally {
      remove();
    }
    const node3 = nodeObject('node-3');
    assert.equal(bumped, true);
    assert.equal((node3.metadata.labels as Record<string, string>).touched, 'yes');
    assert.deepEqual(Object.keys(readLedger(node3 as never).holds), ['req-a']);
    const conflicts = env.sim.requestLog.all({ user: SA_USER, resource: 'nodes' }).filter((r) => r.status === 409);
    assert.equal(conflicts.length, 1);
  });

  test('the phase annotation is written only at transitions', async () => {
    assert.equal(await setPhase(env.client, 'node-3', 'NodeCordoned'), true);
    const mark = env.sim.requestLog.mark();
    assert.equal(await setPhase(env.client, 'node-3', 'NodeCordoned'), false);
    assert.deepEqual(writes(mark), []);
    assert.equal(readPhase(nodeObject('node-3') as never), 'NodeCordoned');
  });

  test('an out-of-band uncordon is reported once (event + blocker) and not fought', async () => {
    env.sim.store.mutate(NODES, { name: 'node-3' }, (copy) => {
      (copy.spec as { unschedulable?: boolean }).unschedulable = false;
      return copy;
    });
    const pass = createEvictionPass(env.client, new MemoryProgressStore(), { branch: 'pods', infraPodSelector: '' });
    const input = {
      request: requestFor('node-3'),
      now: new Date(env.sim.clock.now()),
      startedAt: new Date().toISOString(),
    };
    const firstPass = await pass.run(input);
    assert.deepEqual(
      firstPass.blockers.map((b) => b.code),
      ['OutOfBandUncordon'],
    );
    const mark = env.sim.requestLog.mark();
    const secondPass = await pass.run(input);
    assert.deepEqual(
      secondPass.blockers.map((b) => b.code),
      ['OutOfBandUncordon'],
    );
    assert.deepEqual(writes(mark), [], 'reported once, then no more writes');
    assert.equal(Object.hasOwn(nodeObject('node-3').spec as object, 'unschedulable'), false, 'not re-cordoned');
    const events = env.sim.store.list({ group: '', resource: 'events' }).items;
    const reasons = events
      .filter((e) => (e.involvedObject as { name?: string })?.name === 'node-3')
      .map((e) => e.reason);
    assert.equal(reasons.filter((r) => r === 'OutOfBandUncordon').length, 1);
    assert.ok(reasons.includes('MaintenanceHoldAcquired'));
  });

  test('a node deleted mid-evacuation ends with EvacuationFailed, and releasing is a clean no-op', async () => {
    await acquireHold(env.client, 'node-1', { ...bob, requestId: 'req-c' });
    env.sim.store.delete(NODES, { name: 'node-1' });
    const pass = createEvictionPass(env.client, new MemoryProgressStore(), { branch: 'pods', infraPodSelector: '' });
    const input = {
      request: requestFor('node-1'),
      now: new Date(env.sim.clock.now()),
      startedAt: new Date().toISOString(),
    };
    await assert.rejects(pass.run(input), (error: unknown) => {
      assert.ok(error instanceof EvacuationFailed);
      assert.match(error.message, /node node-1 was deleted during the evacuation/);
      return true;
    });
    assert.deepEqual(await releaseHold(env.client, 'node-1', 'req-c'), {
      last: true,
      restored: { uncordoned: false, annotationsRemoved: [], taintsRemoved: [] },
      nodeGone: true,
      alreadyReleased: false,
    });
  });

  test('the simulator answers a missing RBAC rule with 403 (the role is really enforced)', async () => {
    await assert.rejects(env.client.core.listNamespacedSecret({ namespace: 'default' }), (error: unknown) => {
      return (error as { code?: number }).code === 403;
    });
  });
});
