/**
 * docs/cli.md's way to a kubeconfig for drainbridge's ServiceAccount ("sa-kubeconfig"), run with the real
 * kubectl against the simulator: `kubectl create token` (a TokenRequest, which kubectl sends as protobuf),
 * the kubeconfig assembled with `kubectl config`, `kubectl auth whoami` (SelfSubjectReview, protobuf too),
 * and `kubectl create namespace|serviceaccount`. Then drainbridge itself runs with that kubeconfig.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { type DrainbridgeCluster, startDrainbridgeCluster } from '../../sim/drainbridge.ts';
import { findKubectl, Kubectl } from './kubectl-runner.ts';

const binary = findKubectl();
const BIN = new URL('../../bin/drainbridge.js', import.meta.url).pathname;
// Asynchronous: the simulator answers from this process's event loop.
const run = promisify(execFile);
const skip = binary ? false : 'kubectl not found on this machine (the fidelity suite needs /usr/bin/kubectl)';

if (!binary && process.env.CI === 'true') {
  it('kubectl is present in CI', () => assert.fail('kubectl not found and CI=true: the fidelity suite must run in CI'));
}

describe('a kubeconfig for the drainbridge ServiceAccount, made with kubectl', { skip }, () => {
  let cluster: DrainbridgeCluster;
  let admin: Kubectl;
  const dir = mkdtempSync(join(tmpdir(), 'drainbridge-sa-'));
  const saKubeconfig = join(dir, 'sa-kubeconfig');

  const ok = async (kubectl: Kubectl, args: string[]): Promise<string> => {
    const result = await kubectl.run(args);
    assert.equal(result.code, 0, `kubectl ${args.join(' ')} failed:\n${result.stderr}`);
    return result.stdout;
  };

  before(async () => {
    cluster = await startDrainbridgeCluster({ scenario: 'small' });
    admin = new Kubectl(binary as string, cluster.sim.kubeconfig());
  });
  after(async () => {
    admin?.close();
    await cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('kubectl create token issues a token for the lifetime asked, and refuses one under 10 minutes', async () => {
    const mark = cluster.sim.requestLog.mark();
    const created = JSON.parse(
      await ok(admin, ['create', 'token', 'drainbridge', '-n', 'drainbridge', '--duration=8h', '-o', 'json']),
    ) as { spec: { expirationSeconds: number }; status: { token: string } };
    assert.equal(created.spec.expirationSeconds, 8 * 3600, 'the protobuf body was read (--duration)');
    assert.ok(created.status.token.length > 20);
    const posted = cluster.sim.requestLog.all({ since: mark, resource: 'serviceaccounts' });
    assert.deepEqual(
      posted.map((r) => [r.method, r.subresource, r.status]),
      [['POST', 'token', 201]],
    );
    const short = await admin.run(['create', 'token', 'drainbridge', '-n', 'drainbridge', '--duration=1m']);
    assert.notEqual(short.code, 0);
    assert.match(short.stderr, /may not specify a duration less than 10 minutes/);
    const bound = await admin.run([
      'create',
      'token',
      'drainbridge',
      '-n',
      'drainbridge',
      '--bound-object-kind=Pod',
      '--bound-object-name=nosuch',
    ]);
    assert.notEqual(bound.code, 0);
    assert.match(bound.stderr, /pods "nosuch" not found/);
  });

  it('the docs/cli.md recipe builds a kubeconfig that kubectl auth whoami and drainbridge check accept', async () => {
    const server = await ok(admin, ['config', 'view', '--minify', '-o', 'jsonpath={.clusters[0].cluster.server}']);
    const caData = await ok(admin, [
      'config',
      'view',
      '--minify',
      '--raw',
      '-o',
      'jsonpath={.clusters[0].cluster.certificate-authority-data}',
    ]);
    const ca = join(dir, 'ca.crt');
    writeFileSync(ca, Buffer.from(caData, 'base64'));
    const token = (await ok(admin, ['create', 'token', 'drainbridge', '-n', 'drainbridge', '--duration=8h'])).trim();
    const sa = ['--kubeconfig', saKubeconfig];
    await ok(admin, [
      ...sa,
      'config',
      'set-cluster',
      'cluster',
      `--server=${server}`,
      `--certificate-authority=${ca}`,
      '--embed-certs',
    ]);
    await ok(admin, [...sa, 'config', 'set-credentials', 'drainbridge', `--token=${token}`]);
    await ok(admin, [...sa, 'config', 'set-context', 'drainbridge', '--cluster=cluster', '--user=drainbridge']);
    await ok(admin, [...sa, 'config', 'use-context', 'drainbridge']);
    const whoami = JSON.parse(await ok(admin, [...sa, 'auth', 'whoami', '-o', 'json'])) as {
      kind: string;
      status: { userInfo: { username: string; groups: string[] } };
    };
    assert.equal(whoami.kind, 'SelfSubjectReview');
    assert.equal(whoami.status.userInfo.username, 'system:serviceaccount:drainbridge:drainbridge');
    assert.ok(whoami.status.userInfo.groups.includes('system:serviceaccounts:drainbridge'));
    const table = await ok(admin, [...sa, 'auth', 'whoami']);
    assert.match(table, /Username\s+system:serviceaccount:drainbridge:drainbridge/);
    const asAdmin = await ok(admin, ['auth', 'whoami']);
    assert.match(asAdmin, /Username\s+kubernetes-admin/);
    const check = await run(process.execPath, [BIN, 'check', '--kubeconfig', saKubeconfig]);
    assert.match(check.stdout, /\(as system:serviceaccount:drainbridge:drainbridge\)/);
    assert.match(check.stdout, /^ready: /m);
  });

  it('kubectl create namespace and create serviceaccount (protobuf bodies) create them', async () => {
    await ok(admin, ['create', 'namespace', 'ops']);
    await ok(admin, ['create', 'serviceaccount', 'robot', '-n', 'ops']);
    const account = JSON.parse(await ok(admin, ['get', 'serviceaccount', 'robot', '-n', 'ops', '-o', 'json'])) as {
      metadata: { namespace: string; uid: string };
    };
    assert.equal(account.metadata.namespace, 'ops');
    assert.ok(account.metadata.uid);
  });
});
