/** `drainbridge plan` on the bundled `kubevirt` scenario, as a user runs it (a separate process). */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { type DrainbridgeCluster, startDrainbridgeCluster } from '../../sim/drainbridge.ts';

const BIN = new URL('../../bin/drainbridge.js', import.meta.url).pathname;

function drainbridge(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { timeout: 60_000, env: { ...process.env, POWERTOOLS_LOG_LEVEL: 'ERROR' } },
      (error, stdout, stderr) => {
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
      },
    );
  });
}

/** The lines of one section of the kubevirt branch's text, e.g. `    LiveMigrate (4):` and the VMs under it. */
function vmsUnder(text: string, heading: string): string[] {
  const lines = text.split('\n');
  const start = lines.findIndex((line) => line.startsWith(`    ${heading} (`));
  if (start < 0) return [];
  const out: string[] = [];
  for (const line of lines.slice(start + 1)) {
    if (!line.startsWith('      ')) break;
    out.push(line.trim());
  }
  return out;
}

describe('drainbridge plan on the kubevirt scenario', () => {
  let cluster: DrainbridgeCluster;
  before(async () => {
    cluster = await startDrainbridgeCluster({ scenario: 'kubevirt', speed: 10 });
  });
  after(async () => {
    await cluster?.stop();
  });

  it('lists the VMs by strategy beside the pods, with the blockers; changes nothing', async () => {
    const mark = cluster.sim.requestLog.mark();
    const plan = await drainbridge(['plan', 'node-1', '--ignore-daemonsets', '--kubeconfig', cluster.kubeconfigPath]);
    assert.equal(plan.code, 3, plan.stderr);
    const text = plan.stdout;
    assert.match(text, /^Branch pods:$/m);
    assert.match(text, /^Branch kubevirt:$/m);
    assert.deepEqual(vmsUnder(text, 'LiveMigrate'), [
      'vms/app-1, migratable → live-migrate',
      'vms/app-2, migratable → live-migrate',
      'vms/batch, migratable → live-migrate',
      'vms/db, not migratable → blocker',
    ]);
    assert.deepEqual(vmsUnder(text, 'LiveMigrateIfPossible'), [
      'vms/cache, migratable → live-migrate',
      'vms/scratch, not migratable → blocker',
    ]);
    assert.deepEqual(vmsUnder(text, 'External'), ['vms/tenant-worker, migratable → wait for external controller']);
    assert.deepEqual(vmsUnder(text, 'None'), ['vms/legacy, migratable → blocker']);
    assert.match(
      text,
      /\[NotLiveMigratable\] VMI vms\/legacy has evictionStrategy None: it stays running on node node-1/,
    );
    assert.match(text, /\[NotLiveMigratable\] VMI vms\/db is not live-migratable \(DisksNotLiveMigratable/);
    assert.doesNotMatch(text, /\[LauncherPod\]/, 'launcher pods are the VMs’ branch’s, not pod blockers');
    assert.match(text, /^BLOCKED: 4 blocker\(s\)/m);
    assert.deepEqual(cluster.sim.requestLog.writes({ since: mark }), [], 'plan changes nothing');

    const json = await drainbridge([
      'plan',
      'node-1',
      '--ignore-daemonsets',
      '--json',
      '--kubeconfig',
      cluster.kubeconfigPath,
    ]);
    const parsed = JSON.parse(json.stdout) as {
      branches: { branch: string; kubevirt?: { vmis: { name: string; strategy: string; action: string }[] } }[];
    };
    const kubevirt = parsed.branches.find((b) => b.branch === 'kubevirt');
    assert.equal(kubevirt?.kubevirt?.vmis.find((v) => v.name === 'vms/legacy')?.action, 'blocker');
  });

  it('with --kubevirt-restart-unmigratable: restarts only what KubeVirt allows and a VirtualMachine starts again', async () => {
    const args = [
      'plan',
      'node-1',
      '--ignore-daemonsets',
      '--kubevirt-restart-unmigratable',
      '--kubeconfig',
      cluster.kubeconfigPath,
    ];
    const plan = await drainbridge(args);
    assert.deepEqual(vmsUnder(plan.stdout, 'None'), ['vms/legacy, migratable → restart']);
    assert.match(plan.stdout, /vms\/db .*restart opt-in not applied: its evictionStrategy LiveMigrate forbids/);
    assert.match(
      plan.stdout,
      /vms\/scratch .*restart opt-in not applied: its VirtualMachine vms\/scratch would not start it again \(RerunOnFailure\)/,
    );
  });
});
