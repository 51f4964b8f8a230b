/**
 * `drainbridge status` on the demo scenario, as a person runs it while evacuations run beside it: the
 * node in maintenance with its hold, the blocked request with its blocker, the one waiting for a slot in
 * the queue; `-o json|yaml|wide`; `--watch` printing again when (and only when) something changed and
 * ending on Ctrl-C with exit 0; damaged records reported with their repair, never a crash. It reads
 * only: the simulator's request log shows no write of its.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { parse as parseYaml } from 'yaml';
import type { StatusReport } from '../../cli/status/model.ts';
import { ADMISSION_LEASE, QUEUE_ANNOTATION } from '../../lib/admission/records.ts';
import { LEDGER_ANNOTATION } from '../../lib/node/ledger.ts';
import { type DrainbridgeCluster, startDrainbridgeCluster } from '../../sim/drainbridge.ts';
import { BUDGET_BLOCKED, holdDrainOfNode1, releaseDrainOfNode1 } from './demo-blockers.ts';
import { assertNoNoise, type RunningCli, runCli, startCli } from './run-cli.ts';

const SA = 'system:serviceaccount:drainbridge:drainbridge';

describe('drainbridge status on the demo scenario', () => {
  let cluster: DrainbridgeCluster;
  let k: string[];
  /**
   * The evacuations beside status run as the person at the keyboard (the admin): a request waiting in line
   * writes the admission Lease (its place, its wake-up token) whenever its wait comes round, so status's own
   * writes (it must make none) are told apart by user.
   */
  let asPerson: string[];
  const running: RunningCli[] = [];
  /** The evacuations started beside status: st-1 (blocked on node-1), st-2 (waiting for node-1's slot). */
  const evacuations = new Map<string, RunningCli>();

  before(async () => {
    cluster = await startDrainbridgeCluster({ scenario: 'demo', speed: 50 });
    k = ['--kubeconfig', cluster.kubeconfigPath];
    asPerson = ['--kubeconfig', cluster.adminKubeconfigPath];
    holdDrainOfNode1(cluster.sim);
  });
  after(async () => {
    for (const cli of running) cli.child.kill('SIGKILL');
    await cluster?.stop();
  });

  /** `drainbridge status ARGS`: exit 0, no noise, and not one write to the cluster. */
  async function status(args: string[] = []) {
    const mark = cluster.sim.requestLog.mark();
    const result = await runCli(['status', ...args, ...k]);
    assert.equal(result.code, 0, `status ${args.join(' ')}\n${result.stdout}\n${result.stderr}`);
    assert.equal(assertNoNoise(result.stdout + result.stderr), undefined);
    assert.deepEqual(
      cluster.sim.requestLog.writes({ since: mark, user: SA }).map((r) => `${r.verb} ${r.path}`),
      [],
      'status wrote nothing',
    );
    return result;
  }

  it('an idle cluster: says so, exit 0', async () => {
    const idle = await status();
    assert.equal(idle.stdout.trim(), 'No node is in maintenance, and no request is waiting.');
    const node = await status(['node-3']);
    assert.match(node.stdout, /^NODE\s+CORDONED\s+PHASE/m);
    assert.match(node.stdout, /^node-3\s+no\s+-\s+-/m);
  });

  it('a blocked evacuation and one waiting for its slot: holds, phase, progress, blockers, the queue', async () => {
    const first = startCli(['evacuate', 'node-1', '--ignore-daemonsets', '--request-id', 'st-1', ...asPerson]);
    running.push(first);
    evacuations.set('st-1', first);
    await first.waitFor(BUDGET_BLOCKED, 60_000);
    const second = startCli(['evacuate', 'node-2', '--ignore-daemonsets', '--request-id', 'st-2', ...asPerson]);
    running.push(second);
    evacuations.set('st-2', second);
    await second.waitFor(/waiting for a maintenance slot/, 60_000);

    const table = await status();
    assert.match(table.stdout, /^NODE\s+CORDONED\s+PHASE\s+HELD-BY\s+REQUESTER\s+ORIGIN\s+SINCE$/m);
    assert.match(table.stdout, /^node-1\s+yes\s+NodeDraining\s+st-1\s+\S+\s+manual\s+\d{4}-\d\d-\d\dT/m);
    assert.match(table.stdout, /^st-1\s+node-1\s+held\s+NodeDraining\s+\d+s\s+0\/2\s+0\/0\s+0\/0\s+2$/m);
    assert.match(table.stdout, /^st-2\s+node-2\s+queued\s+-\s+\d+s\s+-\s+-\s+-\s+0$/m);
    assert.match(table.stdout, new RegExp(`st-1 on node-1:\n {2}${BUDGET_BLOCKED.source}`));
    assert.match(
      table.stdout,
      /Waiting for a maintenance slot, oldest first:\n {2}1\. st-2 for node-2, since \S+ \(\d+s\)/,
    );

    const report = JSON.parse((await status(['-o', 'json'])).stdout) as StatusReport;
    const byId = new Map(report.requests.map((r) => [r.requestId, r]));
    assert.equal(byId.get('st-1')?.state, 'held');
    assert.deepEqual(
      byId.get('st-1')?.branches.find((b) => b.branch === 'pods'),
      { branch: 'pods', moved: 0, total: 2, inFlight: 0, skipped: 1, done: false },
    );
    assert.equal(byId.get('st-2')?.state, 'queued');
    assert.deepEqual(
      report.queue.map((q) => [q.position, q.requestId, q.node]),
      [[1, 'st-2', 'node-2']],
    );
    assert.deepEqual(
      report.nodes.map((n) => [n.name, n.holds.map((h) => h.requestId)]),
      [['node-1', ['st-1']]],
    );

    const yaml = parseYaml((await status(['node-2', '-oyaml'])).stdout) as StatusReport;
    assert.equal(yaml.node, 'node-2');
    assert.deepEqual(
      yaml.requests.map((r) => [r.requestId, r.state]),
      [['st-2', 'queued']],
    );
    const wide = await status(['-o', 'wide']);
    assert.match(wide.stdout, /BLOCKERS\s+IN-FLIGHT\s+REQUESTER\s+ORIGIN\s+SINCE\s+NOTE/);
  });

  it('--watch prints again when something changes, only then, and ends on Ctrl-C with exit 0', async () => {
    const watch = startCli(['status', '--watch', '-o', 'json', ...k]);
    running.push(watch);
    await watch.waitFor(/"st-2"/, 30_000);
    // The operator clears the blocker: st-1 drains; restored, it frees the slot for st-2.
    await releaseDrainOfNode1(cluster.sim);
    await watch.waitFor(/"phase":"NodeDrained"/, 60_000);
    const restore = await runCli(['restore', 'node-1', ...k]);
    assert.equal(restore.code, 0, restore.stderr);
    await watch.waitFor(/"requestId":"st-1","node":"node-1","state":"restored"/, 30_000);
    await watch.waitFor(/"requestId":"st-2","node":"node-2","state":"held"/, 60_000);
    watch.child.kill('SIGINT');
    const ended = await watch.exited;
    assert.equal(ended.code, 0, ended.stderr);
    const lines = ended.stdout.split('\n').filter(Boolean);
    const reports = lines.map((line) => JSON.parse(line) as StatusReport);
    assert.ok(reports.length >= 3, `one line per change (${reports.length})`);
    const withoutClock = (r: StatusReport) =>
      JSON.stringify({ ...r, time: 0, requests: r.requests.map((q) => ({ ...q, elapsedSeconds: 0 })), queue: [] });
    for (let i = 1; i < reports.length; i++) {
      assert.notEqual(withoutClock(reports[i] as StatusReport), withoutClock(reports[i - 1] as StatusReport));
    }
    for (const [id, cli] of evacuations) assert.equal((await cli.exited).code, 0, `evacuation ${id}: ${cli.stderr()}`);
  });

  it('damaged records are reported with the command that repairs them, exit 0', async () => {
    cluster.sim.store.mutate({ group: '', resource: 'nodes' }, { name: 'node-3' }, (node) => {
      node.metadata.annotations = { ...node.metadata.annotations, [LEDGER_ANNOTATION]: '{"holds": 1}' };
      const spec = (node as { spec?: Record<string, unknown> }).spec;
      (node as { spec?: Record<string, unknown> }).spec = { ...spec, unschedulable: true };
      return node;
    });
    cluster.sim.store.mutate(
      { group: 'coordination.k8s.io', resource: 'leases' },
      { namespace: 'drainbridge', name: ADMISSION_LEASE },
      (lease) => {
        lease.metadata.annotations = { ...lease.metadata.annotations, [QUEUE_ANNOTATION]: 'not json' };
        return lease;
      },
    );
    const damaged = await status();
    assert.match(damaged.stdout, /^node-3\s+yes\s+-\s+\?\s+\(its ledger cannot be read\)/m);
    assert.match(damaged.stdout, /Records drainbridge cannot read/);
    assert.match(damaged.stdout, /ledger of node node-3: .+\n {4}to repair: drainbridge repair node-3/);
    assert.match(
      damaged.stdout,
      /admission queue \(Lease annotation drainbridge\.io\/admission-queue\): .+\n {4}to repair: drainbridge repair /,
    );
  });

  it('a node that does not exist is a bad argument (exit 2); a bad flag value names the flag', async () => {
    const missing = await runCli(['status', 'node-9', ...k]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /node "node-9" not found/);
    const bad = await runCli(['status', '-o', 'xml', ...k]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--output: must be one of wide, json, yaml, not "xml"/);
  });
});
