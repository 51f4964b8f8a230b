/** The `drainbridge` command as a user runs it: a separate process, against a simulated cluster. */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeClient } from '../../lib/clients/kube/client.ts';
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

describe('drainbridge evacuate / restore / abort (CLI, embedded)', () => {
  let cluster: DrainbridgeCluster;
  let admin: KubeClient;
  before(async () => {
    cluster = await startDrainbridgeCluster({ scenario: 'demo', speed: 100 });
    const kc = new KubeConfig();
    kc.loadFromFile(cluster.adminKubeconfigPath);
    admin = new KubeClient(kc);
  });
  after(async () => {
    await cluster?.stop();
  });

  it('refuses bad input with exit 2 and changes nothing', async () => {
    const mark = cluster.sim.requestLog.mark();
    const result = await drainbridge([
      'evacuate',
      'node-1',
      '--grace-period',
      'soon',
      '--kubeconfig',
      cluster.kubeconfigPath,
    ]);
    assert.equal(result.code, 2);
    assert.match(result.stderr, /grace-period/);
    const noNode = await drainbridge(['evacuate', '--kubeconfig', cluster.kubeconfigPath]);
    assert.equal(noNode.code, 2);
    assert.match(noNode.stderr, /^drainbridge evacuate: missing NODE$/m);
    assert.deepEqual(cluster.sim.requestLog.writes({ since: mark }), []);
  });

  it('evacuates with --force (the bare pod is evicted, not deleted), then restores', async () => {
    const evacuate = await drainbridge([
      'evacuate',
      'node-1',
      '--ignore-daemonsets',
      '--force',
      '--request-id',
      'cli-1',
      '--kubeconfig',
      cluster.kubeconfigPath,
    ]);
    assert.equal(evacuate.code, 0, evacuate.stderr);
    assert.match(evacuate.stdout, /phase NodeDrained/);
    assert.match(evacuate.stdout, /evacuation of node-1 succeeded/);
    const evictions = cluster.sim.requestLog
      .all({ succeeded: true })
      .filter((e) => e.subresource === 'eviction')
      .map((e) => e.name);
    const deletes = cluster.sim.requestLog.writes({ verb: 'delete', resource: 'pods' });
    assert.deepEqual(deletes, [], 'drainbridge deleted no pod (it evicts, as kubectl does)');
    assert.ok(evictions.includes('debug'), 'the bare pod went through the eviction API');
    const node = await admin.getNode('node-1');
    assert.equal(node.spec?.unschedulable, true);

    const restore = await drainbridge(['restore', 'node-1', '--kubeconfig', cluster.kubeconfigPath]);
    assert.equal(restore.code, 0, restore.stderr);
    assert.match(restore.stdout, /node node-1 restored: uncordoned/);
    assert.notEqual((await admin.getNode('node-1')).spec?.unschedulable, true);
  });

  it('restore of a node without holds has nothing to do: success, said plainly, and no change', async () => {
    const mark = cluster.sim.requestLog.mark();
    const result = await drainbridge(['restore', 'node-2', '--kubeconfig', cluster.kubeconfigPath]);
    assert.equal(result.code, 0);
    assert.match(result.stdout, /node node-2 has no drainbridge hold; nothing to restore/);
    assert.equal(result.stderr, '');
    assert.deepEqual(cluster.sim.requestLog.writes({ since: mark }), []);
  });
});
