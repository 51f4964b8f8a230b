/**
 * `npm run soak -- --nova` without the lab: refused at once, naming how to bring it up, before any cluster
 * starts; the lab's lock shared with the e2e suite; and the clouds.yaml the replicas get reads back as the
 * lab's own credentials. (The soak against the lab itself is `npm run soak -- --nova`, docs/safety.md.)
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { loadOpenStackCredentials } from '../../lib/clients/openstack/credentials.ts';
import { NovaSoak } from '../../soak/nova.ts';
import { drainbridgeNovaEnv, lockLab, NovaLabUnavailable, readOpenrc, unlockLab } from '../../soak/nova-lab.ts';
import { parseSoakOptions } from '../../soak/options.ts';

const MAIN = new URL('../../soak/main.ts', import.meta.url).pathname;

const OPENRC = (authUrl: string) =>
  [
    `export OS_AUTH_URL=${authUrl}`,
    'export OS_USERNAME=admin',
    'export OS_PASSWORD=not-a-real-password',
    'export OS_PROJECT_NAME=admin',
    'export OS_USER_DOMAIN_NAME=Default',
    'export OS_PROJECT_DOMAIN_NAME=Default',
    'export OS_REGION_NAME=RegionOne',
    'export OS_INTERFACE=public',
  ].join('\n');

/** A port nothing listens on (taken and released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('soak --nova: the lab', () => {
  it('--nova is off unless asked', () => {
    assert.equal(parseSoakOptions([]).nova, false);
    assert.equal(parseSoakOptions(['--nova']).nova, true);
  });

  it('without the lab, npm run soak -- --nova exits 2 at once naming lab.sh up, before any cluster starts', () => {
    const lab = join(mkdtempSync(join(tmpdir(), 'soak-nolab-')), 'novalab');
    const started = Date.now();
    const run = spawnSync(process.execPath, [MAIN, '--nova', '--minutes', '1'], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', NOVALAB: lab },
      encoding: 'utf8',
      timeout: 30_000,
    });
    assert.equal(run.status, 2, run.stderr);
    assert.match(run.stderr, /--nova needs the real-Nova lab, and .*novalab\/openrc is missing/);
    assert.match(run.stderr, /test\/e2e\/openstack\/lab\/lab\.sh up/);
    assert.doesNotMatch(run.stdout, /starting the cluster/);
    assert.ok(Date.now() - started < 15_000, 'refused at once');
  });

  it('a lab whose Keystone does not answer is refused in seconds, naming it and lab.sh up', async () => {
    const lab = mkdtempSync(join(tmpdir(), 'soak-downlab-'));
    writeFileSync(join(lab, 'openrc'), OPENRC(`http://127.0.0.1:${await closedPort()}/v3`));
    const started = Date.now();
    await assert.rejects(NovaSoak.open({ 'compute-1': 'node-04' }, lab), (error: Error) => {
      assert.ok(error instanceof NovaLabUnavailable);
      assert.match(error.message, /its Keystone at http:\/\/127\.0\.0\.1:\d+\/v3 does not answer \(ECONNREFUSED\)/);
      assert.match(error.message, /lab\.sh up/);
      assert.doesNotMatch(error.message, /not-a-real-password/);
      return true;
    });
    assert.ok(Date.now() - started < 5_000, 'refused at once, not after the clients retried');
  });

  it("the lab's lock is the e2e suite's: a second holder is refused until the first lets go", async () => {
    const lab = join(mkdtempSync(join(tmpdir(), 'soak-lock-')), 'novalab');
    const first = await lockLab(lab);
    // What test/e2e/openstack/run.sh tries (flock -n on <lab>.lock) fails while the soak holds it.
    assert.equal(spawnSync('flock', ['-n', `${lab}.lock`, 'true']).status, 1);
    await assert.rejects(lockLab(lab), /another run holds the Nova lab .*novalab\.lock/);
    unlockLab(first);
    await new Promise((resolve) => first.once('exit', resolve));
    unlockLab(await lockLab(lab));
  });

  it('the clouds.yaml the replicas get (0600, OS_CLOUD) reads back as the openrc credentials', async () => {
    const lab = mkdtempSync(join(tmpdir(), 'soak-clouds-'));
    writeFileSync(join(lab, 'openrc'), OPENRC('http://127.0.0.1:5000/v3'));
    const openrc = readOpenrc(lab);
    const env = drainbridgeNovaEnv(openrc, lab);
    assert.equal(env.DRAINBRIDGE_NOVA, 'true');
    assert.equal(env.DRAINBRIDGE_NOVA_NODE_SELECTOR, 'openstack-compute-node=enabled');
    assert.equal(statSync(join(lab, 'clouds.yaml')).mode & 0o777, 0o600);
    const fromCloud = await loadOpenStackCredentials({ env, resolveSecretRef: null });
    const fromOpenrc = await loadOpenStackCredentials({ env: openrc, resolveSecretRef: null });
    assert.deepEqual(fromCloud, fromOpenrc);
  });
});
