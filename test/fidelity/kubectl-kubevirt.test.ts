/**
 * Fidelity of the simulated KubeVirt with the real kubectl: KubeVirt's printer columns and short
 * names, `create`/`get -w`/`describe`/`-o yaml`/`delete` of migrations (a delete waits for the abort
 * and the finalizer), virt-api's refusals as kubectl prints them, and `kubectl drain` of a LiveMigrate
 * VM's launcher pod (refused with "Eviction triggered evacuation", then evicted once the VM has
 * migrated and its launcher completed, as docs/handling-eviction-requests.md shows it).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Simulator, startSimulator } from '../../sim/index.ts';
import { whenSettled } from '../../sim/scenarios/index.ts';
import type { KubeObject } from '../../sim/store/types.ts';
import { waitUntil } from '../support/wait.ts';
import { findKubectl, Kubectl } from './kubectl-runner.ts';

const VMIS = { group: 'kubevirt.io', resource: 'virtualmachineinstances' };
const binary = findKubectl();
const skip = binary ? false : 'kubectl not found on this machine (the fidelity suite needs /usr/bin/kubectl)';

const migration = (name: string, vmi: string): string =>
  `apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstanceMigration\nmetadata: { name: ${name}, namespace: vms }\nspec: { vmiName: ${vmi} }\n`;

const statusOf = (object: KubeObject | undefined): Record<string, unknown> =>
  (object?.status ?? {}) as Record<string, unknown>;

describe('kubectl against the simulated KubeVirt', { skip }, () => {
  let sim: Simulator;
  let kubectl: Kubectl;
  const ok = async (args: string[], input?: string): Promise<string> => {
    const result = await kubectl.run(args, input === undefined ? {} : { input });
    assert.equal(result.code, 0, `kubectl ${args.join(' ')} failed:\n${result.stderr}`);
    return result.stdout;
  };

  before(async () => {
    sim = await startSimulator({ scenario: 'kubevirt', speed: 20 });
    kubectl = new Kubectl(binary as string, sim.kubeconfig());
    if (sim.scenario) await whenSettled(sim.store, sim.scenario, 120_000);
  });
  after(async () => {
    kubectl?.close();
    await sim?.stop();
  });

  it("prints VMIs, VMs and the KubeVirt CR with KubeVirt's columns and short names", async () => {
    const vmis = await ok(['get', 'vmi', '-n', 'vms']);
    assert.match(vmis, /^NAME\s+AGE\s+PHASE\s+IP\s+NODENAME\s+READY\s*$/m);
    assert.match(vmis, /^app-1\s+\S+\s+Running\s+10\.244\.\d+\.\d+\s+node-1\s+True\s*$/m);
    const wide = await ok(['get', 'vmis', '-n', 'vms', '-o', 'wide']);
    assert.match(wide, /^NAME\s+AGE\s+PHASE\s+IP\s+NODENAME\s+READY\s+LIVE-MIGRATABLE\s+PAUSED\s*$/m);
    assert.match(wide, /^db\s+\S+\s+Running\s+\S+\s+node-1\s+True\s+False\s*$/m);
    assert.match(wide, /^cache\s+\S+\s+Running\s+\S+\s+node-1\s+True\s+True\s*$/m);
    const vms = await ok(['get', 'vm', '-n', 'vms']);
    assert.match(vms, /^NAME\s+AGE\s+STATUS\s+READY\s*$/m);
    assert.match(vms, /^legacy\s+\S+\s+Running\s+True\s*$/m);
    const both = await ok(['get', 'vmi,vm', '-n', 'vms', '-o', 'name']);
    assert.match(both, /^virtualmachineinstance\.kubevirt\.io\/batch$/m);
    assert.match(both, /^virtualmachine\.kubevirt\.io\/tenant-worker$/m);
    const kv = await ok(['get', 'kv', '-A']);
    assert.match(kv, /^NAMESPACE\s+NAME\s+AGE\s+PHASE\s*$/m);
    assert.match(kv, /^kubevirt\s+kubevirt\s+\S+\s+Deployed\s*$/m);
    const launchers = await ok(['get', 'pods', '-n', 'vms', '-l', 'kubevirt.io=virt-launcher', '-o', 'name']);
    assert.equal(launchers.trim().split('\n').length, 8);
  });

  it('creates a migration, streams its phases with get -w, and describes it', async () => {
    const mark = sim.requestLog.mark();
    const watch = kubectl.start(['get', 'vmim', '-n', 'vms', '-w']);
    try {
      // kubectl lists first, then watches from the list's resourceVersion: a migration created before the
      // list would show up in whatever phase it had reached, so wait until the watch is open.
      await waitUntil(
        'the watch to open',
        () =>
          sim.requestLog.all({ since: mark, verb: 'watch', resource: 'virtualmachineinstancemigrations' }).length > 0,
        20_000,
      );
      assert.match(
        await ok(['create', '-f', '-'], migration('move-app-1', 'app-1')),
        /virtualmachineinstancemigration\.kubevirt\.io\/move-app-1 created/,
      );
      await waitUntil(
        'the watch to show Succeeded',
        () => /move-app-1\s+Succeeded\s+app-1/.test(watch.output()),
        60_000,
      );
    } finally {
      await watch.stop();
    }
    const seen = watch
      .output()
      .split('\n')
      .map((line) => /^move-app-1\s+(\S+)\s+app-1/.exec(line)?.[1])
      .filter((phase): phase is string => phase !== undefined)
      .filter((phase, i, all) => phase !== all[i - 1]);
    assert.deepEqual(seen, [
      'Pending',
      'Scheduling',
      'Scheduled',
      'PreparingTarget',
      'TargetReady',
      'Running',
      'Succeeded',
    ]);
    assert.match(watch.output(), /^NAME\s+PHASE\s+VMI\s*$/m);
    const described = await ok(['describe', 'vmim', 'move-app-1', '-n', 'vms']);
    assert.match(described, /^\s+Phase:\s+Succeeded$/m);
    assert.match(described, /^\s+Source Node:\s+node-1$/m);
    assert.match(described, /^\s+Target Node:\s+node-[23]$/m);
    assert.match(
      described,
      /Normal\s+SuccessfulMigration\s+\S+\s+migration-controller\s+Source node reported migration succeeded/,
    );
    const yaml = await ok(['get', 'vmim', 'move-app-1', '-n', 'vms', '-o', 'yaml']);
    assert.match(yaml, /^ {4}completed: true$/m);
    assert.match(yaml, /^ {2}phase: Succeeded$/m);
    assert.doesNotMatch(yaml, /finalizers/, 'the finalizer is gone once the migration is final');
    const vmi = await ok([
      'get',
      'vmi',
      'app-1',
      '-n',
      'vms',
      '-o',
      'jsonpath={.status.nodeName} {.metadata.labels.kubevirt\\.io/nodeName}',
    ]);
    assert.match(vmi, /^node-[23] node-[23]$/);
  });

  it("prints virt-api's refusal of a migration of a non-migratable VMI", async () => {
    const refused = await kubectl.run(['create', '-f', '-'], { input: migration('move-db', 'db') });
    assert.equal(refused.code, 1);
    assert.match(
      refused.stderr,
      /^Error from server: error when creating "STDIN": admission webhook "migration-create-validator\.kubevirt\.io" denied the request: Cannot migrate VMI, Reason: DisksNotLiveMigratable, Message: cannot migrate VMI: PVC rootdisk is not shared/m,
    );
  });

  it('delete of a running migration waits for the abort; the VMI stays where it was', async () => {
    await ok(['annotate', 'vmi', 'batch', '-n', 'vms', 'sim.drainbridge.io/migration-seconds=3600']);
    await ok(['create', '-f', '-'], migration('slow-batch', 'batch'));
    await ok(['wait', '--for=jsonpath={.status.phase}=Running', 'vmim/slow-batch', '-n', 'vms', '--timeout=60s']);
    const deleted = await ok(['delete', 'vmim', 'slow-batch', '-n', 'vms', '--timeout=60s']);
    assert.match(deleted, /virtualmachineinstancemigration\.kubevirt\.io "slow-batch" deleted/);
    const gone = await kubectl.run(['get', 'vmim', 'slow-batch', '-n', 'vms']);
    assert.match(gone.stderr, /NotFound|not found/, 'kubectl delete returned once the finalizer let it go');
    const state = statusOf(sim.store.get(VMIS, 'vms', 'batch')).migrationState as Record<string, unknown>;
    assert.equal(state.abortStatus, 'Succeeded');
    assert.equal(state.failureReason, 'Live migration aborted ');
    assert.equal(statusOf(sim.store.get(VMIS, 'vms', 'batch')).nodeName, 'node-1');
  });

  it('drain of a LiveMigrate VM: refused with "Eviction triggered evacuation", evicted after it migrated', async () => {
    const result = await kubectl.run(
      [
        'drain',
        'node-1',
        '--pod-selector=kubevirt.io/vm=app-2',
        '--ignore-daemonsets',
        '--delete-emptydir-data',
        '--force',
        '--timeout=120s',
      ],
      { timeoutMs: 150_000 },
    );
    assert.equal(result.code, 0, result.stderr);
    assert.match(
      result.stderr,
      /error when evicting pods\/"virt-launcher-app-2-[a-z0-9]{5}" -n "vms" \(will retry after 5s\): admission webhook "virt-launcher-eviction-interceptor\.kubevirt\.io" denied the request: Eviction triggered evacuation of VMI "vms\/app-2"/,
    );
    assert.match(result.stdout, /pod\/virt-launcher-app-2-[a-z0-9]{5} evicted/);
    assert.match(result.stdout, /node\/node-1 drained/);
    const vmi = sim.store.get(VMIS, 'vms', 'app-2');
    assert.notEqual(statusOf(vmi).nodeName, 'node-1');
    assert.equal(statusOf(vmi).phase, 'Running');
    await ok(['uncordon', 'node-1']);
  });
});
