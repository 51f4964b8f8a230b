/**
 * The fault suite's invariant checks can fail: each one is broken on purpose here, through the
 * simulator as drainbridge's ServiceAccount would break it, and must be reported (a check that cannot
 * fail proves nothing).
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { LEDGER_ANNOTATION } from '../../../lib/node/ledger.ts';
import { type DrainSim, startDrainSim } from '../../drain/harness.ts';
import { InvariantViolation, watchInvariants } from '../../support/invariants.ts';

const HOLD = JSON.stringify({
  holds: { r: { requester: 'a', origin: 'manual', since: '2026-01-01T00:00:00.000Z' } },
  released: {},
  changes: { priorUnschedulable: false, cordoned: true, annotations: {}, taints: [] },
});

describe('the safety invariants (test/support/invariants.ts) report what breaks them', () => {
  let d: DrainSim | undefined;
  afterEach(async () => {
    await d?.stop();
    d = undefined;
  });

  it('held nodes over the limit, at any moment, even if it passes', async () => {
    d = await startDrainSim('small', { speed: 100 });
    const run = watchInvariants(d.sim, { maxHeldNodes: 1 });
    for (const name of ['node-1', 'node-2']) {
      await d.client.patchNode(name, {
        metadata: { annotations: { [LEDGER_ANNOTATION]: HOLD } },
        spec: { unschedulable: true },
      });
    }
    // Released again: the peak stays.
    await d.client.patchNode('node-2', {
      metadata: { annotations: { [LEDGER_ANNOTATION]: null } },
      spec: { unschedulable: false },
    });
    await new Promise<void>((resolve) => queueMicrotask(resolve));
    const found = run.violations();
    run.stop();
    assert.ok(
      found.some((v) => /2 nodes held at once \(limit 1\)/.test(v)),
      found.join('\n'),
    );
    assert.ok(
      found.some((v) => /2 nodes cordoned by drainbridge at once/.test(v)),
      found.join('\n'),
    );
  });

  it("a held node left schedulable; a released node with drainbridge's cordon left on", async () => {
    d = await startDrainSim('small', { speed: 100 });
    const run = watchInvariants(d.sim, { maxHeldNodes: 3 });
    await d.client.patchNode('node-1', { metadata: { annotations: { [LEDGER_ANNOTATION]: HOLD } } });
    await d.client.patchNode('node-2', { spec: { unschedulable: true } });
    const found = run.violations();
    run.stop();
    assert.ok(
      found.some((v) => /node node-1 is held \(held\) but schedulable/.test(v)),
      found.join('\n'),
    );
    assert.ok(
      found.some((v) => /node node-2 is no longer held but drainbridge's cordon was left/.test(v)),
      found.join('\n'),
    );
    assert.throws(() => run.assertHeld(), InvariantViolation);
  });

  it('a pod deleted instead of evicted', async () => {
    d = await startDrainSim('small', { speed: 100, allowDelete: true });
    const run = watchInvariants(d.sim, { maxHeldNodes: 1 });
    const [pod] = await d.client.listPodsOnNode('node-1');
    assert.ok(pod);
    await d.client.deletePod(pod);
    const found = run.violations();
    assert.ok(
      found.some((v) => /deleted pod .* where an eviction was possible/.test(v)),
      found.join('\n'),
    );
    assert.deepEqual(watchInvariants(d.sim, { maxHeldNodes: 1, deletesAllowed: true }).violations(), []);
    run.stop();
  });

  it('a VM shut down or lost', async () => {
    d = await startDrainSim('kubevirt', { speed: 100 });
    const run = watchInvariants(d.sim, { maxHeldNodes: 1 });
    const VMIS = { group: 'kubevirt.io', resource: 'virtualmachineinstances' };
    const [first] = d.sim.store.list(VMIS).items;
    assert.ok(first, 'the kubevirt scenario has VMs');
    d.sim.store.delete(VMIS, { namespace: first.metadata.namespace, name: first.metadata.name ?? '' });
    const found = run.violations();
    run.stop();
    assert.ok(
      found.some((v) => /was (lost|shut down)/.test(v)),
      found.join('\n'),
    );
  });
});
