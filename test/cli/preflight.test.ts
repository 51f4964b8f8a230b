/**
 * Every command checks the cluster first and changes nothing when it is not ready: it names what is
 * missing and the one command that installs it, within seconds, without a stack trace or an HTTP dump
 * (read from the simulator's request log, not from the command's claims). And the preflight's access
 * list is exactly what the commands call, both ways: each call a real run makes is on its command's list,
 * and each call on a command's list is made by some run of that command.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ADMISSION_LEASE, QUEUE_ANNOTATION } from '../../lib/admission/records.ts';
import { LEDGER_ANNOTATION } from '../../lib/node/ledger.ts';
import { describeAccess, type Operation, requiredAccess } from '../../lib/preflight/index.ts';
import { OWNER_ANNOTATION } from '../../lib/workflow/owner-record.ts';
import { type DrainbridgeCluster, startDrainbridgeCluster } from '../../sim/drainbridge.ts';
import { isStateChange } from '../../sim/server/request-log.ts';
import { type Simulator, startSimulator } from '../../sim/simulator.ts';
import { assertNoNoise, runCli } from './run-cli.ts';

const INSTALL = 'kubectl apply -k deploy/base';
const dir = mkdtempSync(join(tmpdir(), 'drainbridge-preflight-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function kubeconfigFile(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text, { mode: 0o600 });
  return path;
}

describe('a cluster without drainbridge’s resources', () => {
  let sim: Simulator;
  let admin: string;
  before(async () => {
    sim = await startSimulator({ scenario: 'small' });
    admin = kubeconfigFile('admin', sim.kubeconfig());
  });
  after(async () => {
    await sim?.stop();
  });

  for (const args of [
    ['evacuate', 'node-2', '--ignore-daemonsets'],
    ['restore', 'node-2'],
    ['abort', 'node-2'],
  ]) {
    it(`${args[0]} exits 4 within 4 s of the CLI's start, names what is missing and the install command, and writes nothing`, async () => {
      // The process's own start is the baseline: on a loaded 2-core CI machine starting Node alone took
      // seconds, which is not what this checks (no retry, no wait before the refusal).
      const start = await runCli(['--version']);
      const mark = sim.requestLog.mark();
      const result = await runCli([...args, '--kubeconfig', admin]);
      assert.equal(result.code, 4, result.stderr);
      assert.ok(result.ms < start.ms + 4_000, `took ${result.ms} ms (starting the CLI alone: ${start.ms} ms)`);
      assert.match(result.stderr, /is not ready for drainbridge; nothing was changed/);
      assert.match(result.stderr, /CRD evacuations\.drainbridge\.io is not installed/);
      if (args[0] === 'evacuate') assert.match(result.stderr, /namespace drainbridge does not exist/);
      assert.ok(result.stderr.includes(INSTALL), result.stderr);
      assert.equal(assertNoNoise(result.stdout + result.stderr), undefined);
      assert.deepEqual(sim.requestLog.writes({ since: mark }), [], 'no write reached the API server');
    });
  }

  it('check lists the same, exit 4', async () => {
    const result = await runCli(['check', '--kubeconfig', admin]);
    assert.equal(result.code, 4);
    assert.match(result.stdout, /MISSING\s+CRD evacuations\.drainbridge\.io/);
    assert.ok(result.stdout.includes(INSTALL));
    const data = await runCli(['check', '-o', 'json', '--kubeconfig', admin]);
    assert.equal(data.code, 4, data.stderr);
    const report = JSON.parse(data.stdout) as { ready: boolean; fixes: string[]; results: { ok: boolean }[] };
    assert.equal(report.ready, false);
    assert.ok(report.fixes.includes(INSTALL), data.stdout);
    assert.ok(report.results.some((r) => !r.ok));
  });

  it("with Nova on, the Nova branch's own check (its definition's preflight, from the registry) is listed; with Nova off, none", async () => {
    const on = await runCli(['check', '-o', 'json', '--kubeconfig', admin], { DRAINBRIDGE_NOVA: 'true' });
    assert.equal(on.code, 4, on.stderr);
    const nova = (
      JSON.parse(on.stdout) as { results: { check: string; ok: boolean; what: string; fix?: string }[] }
    ).results.filter((r) => r.check === 'nova');
    assert.equal(nova.length, 1, on.stdout);
    assert.equal(nova[0]?.ok, false);
    assert.match(nova[0]?.what ?? '', /^the OpenStack credentials cannot be loaded: /);
    assert.equal(nova[0]?.fix, 'correct the OS_* variables or the clouds.yaml entry named by OS_CLOUD');
    const off = await runCli(['check', '-o', 'json', '--kubeconfig', admin]);
    const checks = (JSON.parse(off.stdout) as { results: { check: string }[] }).results.map((r) => r.check);
    assert.ok(!checks.includes('nova'), checks.join(', '));
    // abort reaches no branch's outside world: no Nova check even with Nova on.
    const abort = await runCli(['abort', 'node-2', '--kubeconfig', admin], { DRAINBRIDGE_NOVA: 'true' });
    assert.doesNotMatch(abort.stderr, /OpenStack|Nova/);
  });

  it('credentials without RBAC: each call it may not make is named', async () => {
    const jane = kubeconfigFile(
      'jane',
      sim.kubeconfig(sim.tokenForUser({ username: 'jane', groups: ['system:authenticated'] })),
    );
    const mark = sim.requestLog.mark();
    const result = await runCli(['evacuate', 'node-2', '--kubeconfig', jane]);
    assert.equal(result.code, 4, result.stderr);
    assert.match(result.stderr, /\(as jane\)/);
    assert.match(result.stderr, /jane may not patch nodes \(to cordon and keep the ledger annotation\)/);
    assert.match(result.stderr, /jane may not create pods\/eviction \(to evict pods/);
    assert.deepEqual(sim.requestLog.writes({ since: mark }), []);
  });

  it('plan works before drainbridge is installed: it plans and says scheduled starts need the CRD', async () => {
    const mark = sim.requestLog.mark();
    const result = await runCli(['plan', 'node-2', '--ignore-daemonsets', '--kubeconfig', admin]);
    assert.ok([0, 3].includes(result.code), `exit ${result.code}: ${result.stderr}`);
    assert.match(result.stdout, /Estimated evacuation time: \d+ s/);
    assert.match(result.stdout, /scheduled starts need the Evacuation CRD, which is not installed/);
    assert.ok(result.stdout.includes(INSTALL), result.stdout);
    assert.doesNotMatch(result.stdout + result.stderr, /404|NotFound|could not find the requested resource/);
    assert.deepEqual(sim.requestLog.writes({ since: mark }), [], 'no write reached the API server');
    const json = await runCli(['plan', 'node-2', '--ignore-daemonsets', '--json', '--kubeconfig', admin]);
    const timing = (JSON.parse(json.stdout) as { timing: { recordsUnavailable?: string } }).timing;
    assert.match(timing.recordsUnavailable ?? '', /needs? the Evacuation CRD/);
  });

  it('plan with credentials that may not read pods: exit 4, the call named, the one install command', async () => {
    const jane = kubeconfigFile(
      'jane-plan',
      sim.kubeconfig(sim.tokenForUser({ username: 'jane', groups: ['system:authenticated'] })),
    );
    const result = await runCli(['plan', 'node-2', '--kubeconfig', jane]);
    assert.equal(result.code, 4, result.stderr);
    assert.match(result.stderr, /jane may not list pods/);
    assert.ok(result.stderr.includes(INSTALL), result.stderr);
    assert.doesNotMatch(result.stderr, /evacuations/, 'the records are not required before the CRD exists');
  });
});

/**
 * Calls on a command's list that no run here can make: KubeVirt's migrations are created, watched (a pass
 * waiting for its own to end) and deleted only where VMs live, and VirtualMachines are read only with the restart opt-in — the KubeVirt suite
 * (test/workflow/kubevirt.test.ts) makes each of them as the ServiceAccount (test/workflow/rbac.test.ts
 * relies on the same).
 */
const MADE_BY_THE_KUBEVIRT_SUITE = new Set([
  'create virtualmachineinstancemigrations.kubevirt.io',
  'watch virtualmachineinstancemigrations.kubevirt.io',
  'delete virtualmachineinstancemigrations.kubevirt.io',
  'get virtualmachines.kubevirt.io',
]);

const EVACUATIONS = { group: 'drainbridge.io', resource: 'evacuations' };

describe('the preflight asks about exactly the calls each command makes', () => {
  let cluster: DrainbridgeCluster;
  /** Every call each operation's runs made, as RBAC names them. */
  const usedBy = new Map<Operation, Set<string>>();
  before(async () => {
    cluster = await startDrainbridgeCluster({ scenario: 'demo', speed: 50 });
  });
  after(async () => {
    await cluster?.stop();
  });

  /** The calls drainbridge's ServiceAccount made since `mark`, as RBAC names them. */
  function callsSince(mark: number): Set<string> {
    const calls = cluster.sim.requestLog
      .all({ since: mark, user: 'system:serviceaccount:drainbridge:drainbridge' })
      .filter((r) => r.resource !== '' && (r.verb !== 'create' || isStateChange(r)));
    return new Set(
      calls.map((r) =>
        describeAccess({
          verb: r.verb,
          group: r.group,
          resource: r.resource,
          ...(r.subresource ? { subresource: r.subresource } : {}),
          namespace: r.namespace,
          why: '',
        }),
      ),
    );
  }

  /** The operation's list, as the preflight asks it. */
  const listedFor = (operation: Operation) =>
    new Set(requiredAccess(operation, { namespace: 'drainbridge' }).map(describeAccess));

  async function covered(operation: Operation, args: string[]): Promise<Set<string>> {
    const mark = cluster.sim.requestLog.mark();
    const result = await runCli([...args, '--kubeconfig', cluster.kubeconfigPath]);
    assert.ok([0, 3].includes(result.code), `${args.join(' ')}: ${result.code}\n${result.stderr}`);
    const listed = listedFor(operation);
    const used = callsSince(mark);
    // An access asked about for every namespace (a ClusterRole's reach) covers the call in any one of them.
    const isListed = (call: string) => listed.has(call) || listed.has(call.replace(/ in [a-z0-9-]+$/, ''));
    assert.deepEqual(
      [...used].filter((call) => !isListed(call)),
      [],
      `${operation} calls beyond its preflight list`,
    );
    const all = usedBy.get(operation) ?? new Set<string>();
    for (const call of used) all.add(call);
    usedBy.set(operation, all);
    return used;
  }

  /** The record as if its Restore had finished two days ago (and its owner mark gone): due to expire. */
  function expire(name: string): void {
    cluster.sim.store.mutate(EVACUATIONS, { name }, (record) => {
      const twoDaysAgo = new Date(Date.now() - 48 * 3_600_000).toISOString();
      const object = record as unknown as { metadata: { annotations?: Record<string, string> }; status: object };
      object.status = { ...object.status, restore: { startedAt: twoDaysAgo, finishedAt: twoDaysAgo } };
      delete object.metadata.annotations?.[OWNER_ANNOTATION];
      return record;
    });
  }

  it('plan, evacuate, abort, restore and status, run for real as the ServiceAccount', async () => {
    await covered('plan', ['plan', 'node-1', '--ignore-daemonsets']);
    const evacuate = await covered('evacuate', [
      'evacuate',
      'node-1',
      '--ignore-daemonsets',
      '--force',
      '--request-id',
      'pf-1',
    ]);
    await covered('abort', ['abort', 'node-1']);
    await covered('restore', ['restore', 'node-1']);
    for (const call of [
      'patch nodes',
      'create pods/eviction',
      'update leases.coordination.k8s.io in drainbridge',
      'create evacuations.drainbridge.io',
    ]) {
      assert.ok(
        [...evacuate].some((c) => c === call || c.startsWith(`${call} in `)),
        `evacuate made ${call}`,
      );
    }
    // Record expiry: an admission deletes pf-1's expired record, then a Restore deletes pf-2's.
    expire('pf-1');
    await covered('evacuate', ['evacuate', 'node-2', '--ignore-daemonsets', '--request-id', 'pf-2']);
    await covered('restore', ['restore', 'node-2']);
    await covered('evacuate', ['evacuate', 'node-3', '--ignore-daemonsets', '--request-id', 'pf-3']);
    expire('pf-2');
    await covered('restore', ['restore', 'node-3']);
    for (const operation of ['evacuate', 'restore'] as const) {
      assert.ok(usedBy.get(operation)?.has('delete evacuations.drainbridge.io'), `${operation} deleted a record`);
    }
    await covered('status', ['status']);
    await covered('status', ['status', 'node-3', '-o', 'json']);
  });

  it('repair, run for real on a damaged ledger, admission queue and owner claim', async () => {
    cluster.sim.store.mutate({ group: '', resource: 'nodes' }, { name: 'node-3' }, (node) => {
      node.metadata.annotations = { ...node.metadata.annotations, [LEDGER_ANNOTATION]: '{"holds": 1}' };
      return node;
    });
    cluster.sim.store.mutate(
      { group: 'coordination.k8s.io', resource: 'leases' },
      { namespace: 'drainbridge', name: ADMISSION_LEASE },
      (lease) => {
        lease.metadata.annotations = { ...lease.metadata.annotations, [QUEUE_ANNOTATION]: '[1]' };
        return lease;
      },
    );
    cluster.sim.store.mutate(EVACUATIONS, { name: 'pf-3' }, (record) => {
      record.metadata.annotations = { ...record.metadata.annotations, [OWNER_ANNOTATION]: 'not json' };
      return record;
    });
    const repair = await covered('repair', ['repair', 'node-3', '--yes']);
    for (const call of ['get nodes', 'patch nodes', 'list evacuations.drainbridge.io']) {
      assert.ok([...repair].includes(call), `repair made ${call}`);
    }
  });

  it("every call on a command's list is made by some run of that command (the lists ask for no more)", () => {
    const unused: string[] = [];
    for (const [operation, used] of usedBy) {
      // A call made in one namespace answers a list entry for that namespace or for every namespace.
      const made = (call: string) => used.has(call) || [...used].some((u) => u.replace(/ in [a-z0-9-]+$/, '') === call);
      for (const call of listedFor(operation)) {
        if (!made(call) && !MADE_BY_THE_KUBEVIRT_SUITE.has(call)) unused.push(`${operation}: ${call}`);
      }
    }
    assert.deepEqual(unused, [], 'listed calls no run made');
    assert.deepEqual(
      [...usedBy.keys()].sort(),
      ['abort', 'evacuate', 'plan', 'repair', 'restore', 'status'],
      'every operation ran',
    );
  });
});
