/**
 * Acceptance of `drainbridge run` (a real child process) against the simulator with the real kubectl:
 * cordon means evacuate, drainbridge's own cordons are not echoed, NodeMaintenance end to end with the
 * status NMO tooling reads, and the refusal when node-maintenance-operator handles a NodeMaintenance.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import type { EvacuationObject } from '../../lib/clients/kube/paths.ts';
import { readLedger } from '../../lib/node/ledger.ts';
import {
  DrainbridgeProcess,
  metric,
  scrape,
  spreadScenario,
  startRun,
  startTestCluster,
  type TestCluster,
} from '../forwarder/harness.ts';
import { waitUntil } from '../support/wait.ts';

/** Several nodes are held at once here (node-3 by hand while node-2's and node-1's cordons evacuate). */
const ENV = { DRAINBRIDGE_MAX_HELD_NODES: '4' };

async function recordsOf(cluster: TestCluster, node: string): Promise<EvacuationObject[]> {
  const all = await cluster.admin.listEvacuations();
  return all.filter((record) => record.spec.nodeName === node);
}

async function podsOn(cluster: TestCluster, node: string): Promise<V1Pod[]> {
  const pods = await cluster.admin.listPods(`spec.nodeName=${node}`);
  return pods.filter((pod) => !pod.metadata?.deletionTimestamp && pod.metadata?.labels?.app === 'web');
}

describe('drainbridge run: cordon means evacuate, NodeMaintenance', () => {
  let cluster: TestCluster;
  let run: DrainbridgeProcess;
  let ops: string;

  before(async () => {
    cluster = await startTestCluster(spreadScenario(5));
    run = await startRun(cluster, { identity: 'run-a', cordonEvacuates: 'all', env: ENV, leadWithinMs: 30_000 });
    ops = await run.opsUrl();
  });
  after(async () => {
    run?.kill('SIGTERM');
    await run?.exited;
    await cluster?.stop();
  });

  it('kubectl cordon node-2 evacuates it; kubectl uncordon restores it', async () => {
    assert.ok((await podsOn(cluster, 'node-2')).length > 0, 'node-2 runs web pods to begin with');
    assert.equal((await cluster.kubectl.run(['cordon', 'node-2'])).code, 0);
    await waitUntil(
      'node-2 drained',
      async () => (await recordsOf(cluster, 'node-2'))[0]?.status?.phase === 'NodeDrained',
      60_000,
    );
    const [record] = await recordsOf(cluster, 'node-2');
    assert.match(record?.spec.requestId ?? '', /^cordon\.node-2\.[0-9a-f]{12}$/);
    assert.equal(record?.spec.origin, 'cordon');
    assert.deepEqual(await podsOn(cluster, 'node-2'), [], 'no web pod left on node-2');
    await waitUntil('web runs 6 pods elsewhere', async () => {
      const pods = await cluster.admin.listPods();
      const running = pods.filter(
        (p) => p.metadata?.labels?.app === 'web' && p.status?.phase === 'Running' && !p.metadata?.deletionTimestamp,
      );
      return running.length === 6 && running.every((p) => p.spec?.nodeName !== 'node-2');
    });

    assert.equal((await cluster.kubectl.run(['uncordon', 'node-2'])).code, 0);
    await waitUntil(
      'the Restore finished',
      async () => !!(await recordsOf(cluster, 'node-2'))[0]?.status?.restore?.finishedAt,
      30_000,
    );
    const node = await cluster.admin.getNode('node-2');
    assert.notEqual(node.spec?.unschedulable, true, 'node-2 is schedulable');
    assert.deepEqual(readLedger(node).holds, {}, 'no hold left');
    assert.ok(
      Object.hasOwn(readLedger(node).released, record?.spec.requestId ?? ''),
      'the uncordon ended the same request',
    );
    const text = await scrape(ops);
    assert.equal(metric(text, 'drainbridge_forwarder_events_published_total', { detail_type: 'Node Cordoned' }), 1);
    assert.equal(metric(text, 'drainbridge_forwarder_events_published_total', { detail_type: 'Node Uncordoned' }), 1);
    assert.ok(metric(text, 'drainbridge_pods_evicted_total') >= 1);
    assert.equal(metric(text, 'drainbridge_evacuation_duration_seconds_count', { outcome: 'succeeded' }), 1);
  });

  it("drainbridge's own cordon (drainbridge evacuate node-3) is not echoed as Node Cordoned", async () => {
    const evacuate = new DrainbridgeProcess(
      [
        'evacuate',
        'node-3',
        '--ignore-daemonsets',
        '--request-id',
        'manual-node-3',
        '--kubeconfig',
        await cluster.kubeconfigFor('drainbridge'),
      ],
      ENV,
    );
    const exit = await evacuate.exited;
    assert.equal(exit.code, 0, evacuate.output.join('\n'));
    assert.equal((await cluster.admin.getNode('node-3')).spec?.unschedulable, true);
    // A later cordon by a person: its event follows node-3's change on the same watch, so once it is
    // published an echo of node-3 would have been published before it.
    assert.equal((await cluster.kubectl.run(['cordon', 'node-1'])).code, 0);
    await run.waitForLog('node cordoned: evacuation requested', { node: 'node-1' });
    const cordoned = run.logs('node cordoned: evacuation requested').map((line) => line.node);
    assert.deepEqual(cordoned, ['node-2', 'node-1'], 'node-3 (drainbridge evacuate) was not echoed');
    assert.deepEqual(
      (await recordsOf(cluster, 'node-3')).map((r) => r.spec.requestId),
      ['manual-node-3'],
      'node-3 has only its manual request',
    );
    await waitUntil(
      'node-1 drained',
      async () => (await recordsOf(cluster, 'node-1'))[0]?.status?.phase === 'NodeDrained',
      60_000,
    );
    assert.equal((await cluster.kubectl.run(['uncordon', 'node-1'])).code, 0);
  });

  it('kubectl apply of a NodeMaintenance evacuates node-4; phase Succeeded with pod counts; kubectl delete restores it', async () => {
    const manifest = [
      'apiVersion: nodemaintenance.medik8s.io/v1beta1',
      'kind: NodeMaintenance',
      'metadata:',
      '  name: nm-node-4',
      'spec:',
      '  nodeName: node-4',
      '  reason: kernel upgrade',
    ].join('\n');
    const applied = await cluster.kubectl.run(['apply', '-f', '-'], { input: manifest });
    assert.equal(applied.code, 0, applied.stderr);
    await waitUntil(
      'the NodeMaintenance reports Succeeded',
      async () =>
        (await cluster.kubectl.run(['get', 'nm', 'nm-node-4', '-o', 'jsonpath={.status.phase}'])).stdout ===
        'Succeeded',
      60_000,
    );
    const status = JSON.parse(
      (await cluster.kubectl.run(['get', 'nodemaintenances', 'nm-node-4', '-o', 'json'])).stdout,
    ).status;
    assert.equal(status.drainProgress, 100);
    assert.ok(status.evictionPods >= 1, `evictionPods ${status.evictionPods}`);
    assert.equal(status.totalpods, status.evictionPods + 1, 'totalpods counts the DaemonSet pod too');
    assert.match(status.lastUpdate, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const table = (await cluster.kubectl.run(['get', 'nodemaintenances'])).stdout;
    assert.match(table, /nm-node-4\s+node-4\s+Succeeded\s+100/);
    assert.equal((await cluster.admin.getNode('node-4')).spec?.unschedulable, true);

    const deleted = await cluster.kubectl.run(['delete', 'nodemaintenance', 'nm-node-4', '--timeout=60s']);
    assert.equal(deleted.code, 0, deleted.stderr);
    const gone = await cluster.kubectl.run(['get', 'nodemaintenance', 'nm-node-4']);
    assert.match(gone.stderr, /NotFound/, 'the CR is gone (finalizer removed)');
    const node = await cluster.admin.getNode('node-4');
    assert.notEqual(node.spec?.unschedulable, true, 'node-4 is schedulable again');
    assert.deepEqual(readLedger(node).holds, {});
  });

  it('refuses (Event + log line, no action) a NodeMaintenance that node-maintenance-operator handles', async () => {
    const manifest = JSON.stringify({
      apiVersion: 'nodemaintenance.medik8s.io/v1beta1',
      kind: 'NodeMaintenance',
      metadata: { name: 'nm-by-nmo', finalizers: ['foregroundDeleteNodeMaintenance'] },
      spec: { nodeName: 'node-5', reason: 'handled by NMO' },
    });
    assert.equal((await cluster.kubectl.run(['create', '-f', '-'], { input: manifest })).code, 0);
    await run.waitForLog('NodeMaintenance refused: node-maintenance-operator acts on it', {
      nodeMaintenance: 'nm-by-nmo',
    });
    await waitUntil('the refusal Event', async () => {
      const events = await cluster.kubectl.run([
        'get',
        'events',
        '-n',
        'default',
        '--field-selector',
        'reason=NodeMaintenanceOperatorPresent',
        '-o',
        'name',
      ]);
      return events.stdout.trim().length > 0;
    });
    const nm = JSON.parse((await cluster.kubectl.run(['get', 'nm', 'nm-by-nmo', '-o', 'json'])).stdout);
    assert.deepEqual(nm.metadata.finalizers, ['foregroundDeleteNodeMaintenance'], 'no drainbridge finalizer');
    assert.equal(nm.status, undefined, 'no status written');
    const node = await cluster.admin.getNode('node-5');
    assert.notEqual(node.spec?.unschedulable, true);
    assert.deepEqual(readLedger(node).holds, {});
  });
});
