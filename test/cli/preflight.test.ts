/**
 * Every command checks the cluster first and changes nothing when it is not ready: it names what is
 * missing and the one command that installs it, within seconds, without a stack trace or an HTTP dump
 * (read from the simulator's request log, not from the command's claims). And the preflight's access
 * list is exactly what the commands call: each call a real run makes is on its command's list.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { LEDGER_ANNOTATION } from '../../lib/node/ledger.ts';
import { describeAccess, type Operation, requiredAccess } from '../../lib/preflight/index.ts';
import { type DrainbridgeCluster, startDrainbridgeCluster } from '../../sim/drainbridge.ts';
import { isStateChange } from '../../sim/server/request-log.ts';
import { type Simulator, startSimulator } from '../../sim/simulator.ts';
import { assertNoNoise, runCli } from './run-cli.ts';

const INSTALL = 'kubectl apply -f deploy/crds/evacuations.yaml -f deploy/rbac/drainbridge.yaml';
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
    it(`${args[0]} exits 4 within 5 s, names what is missing and the install command, and writes nothing`, async () => {
      const mark = sim.requestLog.mark();
      const result = await runCli([...args, '--kubeconfig', admin]);
      assert.equal(result.code, 4, result.stderr);
      assert.ok(result.ms < 5_000, `took ${result.ms} ms`);
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
});

describe('the preflight asks about exactly the calls each command makes', () => {
  let cluster: DrainbridgeCluster;
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

  async function covered(operation: Operation, args: string[], settings = {}): Promise<Set<string>> {
    const mark = cluster.sim.requestLog.mark();
    const result = await runCli([...args, '--kubeconfig', cluster.kubeconfigPath]);
    assert.ok([0, 3].includes(result.code), `${args.join(' ')}: ${result.code}\n${result.stderr}`);
    const listed = new Set(requiredAccess(operation, { namespace: 'drainbridge', ...settings }).map(describeAccess));
    const used = callsSince(mark);
    // An access asked about for every namespace (a ClusterRole's reach) covers the call in any one of them.
    const isListed = (call: string) => listed.has(call) || listed.has(call.replace(/ in [a-z0-9-]+$/, ''));
    assert.deepEqual(
      [...used].filter((call) => !isListed(call)),
      [],
      `${operation} calls beyond its preflight list`,
    );
    return used;
  }

  it('plan, evacuate, abort and restore, run for real as the ServiceAccount', async () => {
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
  });

  it('repair, run for real on a damaged ledger', async () => {
    cluster.sim.store.mutate({ group: '', resource: 'nodes' }, { name: 'node-2' }, (node) => {
      node.metadata.annotations = { ...node.metadata.annotations, [LEDGER_ANNOTATION]: '{"holds": 1}' };
      return node;
    });
    const repair = await covered('repair', ['repair', 'node-2', '--yes']);
    for (const call of ['get nodes', 'patch nodes', 'list evacuations.drainbridge.io']) {
      assert.ok([...repair].includes(call), `repair made ${call}`);
    }
  });
});
