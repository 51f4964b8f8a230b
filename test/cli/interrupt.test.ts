/**
 * Ctrl-C during a drain, then the same command again: the first run stops before its next step, hands
 * the request back (its owner mark marked released), says what state the node is in and the two
 * commands that resume or undo; the second resumes at once (under 5 s) and finishes.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeClient } from '../../lib/clients/kube/client.ts';
import { evacuationName } from '../../lib/clients/kube/paths.ts';
import { OWNER_ANNOTATION } from '../../lib/workflow/owner-record.ts';
import { type DrainbridgeCluster, startDrainbridgeCluster } from '../../sim/drainbridge.ts';
import { waitUntil } from '../support/wait.ts';
import { BUDGET_BLOCKED, holdDrainOfNode1, releaseDrainOfNode1 } from './demo-blockers.ts';
import { assertNoNoise, runCli, startCli } from './run-cli.ts';

describe('SIGINT during an evacuation, then the same command again', () => {
  let cluster: DrainbridgeCluster;
  let admin: KubeClient;
  before(async () => {
    cluster = await startDrainbridgeCluster({ scenario: 'demo', speed: 20 });
    const kc = new KubeConfig();
    kc.loadFromFile(cluster.adminKubeconfigPath);
    admin = new KubeClient(kc);
    holdDrainOfNode1(cluster.sim);
  });
  after(async () => {
    await cluster?.stop();
  });

  it('stops, hands back, tells how to resume or undo; the re-run resumes within 5 s and finishes', async () => {
    const command = [
      'evacuate',
      'node-1',
      '--ignore-daemonsets',
      '--request-id',
      'ctrl-c',
      '--kubeconfig',
      cluster.kubeconfigPath,
    ];
    const first = startCli(command);
    // The web budget allows no disruption: a drain in progress.
    await first.waitFor(new RegExp(`waiting — pods: .*${BUDGET_BLOCKED.source}`));
    first.child.kill('SIGINT');
    const stopped = await first.exited;
    assert.equal(stopped.code, 130, stopped.stderr);
    assert.match(
      stopped.stderr,
      /drainbridge evacuate: SIGINT: stopped before the next step; node node-1 is cordoned and held by request ctrl-c \(since [^)]+\); phase NodeDraining\./,
    );
    assert.ok(
      stopped.stderr.includes(
        `To resume: drainbridge evacuate node-1 --request-id ctrl-c --ignore-daemonsets --kubeconfig ${cluster.kubeconfigPath}`,
      ),
      stopped.stderr,
    );
    assert.ok(
      stopped.stderr.includes(
        `To undo:   drainbridge restore node-1 --request-id ctrl-c --kubeconfig ${cluster.kubeconfigPath}`,
      ),
    );
    assert.equal(assertNoNoise(stopped.stdout + stopped.stderr), undefined);
    const record = await admin.getEvacuation(evacuationName('ctrl-c'));
    const mark = JSON.parse(record.metadata.annotations?.[OWNER_ANNOTATION] ?? '{}');
    assert.ok(mark.released, `the owner mark was handed back: ${JSON.stringify(mark)}`);

    // The operator lowers the budget, then runs the very same command.
    await releaseDrainOfNode1(cluster.sim);
    const second = startCli(command);
    // Resumed within 5 s: a new execution holds the owner mark (no wait for the handed-back claim to expire).
    await waitUntil(
      'a new execution holds the owner mark (no wait for the handed-back claim to expire)',
      async () => {
        const now = await admin.getEvacuation(evacuationName('ctrl-c'));
        const owner = JSON.parse(now.metadata.annotations?.[OWNER_ANNOTATION] ?? '{}');
        return !owner.released && owner.executionId !== mark.executionId;
      },
      5_000,
      { everyMs: 50 },
    );
    // The budget, just lowered, lets the web pods go (one at a time; a pod the eviction API refused while
    // the budget held it is asked again after its backoff).
    await second.waitFor(/evicting pod shop\/web-/, 30_000);
    const done = await second.exited;
    assert.equal(done.code, 0, done.stderr);
    assert.doesNotMatch(done.stdout, /is being evacuated by execution/);
    assert.match(done.stdout, /evacuated: node node-1 is cordoned and held by request ctrl-c/);
    const restored = await runCli(['restore', 'node-1', '--kubeconfig', cluster.kubeconfigPath]);
    assert.equal(restored.code, 0, restored.stderr);
  });
});
