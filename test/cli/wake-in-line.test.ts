/**
 * A one-shot `drainbridge evacuate` waiting in line (no `drainbridge run` to wake it) is woken by its own
 * watch of the admission Lease as the slot frees: admitted within moments of the release, not at
 * WaitForSlot's fallback (10 s after it parked its token). The release is made the moment its token is
 * parked, so without the watch the admission would come 10 s after that, less the restore's own time.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { ADMISSION_LEASE, readQueue } from '../../lib/admission/records.ts';
import { KubeClient } from '../../lib/clients/kube/client.ts';
import { isHeld, readLedger } from '../../lib/node/ledger.ts';
import { type DrainbridgeCluster, startDrainbridgeCluster } from '../../sim/drainbridge.ts';
import { waitUntil } from '../support/wait.ts';
import { IDLE_NODES_SCENARIO } from '../workflow/scenario.ts';
import { runCli, startCli } from './run-cli.ts';

const NAMESPACE = 'drainbridge';

describe('drainbridge evacuate waiting in line, with no drainbridge run', () => {
  let cluster: DrainbridgeCluster;
  let admin: KubeClient;
  before(async () => {
    cluster = await startDrainbridgeCluster({ scenario: IDLE_NODES_SCENARIO, speed: 1, settleMs: 5_000 });
    const kc = new KubeConfig();
    kc.loadFromFile(cluster.adminKubeconfigPath);
    admin = new KubeClient(kc);
  });
  after(async () => {
    await cluster?.stop();
  });

  const evacuate = (node: string, id: string) => [
    'evacuate',
    node,
    '--ignore-daemonsets',
    '--request-id',
    id,
    '--kubeconfig',
    cluster.kubeconfigPath,
  ];

  it('is woken by its own watch when the slot frees, well before the 10 s fallback', async () => {
    const first = await runCli(evacuate('node-1', 'first'));
    assert.equal(first.code, 0, first.stderr);

    const second = startCli(evacuate('node-2', 'second'));
    // Its token parked on its place: it sleeps in WaitForSlot now.
    await waitUntil(
      'the second request parks a wake-up token',
      async () => {
        const lease = await admin.getLease(NAMESPACE, ADMISSION_LEASE);
        return (readQueue(lease).second as { wake?: string } | undefined)?.wake !== undefined;
      },
      30_000,
      { everyMs: 50 },
    );
    const parkedAt = Date.now();
    const restored = await runCli([
      'restore',
      'node-1',
      '--request-id',
      'first',
      '--kubeconfig',
      cluster.kubeconfigPath,
    ]);
    assert.equal(restored.code, 0, restored.stderr);
    const releasedAt = Date.now();
    await waitUntil('node-2 is held', async () => isHeld(readLedger(await admin.getNode('node-2'))), 30_000, {
      everyMs: 50,
    });
    const admittedAt = Date.now();
    const ended = await second.exited;
    assert.equal(ended.code, 0, ended.stderr);
    assert.ok(
      admittedAt - releasedAt < 3_000,
      `admitted ${admittedAt - releasedAt} ms after the release (parked ${releasedAt - parkedAt} ms before it): the fallback, not a wake-up`,
    );
    const back = await runCli(['restore', 'node-2', '--request-id', 'second', '--kubeconfig', cluster.kubeconfigPath]);
    assert.equal(back.code, 0, back.stderr);
  });
});
