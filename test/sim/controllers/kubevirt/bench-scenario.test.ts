/**
 * The benchmark's KubeVirt cluster (bench/lib/kubevirt-scenario.ts) in the simulator: the scenario's
 * `transferSecondsPerGiB` makes each migration's transfer proportional to the VM's memory, and KubeVirt's
 * default limits hold every migration beyond 2 from the node Pending.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KUBEVIRT_NODE, kubevirtScenario, VM_MEMORY_GIB, vmName } from '../../../../bench/lib/kubevirt-scenario.ts';
import { scenarioFloor } from '../../../../bench/lib/kubevirt-section.ts';
import { parseScenario, startScenario, whenSettled } from '../../../../sim/scenarios/index.ts';
import { createStore } from '../../../../sim/store/index.ts';
import { statusOf, VMIMS, VMIS } from './harness.ts';

const SPEED = 10;

describe("the bench's 20-VM KubeVirt scenario", () => {
  it('transfers each VM in 2 s + 1 s per GiB, never more than 2 from the node at once, the rest Pending', async () => {
    const scenario = parseScenario(JSON.stringify(kubevirtScenario(SPEED)), 'bench kubevirt-20');
    const store = createStore({ speed: SPEED });
    const controllers = startScenario(store, scenario);
    try {
      await whenSettled(store, scenario, 600_000);
      const vmis = store.list(VMIS, { namespace: 'vms' }).items;
      assert.equal(vmis.length, VM_MEMORY_GIB.length);
      assert.ok(vmis.every((v) => statusOf(v).nodeName === KUBEVIRT_NODE));
      store.mutate({ group: '', resource: 'nodes' }, { name: KUBEVIRT_NODE }, (node) => {
        node.spec = { ...(node.spec as object), unschedulable: true };
        return node;
      });
      // All 20 at once, largest first: KubeVirt's controller starts them oldest first as slots free.
      const order = VM_MEMORY_GIB.map((gib, i) => ({ gib, name: vmName(i) })).sort((a, b) => b.gib - a.gib);
      for (const { name } of order) {
        store.create(VMIMS, {
          apiVersion: 'kubevirt.io/v1',
          kind: 'VirtualMachineInstanceMigration',
          metadata: { name: `move-${name}`, namespace: 'vms' },
          spec: { vmiName: name },
        });
      }
      const history = controllers.kubevirt?.history;
      assert.ok(history);
      await history.when(
        (h) => h.migrations((r) => r.phases.some((p) => p.phase === 'Succeeded')).length === 20,
        600_000,
      );
      assert.equal(
        history.maxInFlight(() => true, { from: 'Scheduling' }),
        2,
      );
      for (const [i, gib] of VM_MEMORY_GIB.entries()) {
        const [record] = history.migrations((r) => r.name === `move-${vmName(i)}`);
        const at = (phase: string) => record?.phases.find((p) => p.phase === phase)?.atMs ?? Number.NaN;
        // The transfer alone: base 2 s + 1 s per GiB (simulated; the steps before it depend on the
        // controllers' latency, which the bench measures and prints beside the floor).
        const transfer = (at('Succeeded') - at('Running')) / 1000;
        assert.ok(Math.abs(transfer - (2 + gib)) < 1.5, `${vmName(i)} (${gib} GiB): transfer ${transfer} s`);
      }
      // The floor the bench prints is these VMs' times over the two slots.
      const floor = scenarioFloor();
      assert.equal(floor.slots, 2);
      assert.equal(
        floor.totalSeconds,
        VM_MEMORY_GIB.reduce((sum, gib) => sum + 5.5 + gib, 0),
      );
    } finally {
      controllers.stop();
      store.close();
    }
  });
});
