/** `drainbridge sim` end to end: starts, writes a working admin kubeconfig, stops cleanly on SIGTERM. */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'node:test';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { waitUntil } from '../support/wait.ts';

it('drainbridge sim --scenario small serves the scenario until SIGTERM', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'drainbridge-sim-cli-'));
  const kubeconfigPath = join(dir, 'admin.kubeconfig');
  const child = spawn(
    process.execPath,
    ['bin/drainbridge.js', 'sim', '--scenario', 'small', '--speed', '20', '--kubeconfig-out', kubeconfigPath],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  try {
    await waitUntil('the simulator to start', () => output.includes('admin kubeconfig written'), 15_000);
    assert.match(output, /serving https:\/\/127\.0\.0\.1:\d+ \(speed 20\)/);
    assert.equal(statSync(kubeconfigPath).mode & 0o777, 0o600);
    assert.doesNotMatch(output, /token/i, 'the token is never printed');
    const config = new KubeConfig();
    config.loadFromString(readFileSync(kubeconfigPath, 'utf8'));
    const nodes = await config.makeApiClient(CoreV1Api).listNode();
    assert.deepEqual(
      nodes.items.map((n) => n.metadata?.name),
      ['node-1', 'node-2', 'node-3'],
    );
    child.kill('SIGTERM');
    assert.equal(await exited, 0);
    assert.match(output, /SIGTERM, stopping/);
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
});
