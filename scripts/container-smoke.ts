/**
 * Runs the container image's content as the container would, without a container engine: the single
 * bundle (dist/drainbridge.mjs, `npm run bundle`) copied alone into an empty directory, started with
 * `node drainbridge.mjs run …` from there (cwd and HOME that directory, nothing else on disk beside it),
 * against the simulator. Passes when it becomes ready, turns a kubectl cordon into an evacuation, stops on
 * SIGTERM with exit 0, and has written no file.
 *
 *   npm run bundle && node scripts/container-smoke.ts
 */
import { spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spreadScenario, startTestCluster, waitUntil } from '../test/forwarder/harness.ts';

const image = mkdtempSync(join(tmpdir(), 'drainbridge-image-'));
copyFileSync('dist/drainbridge.mjs', join(image, 'drainbridge.mjs'));
const cluster = await startTestCluster(spreadScenario(3, { replicas: 3 }));
const kubeconfig = await cluster.kubeconfigFor('drainbridge-run');
const output: string[] = [];
const child = spawn(
  process.execPath,
  [
    'drainbridge.mjs',
    'run',
    '--kubeconfig',
    kubeconfig,
    '--cordon-evacuates',
    'all',
    '--metrics-address',
    '127.0.0.1:0',
  ],
  {
    cwd: image,
    env: { PATH: '/usr/bin:/bin', HOME: image, NODE_ENV: 'production', DRAINBRIDGE_DRAIN_IGNORE_DAEMONSETS: 'true' },
    stdio: ['ignore', 'pipe', 'pipe'],
  },
);
child.stdout.on('data', (chunk: Buffer) => output.push(...chunk.toString().split('\n').filter(Boolean)));
child.stderr.on('data', (chunk: Buffer) => output.push(...chunk.toString().split('\n').filter(Boolean)));
const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
const logged = (message: string) => output.some((line) => line.includes(`"message":"${message}"`));
try {
  await waitUntil(
    'the bundle leads',
    () => logged('leader election: this replica leads'),
    60_000,
    () => output.join('\n'),
  );
  const ops = JSON.parse(output.find((line) => line.includes('"forwarder started"')) ?? '{}').ops as string;
  await waitUntil('/readyz answers 200', async () => (await fetch(`${ops}/readyz`)).status === 200);
  if ((await cluster.kubectl.run(['cordon', 'node-2'])).code !== 0) throw new Error('kubectl cordon failed');
  await waitUntil(
    'node-2 evacuated',
    async () => (await cluster.admin.listEvacuations()).some((r) => r.status?.phase === 'NodeDrained'),
    60_000,
    () => output.slice(-20).join('\n'),
  );
  child.kill('SIGTERM');
  const code = await exited;
  if (code !== 0) throw new Error(`exit ${code} after SIGTERM`);
  const files = readdirSync(image);
  if (files.join() !== 'drainbridge.mjs')
    throw new Error(`the process wrote files beside the bundle: ${files.join(', ')}`);
  console.log(
    'container smoke: the bundle alone ran `drainbridge run`, evacuated a cordoned node, stopped cleanly, wrote no file',
  );
} catch (error) {
  child.kill('SIGKILL');
  console.error(String(error));
  process.exitCode = 1;
} finally {
  await cluster.stop();
}
