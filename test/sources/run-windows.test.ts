/**
 * `drainbridge run` (a real child process) arms the maintenance windows of DRAINBRIDGE_MAINTENANCE_WINDOWS
 * once it leads: a window whose cron comes round while run is up opens inside run and evacuates the
 * node its selector matches — only that one — through the packaged state machines. The window fires
 * every minute (cron has minute steps), so the test waits up to a minute and a bit for it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { EvacuationObject } from '../../lib/clients/kube/paths.ts';
import { DrainbridgeProcess, spreadScenario, startTestCluster, type TestCluster } from '../forwarder/harness.ts';
import { waitUntil } from '../support/wait.ts';

const WINDOW = {
  name: 'every-minute',
  schedule: 'cron(* * * * ? *)',
  timezone: 'Europe/Berlin',
  durationMinutes: 30,
  nodeSelector: 'drainbridge.io/maintenance-window=test',
  maxNodes: 1,
  endsOn: 'operator',
};

describe('drainbridge run arms DRAINBRIDGE_MAINTENANCE_WINDOWS', () => {
  let cluster: TestCluster;
  let run: DrainbridgeProcess;

  before(async () => {
    const base = spreadScenario(3);
    cluster = await startTestCluster({
      ...base,
      name: 'run-windows',
      nodes: base.nodes.map((node) =>
        node.name === 'node-3' ? { ...node, labels: { 'drainbridge.io/maintenance-window': 'test' } } : node,
      ),
    });
    run = new DrainbridgeProcess(
      [
        'run',
        '--kubeconfig',
        await cluster.kubeconfigFor('drainbridge-run'),
        '--metrics-address',
        '127.0.0.1:0',
        '--retry-interval-ms',
        '100',
        '--identity',
        'run-windows',
      ],
      { DRAINBRIDGE_MAINTENANCE_WINDOWS: JSON.stringify([WINDOW]) },
    );
    await run.waitForLog('leader election: this replica leads');
  });
  after(async () => {
    run?.kill('SIGTERM');
    await run?.exited;
    await cluster?.stop();
  });

  it('the window opens inside run and evacuates the node it selects, and no other', async () => {
    await run.waitForLog('maintenance window opened', {}, 90_000);
    // run's own line (the openWindow task logs one too): what the window put on the bus.
    await waitUntil('run logged the opening', () =>
      run.logs('maintenance window opened').some((line) => Array.isArray(line.requested)),
    );
    const opened = run.logs('maintenance window opened').find((line) => Array.isArray(line.requested)) ?? {};
    assert.equal(opened.window, WINDOW.name, JSON.stringify(opened));
    assert.equal((opened.requested as string[]).length, 1, 'one node requested: the one the selector matches');
    const recordsOf = async (node: string): Promise<EvacuationObject[]> =>
      (await cluster.admin.listEvacuations()).filter((record) => record.spec.nodeName === node);
    await waitUntil(
      'node-3 evacuated by the window',
      async () => (await recordsOf('node-3'))[0]?.status?.phase === 'NodeDrained',
      60_000,
      { context: () => run.output.slice(-10).join('\n') },
    );
    const [record] = await recordsOf('node-3');
    assert.equal(record?.spec.origin, 'schedule');
    assert.deepEqual(opened.requested, [record?.spec.requestId]);
    assert.equal((await cluster.admin.getNode('node-3')).spec?.unschedulable, true);
    for (const node of ['node-1', 'node-2']) {
      assert.deepEqual(await recordsOf(node), [], `${node} is not in the window`);
      assert.notEqual((await cluster.admin.getNode(node)).spec?.unschedulable, true);
    }
  });
});
