/**
 * `drainbridge run` checks its RBAC before it takes part in leader election (issue 20): as the README's
 * ServiceAccount drainbridge/drainbridge — bound to the workflow's role but not the forwarder's — it may
 * not watch NodeMaintenances, so it runs without the NodeMaintenance source, names the missing call and
 * the command granting it before it leads, never calls the NodeMaintenance API (no 403 loop), and /readyz
 * says the same (503). `drainbridge check --for run` reports it with the same words, exit 4. Credentials
 * without the calls `run` needs refuse the start: exit 4, each call named, no Lease touched.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type DrainbridgeCluster, startDrainbridgeCluster } from '../../sim/drainbridge.ts';
import { startSimulator } from '../../sim/simulator.ts';
import { runCli, startCli } from '../cli/run-cli.ts';

const SA = 'system:serviceaccount:drainbridge:drainbridge';
const MISSING_WATCH = `${SA} may not watch nodemaintenances.nodemaintenance.medik8s.io`;
const GRANT =
  'kubectl create clusterrolebinding drainbridge-forwarder-drainbridge --clusterrole=drainbridge-forwarder --serviceaccount=drainbridge:drainbridge';

describe('drainbridge run checks its RBAC before leading', () => {
  let cluster: DrainbridgeCluster;
  const dir = mkdtempSync(join(tmpdir(), 'drainbridge-run-preflight-'));
  before(async () => {
    cluster = await startDrainbridgeCluster({ scenario: 'small', speed: 20 });
  });
  after(async () => {
    await cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('as the README ServiceAccount: runs without NodeMaintenances, says why before leading, /readyz names it', async () => {
    const mark = cluster.sim.requestLog.mark();
    const run = startCli(['run', '--kubeconfig', cluster.kubeconfigPath, '--metrics-address', '127.0.0.1:0'], {
      DRAINBRIDGE_FORWARDER_LEASE_SECONDS: '3',
    });
    try {
      const log = await run.waitFor(/this replica leads/, 60_000);
      const warned = log.indexOf('running without a source');
      assert.ok(warned >= 0, log);
      assert.ok(warned < log.indexOf('this replica leads'), 'named before leading');
      assert.ok(log.includes(MISSING_WATCH), log);
      assert.ok(log.includes(GRANT), log);
      const ops = /"ops":"(http:\/\/[^"]+)"/.exec(log)?.[1];
      assert.ok(ops, log);
      const readyz = await fetch(`${ops}/readyz`);
      const body = (await readyz.json()) as { ready: boolean; reasons: string[] };
      assert.equal(readyz.status, 503);
      assert.ok(
        body.reasons.some((r) => r.includes(MISSING_WATCH) && r.includes(GRANT)),
        JSON.stringify(body),
      );
      const nodeMaintenanceCalls = cluster.sim.requestLog
        .all({ since: mark, user: SA })
        .filter((r) => r.resource === 'nodemaintenances');
      assert.deepEqual(nodeMaintenanceCalls, [], 'no NodeMaintenance call (and no 403 loop)');
    } finally {
      run.child.kill('SIGTERM');
      await run.exited;
    }
  });

  it('check --for run reports the same, exit 4', async () => {
    const result = await runCli(['check', '--for', 'run', '--kubeconfig', cluster.kubeconfigPath]);
    assert.equal(result.code, 4, result.stdout + result.stderr);
    assert.match(
      result.stdout,
      /MISSING\s+system:serviceaccount:drainbridge:drainbridge may not watch nodemaintenances/,
    );
    assert.ok(result.stdout.includes(GRANT), result.stdout);
    assert.match(result.stdout, /ok\s+the embedded workflow: all \d+ calls allowed/);
  });

  it('check --for with an unknown service: exit 2 naming the choices, before any call', async () => {
    const mark = cluster.sim.requestLog.mark();
    const result = await runCli(['check', '--for', 'runner', '--kubeconfig', cluster.kubeconfigPath]);
    assert.equal(result.code, 2);
    assert.match(result.stderr, /--for: must be one of run, forwarder, node-agent \(got 'runner'\)/);
    assert.deepEqual(cluster.sim.requestLog.all({ since: mark }), []);
  });

  it('check --for run with DRAINBRIDGE_NODE_MAINTENANCE=false: ready, exit 0', async () => {
    const result = await runCli(['check', '--for', 'run', '--kubeconfig', cluster.kubeconfigPath], {
      DRAINBRIDGE_NODE_MAINTENANCE: 'false',
    });
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.match(result.stdout, /^ready: drainbridge run can start/m);
  });

  it('credentials without the calls run needs: exit 4 before leader election, each call named, no Lease touched', async () => {
    const path = join(dir, 'jane');
    const token = cluster.sim.tokenForUser({ username: 'jane', groups: ['system:authenticated'] });
    writeFileSync(path, cluster.sim.kubeconfig(token), { mode: 0o600 });
    const mark = cluster.sim.requestLog.mark();
    const result = await runCli(['run', '--kubeconfig', path, '--metrics-address', '127.0.0.1:0']);
    assert.equal(result.code, 4, result.stderr);
    assert.match(result.stderr, /jane may not watch nodes/);
    assert.match(result.stderr, /jane may not update leases\.coordination\.k8s\.io in drainbridge/);
    assert.match(
      result.stderr,
      /kubectl create clusterrolebinding drainbridge-jane --clusterrole=drainbridge --user=jane/,
    );
    const leases = cluster.sim.requestLog.all({ since: mark, user: 'jane' }).filter((r) => r.resource === 'leases');
    assert.deepEqual(leases, [], 'no Lease call: refused before leader election');
    const forwarder = await runCli(['check', '--for', 'forwarder', '--kubeconfig', path]);
    assert.equal(forwarder.code, 4);
    assert.match(forwarder.stdout, /jane may not list nodes/);
  });
});

describe('drainbridge run on a cluster without drainbridge installed', () => {
  it('refuses to start, exit 4, naming the CRD and the one install command', async () => {
    const sim = await startSimulator({ scenario: 'small' });
    const dir = mkdtempSync(join(tmpdir(), 'drainbridge-run-preflight-'));
    try {
      const admin = join(dir, 'admin');
      writeFileSync(admin, sim.kubeconfig(), { mode: 0o600 });
      const mark = sim.requestLog.mark();
      const result = await runCli(['run', '--kubeconfig', admin, '--metrics-address', '127.0.0.1:0']);
      assert.equal(result.code, 4, result.stderr);
      assert.match(result.stderr, /CRD evacuations\.drainbridge\.io is not installed/);
      assert.match(result.stderr, /kubectl apply -k deploy\/base/);
      assert.deepEqual(
        sim.requestLog.writes({ since: mark }).filter((r) => r.resource === 'leases'),
        [],
      );
      const check = await runCli(['check', '--for', 'node-agent', '--kubeconfig', admin]);
      assert.equal(check.code, 4);
      assert.match(check.stdout, /MISSING\s+CRD evacuations\.drainbridge\.io is not installed/);
    } finally {
      await sim.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
