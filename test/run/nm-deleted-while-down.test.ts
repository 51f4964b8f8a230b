/**
 * A NodeMaintenance deleted while nothing of drainbridge runs (real `drainbridge run` processes): its
 * finalizer holds the CR — deletion requested, node still in maintenance — until a `run` starts again, whose
 * forwarder sees the pending deletion on its first list and publishes `Maintenance Ended`: the node is
 * restored (uncordoned, the request released), then the finalizer goes and the CR with it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { EvacuationObject } from '../../lib/clients/kube/paths.ts';
import { readLedger } from '../../lib/node/ledger.ts';
import {
  type DrainbridgeProcess,
  spreadScenario,
  startRun,
  startTestCluster,
  type TestCluster,
} from '../forwarder/harness.ts';
import { waitUntil } from '../support/wait.ts';

const NM = [
  'apiVersion: nodemaintenance.medik8s.io/v1beta1',
  'kind: NodeMaintenance',
  'metadata:',
  '  name: nm-node-1',
  'spec:',
  '  nodeName: node-1',
  '  reason: firmware update',
].join('\n');

describe('a NodeMaintenance deleted while drainbridge run is down', () => {
  let cluster: TestCluster;
  const processes: DrainbridgeProcess[] = [];

  const start = async (identity: string): Promise<DrainbridgeProcess> => {
    const run = await startRun(cluster, { identity });
    processes.push(run);
    return run;
  };
  const nodeMaintenance = async (): Promise<
    { metadata: { deletionTimestamp?: string; finalizers?: string[] }; status?: { phase?: string } } | undefined
  > => {
    const got = await cluster.kubectl.run(['get', 'nodemaintenance', 'nm-node-1', '-o', 'json']);
    return got.code === 0 ? JSON.parse(got.stdout) : undefined;
  };
  const records = async (): Promise<EvacuationObject[]> =>
    (await cluster.admin.listEvacuations()).filter((r) => r.spec.nodeName === 'node-1');

  before(async () => {
    cluster = await startTestCluster(spreadScenario(3));
  });
  after(async () => {
    for (const run of processes) run.kill('SIGKILL');
    await Promise.all(processes.map((r) => r.exited));
    await cluster?.stop();
  });

  it('the finalizer keeps the CR; the next run ends the maintenance, restores the node and lets the CR go', async () => {
    const first = await start('run-a');
    const applied = await cluster.kubectl.run(['apply', '-f', '-'], { input: NM });
    assert.equal(applied.code, 0, applied.stderr);
    await waitUntil(
      'nm-node-1 Succeeded',
      async () => (await nodeMaintenance())?.status?.phase === 'Succeeded',
      60_000,
    );
    const [record] = await records();
    const requestId = record?.spec.requestId ?? '';
    assert.match(requestId, /^nm\.nm-node-1\./);

    first.kill('SIGTERM');
    assert.deepEqual(await first.exited, { code: 0, signal: null });
    const deleted = await cluster.kubectl.run(['delete', 'nodemaintenance', 'nm-node-1', '--wait=false']);
    assert.equal(deleted.code, 0, deleted.stderr);
    const pending = await nodeMaintenance();
    assert.ok(pending?.metadata.deletionTimestamp, 'deletion requested');
    assert.deepEqual(pending?.metadata.finalizers, ['drainbridge.io/node-maintenance'], 'held by the finalizer');
    const held = await cluster.admin.getNode('node-1');
    assert.equal(held.spec?.unschedulable, true, 'node-1 still in maintenance: nobody ended it');
    assert.deepEqual(Object.keys(readLedger(held).holds), [requestId]);

    const second = await start('run-b');
    await second.waitForLog('NodeMaintenance deleted: maintenance ends', { nodeMaintenance: 'nm-node-1', requestId });
    await waitUntil('the CR is gone', async () => (await nodeMaintenance()) === undefined, 60_000);
    const node = await cluster.admin.getNode('node-1');
    assert.notEqual(node.spec?.unschedulable, true, 'node-1 schedulable again');
    const ledger = readLedger(node);
    assert.deepEqual(ledger.holds, {}, 'no hold left');
    assert.ok(Object.hasOwn(ledger.released, requestId), 'the NodeMaintenance request was released');
    // The finalizer goes once the hold is released; the Restore records its end a step later.
    await waitUntil('its Restore finished', async () => !!(await records())[0]?.status?.restore?.finishedAt);
    assert.equal((await records()).length, 1, 'one evacuation for the NodeMaintenance, none started again');
  });
});
