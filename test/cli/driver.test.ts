/**
 * Who drives a request, as a person sees it on the demo scenario (the web budget allows no disruption,
 * so an evacuation stays under way until the test lowers it: demo-blockers.ts):
 *  - Ctrl-C an evacuation: `drainbridge status` calls the request abandoned — no process has driven it
 *    for N s — with the command that resumes it, and names the process that drove it last;
 *  - `drainbridge evacuate node-1` again (no --request-id) resumes that request: no second hold;
 *  - while an evacuation runs, a second `drainbridge evacuate node-1` follows it, adds no hold, and
 *    exits with the first one's outcome.
 */
import assert from 'node:assert/strict';
import { hostname } from 'node:os';
import { after, before, describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import type { StatusReport } from '../../cli/status/model.ts';
import { KubeClient } from '../../lib/clients/kube/client.ts';
import { ledgerOf } from '../../lib/node/ledger.ts';
import { type DrainbridgeCluster, startDrainbridgeCluster } from '../../sim/drainbridge.ts';
import { BUDGET_BLOCKED, holdDrainOfNode1, releaseDrainOfNode1 } from './demo-blockers.ts';
import { type RunningCli, runCli, startCli } from './run-cli.ts';

const BLOCKED = new RegExp(`waiting — pods: .*${BUDGET_BLOCKED.source}`);

describe('who drives a request: status after Ctrl-C, a second evacuate of the same node', () => {
  let cluster: DrainbridgeCluster;
  let admin: KubeClient;
  let k: string[];
  const running: RunningCli[] = [];
  before(async () => {
    cluster = await startDrainbridgeCluster({ scenario: 'demo', speed: 20 });
    const kc = new KubeConfig();
    kc.loadFromFile(cluster.adminKubeconfigPath);
    admin = new KubeClient(kc);
    k = ['--kubeconfig', cluster.kubeconfigPath];
    holdDrainOfNode1(cluster.sim);
  });
  after(async () => {
    for (const cli of running) cli.child.kill('SIGKILL');
    await cluster?.stop();
  });

  function start(args: string[]): RunningCli {
    const cli = startCli([...args, ...k]);
    running.push(cli);
    return cli;
  }

  async function holds(): Promise<string[]> {
    const read = ledgerOf(await admin.getNode('node-1'));
    assert.equal(read.status, 'ok');
    return read.status === 'ok' ? Object.keys(read.ledger.holds) : [];
  }

  it('after Ctrl-C, status shows the request abandoned with the resume command; evacuate again resumes it', async () => {
    const first = start(['evacuate', 'node-1', '--ignore-daemonsets', '--request-id', 'drv-a']);
    await first.waitFor(BLOCKED);
    const pid = first.child.pid;
    first.child.kill('SIGINT');
    assert.equal((await first.exited).code, 130);

    const shown = await runCli(['status', 'node-1', ...k]);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(
      shown.stdout,
      /no process has driven this request for \d+s — resume: drainbridge evacuate node-1 --request-id drv-a/,
    );
    assert.match(shown.stdout, new RegExp(`last driven by process ${pid} on .+ handed the request back`));
    const report = JSON.parse((await runCli(['status', 'node-1', '-o', 'json', ...k])).stdout) as StatusReport;
    const request = report.requests.find((r) => r.requestId === 'drv-a');
    assert.equal(request?.driving, 'abandoned');
    assert.equal(request?.driver?.process, `${pid}@${hostname()}`);
    assert.ok(request?.driver?.handedBack);

    // The same node again, no request id: the abandoned request is resumed, not joined by a second one.
    const again = start(['evacuate', 'node-1', '--ignore-daemonsets']);
    await again.waitFor(
      /is being evacuated by request drv-a, but no process has driven this request .*; resuming it here/,
    );
    await again.waitFor(BLOCKED);
    assert.deepEqual(await holds(), ['drv-a'], 'no second hold');
    const driven = JSON.parse((await runCli(['status', 'node-1', '-o', 'json', ...k])).stdout) as StatusReport;
    assert.equal(driven.requests.find((r) => r.requestId === 'drv-a')?.driving, 'driven');
    again.child.kill('SIGINT');
    const stopped = await again.exited;
    assert.equal(stopped.code, 130);
    assert.match(stopped.stderr, /To resume: drainbridge evacuate node-1 --request-id drv-a/);
  });

  it('a second evacuate of a node under way follows the running request and exits with its outcome', async () => {
    const first = start(['evacuate', 'node-1', '--ignore-daemonsets', '--request-id', 'drv-a']);
    await first.waitFor(BLOCKED);
    const second = start(['evacuate', 'node-1', '--ignore-daemonsets']);
    await second.waitFor(
      /node node-1 is already evacuated by request drv-a \(driven by process \d+ on .*\); following it/,
    );
    await second.waitFor(/request drv-a: held, phase NodeDraining; pods \d+\/\d+/);
    assert.deepEqual(await holds(), ['drv-a'], 'no second hold');

    await releaseDrainOfNode1(cluster.sim);
    const done = await first.exited;
    assert.equal(done.code, 0, done.stderr);
    const followed = await second.exited;
    assert.equal(followed.code, 0, followed.stderr);
    assert.match(followed.stdout, /evacuated by request drv-a: node node-1 is cordoned and held by request drv-a/);
    assert.match(followed.stdout, /To end the maintenance: drainbridge restore node-1 --request-id drv-a/);
    assert.deepEqual(await holds(), ['drv-a'], 'still one hold');
    const restored = await runCli(['restore', 'node-1', '--request-id', 'drv-a', ...k]);
    assert.equal(restored.code, 0, restored.stderr);
    assert.equal((await admin.getNode('node-1')).spec?.unschedulable ?? false, false, 'one restore uncordons');
  });
});
