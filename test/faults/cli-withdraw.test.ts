/**
 * Fault injection (issue 24, found by the soak): `drainbridge evacuate` stopped by Ctrl-C while its request
 * waits for a slot. The request holds nothing ("Nothing to undo") and nothing drives it any more; before
 * this its Evacuation record showed no end for ever. Now it is withdrawn: the record says so, and why, and
 * the request has left the admission line; the node it waited for was never touched.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeClient } from '../../lib/clients/kube/client.ts';
import { evacuationName } from '../../lib/clients/kube/paths.ts';
import { readLedger } from '../../lib/node/ledger.ts';
import { type DrainbridgeCluster, startDrainbridgeCluster } from '../../sim/drainbridge.ts';
import { BUDGET_BLOCKED, holdDrainOfNode1 } from '../cli/demo-blockers.ts';
import { startCli } from '../cli/run-cli.ts';
import { DRAINBRIDGE_SA } from '../support/request-log.ts';

/** How long the burst lasts: longer than the client's own retries of one call (4 attempts, under 1.5 s). */
const BURST_MS = 8_000;

describe('fault injection: Ctrl-C while the request waits for a slot', () => {
  let cluster: DrainbridgeCluster;
  let admin: KubeClient;
  before(async () => {
    cluster = await startDrainbridgeCluster({ scenario: 'demo', speed: 20 });
    const kc = new KubeConfig();
    kc.loadFromFile(cluster.adminKubeconfigPath);
    admin = new KubeClient(kc);
  });
  after(async () => {
    await cluster?.stop();
  });

  it('withdraws the request: its record ends (withdrawn, why), it leaves the line, node-2 untouched', async () => {
    const kubeconfig = ['--kubeconfig', cluster.kubeconfigPath];
    // node-1 takes the one slot: its web budget allows no disruption, so it holds the slot meanwhile.
    holdDrainOfNode1(cluster.sim);
    const holder = startCli(['evacuate', 'node-1', '--ignore-daemonsets', '--request-id', 'holder', ...kubeconfig]);
    await holder.waitFor(BUDGET_BLOCKED);
    const waiting = startCli(['evacuate', 'node-2', '--ignore-daemonsets', '--request-id', 'waiter', ...kubeconfig]);
    await waiting.waitFor(/slot/);
    waiting.child.kill('SIGINT');
    const stopped = await waiting.exited;
    assert.equal(stopped.code, 130, stopped.stderr);
    assert.match(stopped.stderr, /Nothing to undo: this request holds nothing on the node\./);
    assert.match(stopped.stderr, /Request waiter is withdrawn: its record says so\./);

    const record = await admin.getEvacuation(evacuationName('waiter'));
    assert.equal(record.status?.outcome, 'withdrawn', JSON.stringify(record.status));
    assert.ok(Number.isFinite(Date.parse(record.status?.endedAt ?? '')), 'the record says when it ended');
    assert.match(record.status?.outcomeReason ?? '', /stopped \(SIGINT\) while the request waited for a slot/);
    const lease = await admin.coordination.readNamespacedLease({
      name: 'drainbridge-admission',
      namespace: 'drainbridge',
    });
    assert.ok(!JSON.stringify(lease.metadata?.annotations ?? {}).includes('waiter'), 'it left the admission line');
    const node2 = await admin.core.readNode({ name: 'node-2' });
    assert.notEqual(node2.spec?.unschedulable, true, 'node-2 was not cordoned');
    assert.deepEqual(readLedger(node2).holds, {}, 'node-2 was not held');

    holder.child.kill('SIGINT');
    await holder.exited;
  });

  // The soak (seeds 979070, 916278): Ctrl-C landed in a 429 burst on drainbridge's account; the node read,
  // the hand-back and the withdrawal each failed after the client's few quick retries, and the record was
  // left without an end for ever. Now each rides out the fault for a while (cli/after-interrupt.ts).
  it('Ctrl-C during a burst of 429s: the withdrawal waits the burst out; the record still ends', async () => {
    const kubeconfig = ['--kubeconfig', cluster.kubeconfigPath];
    const holder = startCli(['evacuate', 'node-1', '--ignore-daemonsets', '--request-id', 'holder-2', ...kubeconfig]);
    await holder.waitFor(BUDGET_BLOCKED);
    const waiting = startCli(['evacuate', 'node-2', '--ignore-daemonsets', '--request-id', 'waiter-2', ...kubeconfig]);
    await waiting.waitFor(/slot/);
    const heal = cluster.sim.faults.failRequests({ user: DRAINBRIDGE_SA }, 429, 'test: a burst of 429s');
    const healing = setTimeout(heal, BURST_MS);
    try {
      waiting.child.kill('SIGINT');
      const stopped = await waiting.exited;
      assert.equal(stopped.code, 130, stopped.stderr);
      assert.match(stopped.stderr, /Request waiter-2 is withdrawn: its record says so\./);
      assert.doesNotMatch(stopped.stderr, /could not be handed back/);
    } finally {
      clearTimeout(healing);
      heal();
    }
    const record = await admin.getEvacuation(evacuationName('waiter-2'));
    assert.equal(record.status?.outcome, 'withdrawn', JSON.stringify(record.status));
    assert.match(record.status?.outcomeReason ?? '', /stopped \(SIGINT\) while the request waited for a slot/);

    holder.child.kill('SIGINT');
    await holder.exited;
  });
});
