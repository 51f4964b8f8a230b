/**
 * Cordon means evacuate for the nodes a label selector picks, end to end (a real `drainbridge run`,
 * `--cordon-evacuates openstack-compute-node=enabled`, nova-kubernetes-drain's opt-in): a cordon of a
 * selected node evacuates it; a cordon of a node the selector does not pick is left alone — no event, no
 * Evacuation record, its pods stay.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  type DrainbridgeProcess,
  RUN_USER,
  spreadScenario,
  startRun,
  startTestCluster,
  type TestCluster,
} from '../forwarder/harness.ts';
import { waitUntil } from '../support/wait.ts';

const SELECTOR = 'openstack-compute-node=enabled';
const SCENARIO = {
  ...spreadScenario(3),
  nodes: [
    { name: 'node-1', labels: { 'openstack-compute-node': 'enabled' } },
    { name: 'node-2', labels: { 'openstack-compute-node': 'enabled' } },
    { name: 'node-3', labels: { 'openstack-compute-node': 'disabled' } },
  ],
};

describe(`cordon means evacuate for the nodes of a selector (${SELECTOR})`, () => {
  let cluster: TestCluster;
  let run: DrainbridgeProcess;

  before(async () => {
    cluster = await startTestCluster(SCENARIO);
    run = await startRun(cluster, { identity: 'run-selector', cordonEvacuates: SELECTOR });
  });
  after(async () => {
    run?.kill('SIGKILL');
    await run?.exited;
    await cluster?.stop();
  });

  it('a cordon of node-3 (not selected) is left alone; a cordon of node-1 (selected) evacuates it', async () => {
    const webOn = async (node: string): Promise<string[]> =>
      (await cluster.admin.listPods(`spec.nodeName=${node}`))
        .filter((p) => p.metadata?.labels?.app === 'web' && !p.metadata?.deletionTimestamp)
        .map((p) => p.metadata?.name ?? '');
    const node3Pods = await webOn('node-3');
    assert.ok(node3Pods.length >= 1 && (await webOn('node-1')).length >= 1, 'both nodes run web pods');
    const mark = cluster.sim.requestLog.mark();

    // The unselected node first: its event, were there one, would be offered before node-1's on the same watch.
    assert.equal((await cluster.kubectl.run(['cordon', 'node-3'])).code, 0);
    assert.equal((await cluster.kubectl.run(['cordon', 'node-1'])).code, 0);
    await run.waitForLog('node cordoned: evacuation requested', { node: 'node-1' });
    await waitUntil(
      'node-1 drained',
      async () =>
        (await cluster.admin.listEvacuations()).find((r) => r.spec.nodeName === 'node-1')?.status?.phase ===
        'NodeDrained',
      60_000,
    );

    assert.deepEqual(
      run.logs('node cordoned: evacuation requested').map((line) => line.node),
      ['node-1'],
      'only the selected node was taken for an evacuation',
    );
    assert.deepEqual(
      (await cluster.admin.listEvacuations()).map((r) => r.spec.nodeName),
      ['node-1'],
      'no Evacuation record for node-3',
    );
    assert.deepEqual(await webOn('node-1'), [], 'node-1 drained of web pods');
    assert.deepEqual(await webOn('node-3'), node3Pods, "node-3's pods stay");
    const aboutNode3 = cluster.sim.requestLog
      .writes({ since: mark, user: RUN_USER })
      .filter((r) => r.name === 'node-3' || node3Pods.includes(r.name))
      .map((r) => `${r.verb} ${r.path}`);
    assert.deepEqual(aboutNode3, [], 'drainbridge wrote nothing to node-3 or its pods');
    const node3 = await cluster.admin.getNode('node-3');
    assert.equal(node3.spec?.unschedulable, true, 'node-3 stays as the person left it: cordoned');
  });
});
