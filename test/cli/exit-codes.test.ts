/**
 * Every status of the exit-code table (cli/exit-codes.ts), produced by a real run of the command against
 * a simulated cluster as drainbridge's ServiceAccount — and each with the words the table promises.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { EXIT } from '../../cli/exit-codes.ts';
import { type DrainbridgeCluster, startDrainbridgeCluster } from '../../sim/drainbridge.ts';
import { holdDrainOfNode1 } from './demo-blockers.ts';
import { assertNoNoise, runCli, startCli } from './run-cli.ts';

describe('the exit-code table, status by status', () => {
  let cluster: DrainbridgeCluster;
  let k: string[];
  const seen = new Set<number>();
  before(async () => {
    cluster = await startDrainbridgeCluster({ scenario: 'demo', speed: 20 });
    k = ['--kubeconfig', cluster.kubeconfigPath];
  });
  after(async () => {
    await cluster?.stop();
    assert.deepEqual(
      [...seen].sort((a, b) => a - b),
      Object.values(EXIT).sort((a, b) => a - b),
      'every status was seen',
    );
  });

  async function expectExit(code: number, args: string[]) {
    const result = await runCli([...args, ...k]);
    assert.equal(result.code, code, `${args.join(' ')}\n${result.stdout}\n${result.stderr}`);
    assert.equal(assertNoNoise(result.stdout + result.stderr), undefined);
    seen.add(code);
    return result;
  }

  it('0: done — check passes, plan not blocked', async () => {
    await expectExit(EXIT.ok, ['check']);
    await expectExit(EXIT.ok, ['plan', 'node-2', '--ignore-daemonsets']);
  });

  it('2: bad arguments, nothing changed', async () => {
    const mark = cluster.sim.requestLog.mark();
    const hex = await expectExit(EXIT.usage, ['evacuate', 'node-1', '--grace-period=0x10']);
    assert.match(hex.stderr, /--grace-period: must be an integer, not "0x10"/);
    const empty = await expectExit(EXIT.usage, ['evacuate', 'node-1', '--deadline=']);
    assert.match(empty.stderr, /--deadline: the value is empty/);
    const past = await expectExit(EXIT.usage, ['evacuate', 'node-1', '--deadline', '2020-01-01T00:00:00Z']);
    assert.match(past.stderr, /--deadline: 2020-01-01T00:00:00Z has already passed/);
    const missing = await expectExit(EXIT.usage, ['restore', 'node-9']);
    assert.match(missing.stderr, /node "node-9" not found; nothing was changed/);
    assert.deepEqual(cluster.sim.requestLog.writes({ since: mark }), []);
  });

  it('3: plan is blocked', async () => {
    const plan = await expectExit(EXIT.blocked, ['plan', 'node-1', '--ignore-daemonsets']);
    assert.match(plan.stdout, /BLOCKED: 1 blocker/);
  });

  it('4: the cluster cannot be reached', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'drainbridge-closed-')), 'kubeconfig');
    writeFileSync(path, cluster.sim.kubeconfig().replace(/127\.0\.0\.1:\d+/, '127.0.0.1:9'), { mode: 0o600 });
    const result = await runCli(['check', '--kubeconfig', path]);
    assert.equal(result.code, EXIT.notReady, result.stderr);
    assert.match(result.stderr, /cannot reach the Kubernetes API server/);
    seen.add(result.code);
  });

  it('1 then 5: a deadline passes while blocked (the node stays held); the same request again is refused', async () => {
    // Far enough ahead that a loaded machine's CLI start (seen: 4 s) does not pass it before it is parsed.
    // node-1's drain waits on the web budget (allowing no disruption, from now on) for as long as a case needs.
    holdDrainOfNode1(cluster.sim);
    const deadline = new Date(Date.now() + 12_000).toISOString();
    const args = ['evacuate', 'node-1', '--ignore-daemonsets', '--request-id', 'late', '--deadline', deadline];
    const failed = await expectExit(EXIT.failed, args);
    assert.match(
      failed.stderr,
      /the evacuation failed: DeadlineExceeded: evacuation of node node-1 passed the request's deadline/,
    );
    assert.match(failed.stderr, /Node node-1 is cordoned and held by request late/);
    assert.match(failed.stderr, /To end the maintenance: drainbridge restore node-1 --request-id late/);
    const again = await expectExit(EXIT.refused, args.slice(0, -2));
    assert.match(again.stderr, /refused: request late already ended on node node-1 \(Failed\)/);
    await expectExit(EXIT.ok, ['restore', 'node-1', '--request-id', 'late']);
    const abort = await expectExit(EXIT.refused, ['abort', 'node-1']);
    assert.match(abort.stderr, /nothing to abort/);
  });

  it('1: a refused drain fails at once, as kubectl drain, naming the pod and the flag; the node stays held', async () => {
    cluster.sim.store.create(
      { group: '', resource: 'pods' },
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'shell', namespace: 'default' },
        spec: { nodeName: 'node-3', containers: [{ name: 'shell', image: 'busybox:1.37' }] },
      },
    );
    const mark = cluster.sim.requestLog.mark();
    const started = Date.now();
    const failed = await expectExit(EXIT.failed, ['evacuate', 'node-3', '--ignore-daemonsets', '--request-id', 'bare']);
    assert.match(
      failed.stderr,
      /the evacuation failed: EvacuationFailed: unable to drain node "node-3" due to error: cannot delete Pods that declare no controller \(use --force to override\): default\/shell/,
    );
    assert.match(failed.stderr, /Node node-3 is cordoned and held by request bare/);
    assert.ok(Date.now() - started < 30_000, 'at once, not at a timeout or deadline');
    const evictions = cluster.sim.requestLog
      .writes({ since: mark, resource: 'pods' })
      .filter((r) => r.subresource === 'eviction');
    assert.deepEqual(evictions, [], "nothing evicted: node-3's web pods stay, as with kubectl drain");
    await expectExit(EXIT.ok, ['restore', 'node-3', '--request-id', 'bare']);
  });

  it('130 and 143: stopped by SIGINT or SIGTERM', async () => {
    for (const [signal, code] of [
      ['SIGINT', EXIT.interrupted],
      ['SIGTERM', EXIT.terminated],
    ] as const) {
      const run = startCli(['evacuate', 'node-1', '--ignore-daemonsets', '--request-id', `sig-${code}`, ...k]);
      await run.waitFor(/waiting — pods:/);
      run.child.kill(signal);
      const result = await run.exited;
      assert.equal(result.code, code, result.stderr);
      assert.match(result.stderr, new RegExp(`${signal}: stopped before the next step`));
      seen.add(code);
      await expectExit(EXIT.ok, ['restore', 'node-1', '--request-id', `sig-${code}`]);
    }
  });
});
