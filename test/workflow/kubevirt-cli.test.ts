/**
 * `drainbridge evacuate --kubevirt-restart-unmigratable` end to end: the command as a user runs it (a
 * separate process, drainbridge's ServiceAccount) on the bundled `kubevirt` scenario. The flag — not the
 * environment variable — restarts the one VM KubeVirt lets be evicted and whose VirtualMachine starts it
 * again (`vms/legacy`: None, runStrategy Always); the VMs it cannot restart stay running, and with them
 * (and the External VM, only waited for) the evacuation gives up at its deadline, the node left held.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { EXIT } from '../../cli/exit-codes.ts';
import { type DrainbridgeCluster, startDrainbridgeCluster } from '../../sim/drainbridge.ts';
import type { KubeObject } from '../../sim/store/types.ts';
import { drainbridge } from '../support/cli.ts';
import { DRAINBRIDGE_SA } from '../support/request-log.ts';

const VMIS = { group: 'kubevirt.io', resource: 'virtualmachineinstances' };

function vmisNow(cluster: DrainbridgeCluster): Map<string, { uid: string; phase: string; node: string }> {
  const items = cluster.sim.store.list(VMIS).items as (KubeObject & {
    status?: { phase?: string; nodeName?: string };
  })[];
  return new Map(
    items.map((vmi) => [
      vmi.metadata.name ?? '',
      { uid: vmi.metadata.uid ?? '', phase: vmi.status?.phase ?? '', node: vmi.status?.nodeName ?? '' },
    ]),
  );
}

describe('drainbridge evacuate --kubevirt-restart-unmigratable on the kubevirt scenario', () => {
  let cluster: DrainbridgeCluster;
  before(async () => {
    cluster = await startDrainbridgeCluster({ scenario: 'kubevirt', speed: 50 });
  });
  after(async () => {
    await cluster?.stop();
  });

  it('restarts vms/legacy elsewhere through its VirtualMachine; the others it may not restart keep running', async () => {
    const before = vmisNow(cluster);
    assert.equal(before.get('legacy')?.node, 'node-1');
    const mark = cluster.sim.requestLog.mark();
    const deadline = new Date(Date.now() + 12_000).toISOString();
    const run = await drainbridge([
      'evacuate',
      'node-1',
      '--ignore-daemonsets',
      '--force',
      '--kubevirt-restart-unmigratable',
      '--request-id',
      'restart-flag',
      '--deadline',
      deadline,
      '--kubeconfig',
      cluster.kubeconfigPath,
    ]);
    assert.equal(run.code, EXIT.failed, `${run.stdout}\n${run.stderr}`);
    assert.match(run.stdout, /vms\/legacy restarting elsewhere/);
    assert.match(run.stdout, /vms\/db .*restart opt-in not applied: its evictionStrategy LiveMigrate forbids/);
    assert.match(run.stderr, /DeadlineExceeded/);
    assert.match(run.stderr, /Node node-1 is cordoned and held by request restart-flag/);

    const evicted = cluster.sim.requestLog
      .writes({ since: mark, user: DRAINBRIDGE_SA, resource: 'pods' })
      .filter((r) => r.subresource === 'eviction' && r.name.startsWith('virt-launcher-'))
      .map((r) => r.name);
    assert.equal(evicted.length, 1, `one launcher pod evicted: ${evicted.join(', ')}`);
    assert.match(evicted[0] ?? '', /^virt-launcher-legacy-/);
    const after = vmisNow(cluster);
    const legacy = after.get('legacy');
    assert.notEqual(legacy?.uid, before.get('legacy')?.uid, 'a new VMI: its VirtualMachine started it again');
    assert.equal(legacy?.phase, 'Running');
    assert.notEqual(legacy?.node, 'node-1');
    for (const name of ['db', 'scratch', 'tenant-worker']) {
      assert.deepEqual(
        after.get(name),
        { ...before.get(name), phase: 'Running', node: 'node-1' },
        `vms/${name}: the same VMI, still running on node-1`,
      );
    }
  });
});
