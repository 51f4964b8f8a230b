/** The bundled `kubevirt` scenario and the scenario file's `kubevirt:` section (format and errors). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InvalidInput } from '../../../../lib/errors/index.ts';
import { loadScenario, parseScenario, startScenario, whenSettled } from '../../../../sim/scenarios/index.ts';
import { createStore } from '../../../../sim/store/index.ts';
import { KUBEVIRTS, PDBS, PODS, statusOf, VMIS, VMS } from './harness.ts';

describe('the kubevirt scenario', () => {
  it('settles with VMs of every strategy on node-1, their launcher pods and the PDBs KubeVirt gives them', async () => {
    const scenario = loadScenario('kubevirt');
    assert.equal(scenario.kubevirt?.timings?.transferMsPerGiB, 1000, 'timings are read in seconds');
    const store = createStore({ speed: 500 });
    const controllers = startScenario(store, scenario);
    try {
      await whenSettled(store, scenario, 600_000);
      const vmis = store.list(VMIS).items;
      assert.deepEqual(vmis.map((v) => v.metadata.name).sort(), [
        'app-1',
        'app-2',
        'batch',
        'cache',
        'db',
        'legacy',
        'scratch',
        'tenant-worker',
      ]);
      assert.ok(vmis.every((v) => statusOf(v).nodeName === 'node-1' && statusOf(v).phase === 'Running'));
      const strategies = Object.fromEntries(
        vmis.map((v) => [v.metadata.name, (v.spec as { evictionStrategy?: string }).evictionStrategy ?? 'cluster']),
      );
      assert.deepEqual(
        new Set(Object.values(strategies)),
        new Set(['LiveMigrate', 'cluster', 'LiveMigrateIfPossible', 'None', 'External']),
      );
      const notMigratable = vmis
        .filter((v) => statusOf(v).conditions?.some((c) => c.type === 'LiveMigratable' && c.status === 'False'))
        .map((v) => v.metadata.name)
        .sort();
      assert.deepEqual(notMigratable, ['db', 'scratch']);
      const launcherCount = store.list(PODS, { labelSelector: 'kubevirt.io=virt-launcher' }).items.length;
      assert.equal(launcherCount, 8);
      const kubevirtBudgets = store.list(PDBS, { namespace: 'vms' }).items;
      assert.equal(
        kubevirtBudgets.length,
        6,
        'app-1, app-2, batch, db (LiveMigrate), cache (migratable IfPossible), tenant-worker (External)',
      );
      assert.ok(store.list(VMS).items.every((vm) => statusOf(vm).printableStatus === 'Running'));
      const [kv] = store.list(KUBEVIRTS).items;
      assert.equal(
        (kv!.spec as { configuration: { evictionStrategy: string } }).configuration.evictionStrategy,
        'LiveMigrate',
      );
      assert.equal(controllers.kubevirt?.config().parallelOutboundMigrationsPerNode, 2);
    } finally {
      controllers.stop();
      store.close();
    }
  });

  it('leaves busy-node’s label-only launcher pods alone (no kubevirt: section, no KubeVirt)', () => {
    const scenario = loadScenario('busy-node');
    assert.equal(scenario.kubevirt, undefined);
  });

  it('refuses a bad kubevirt: section, naming each bad field', () => {
    const text = `
name: bad
nodes: [{ name: n1 }]
kubevirt:
  configuration:
    evictionStrategy: Migrate
    migrations: { parallelOutboundMigrationsPerNode: 0 }
  timings: { transferSecondsPerGib: 1 }
  virtualMachines:
    - apiVersion: kubevirt.io/v1
      kind: VirtualMachine
      metadata: { name: vm1, namespace: vms }
      spec:
        running: true
        runStrategy: Always
        template: { spec: { domain: { resources: { requests: { memory: lots } } } } }
  virtualMachineInstances:
    - apiVersion: kubevirt.io/v1
      kind: VirtualMachineInstance
      metadata: { name: vmi1, annotations: { sim.drainbridge.io/migration-seconds: soon } }
      spec: { evictionStrategy: Sometimes, domain: {} }
`;
    assert.throws(
      () => parseScenario(text, 'bad.yaml'),
      (error: unknown) => {
        assert.ok(error instanceof InvalidInput);
        const message = error.message;
        for (const field of [
          'kubevirt.configuration.evictionStrategy',
          'kubevirt.configuration.migrations.parallelOutboundMigrationsPerNode',
          'kubevirt.timings',
          'kubevirt.virtualMachines[0].spec.template.spec.domain.resources.requests.memory',
          'kubevirt.virtualMachineInstances[0].metadata.annotations',
          'kubevirt.virtualMachineInstances[0].spec.evictionStrategy',
        ]) {
          assert.ok(message.includes(field), `${field} in: ${message}`);
        }
        return true;
      },
    );
  });

  it('refuses running and runStrategy together', () => {
    const text = `
name: both
nodes: [{ name: n1 }]
kubevirt:
  virtualMachines:
    - apiVersion: kubevirt.io/v1
      kind: VirtualMachine
      metadata: { name: vm1 }
      spec: { running: true, runStrategy: Always, template: { spec: { domain: {} } } }
`;
    assert.throws(
      () => parseScenario(text),
      /kubevirt\.virtualMachines\[0\]\.spec: running and runStrategy are mutually exclusive/,
    );
  });
});
