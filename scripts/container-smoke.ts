/**
 * Runs the container image's content as the container would, without a container engine: the bundle
 * (dist/drainbridge.mjs and its chunks, `npm run bundle`) copied alone into an empty directory, started
 * from there (cwd and HOME that directory, nothing else on disk beside it) against the simulator:
 *
 *  - `node drainbridge.mjs run …` becomes ready, turns a kubectl cordon into an evacuation, stops on SIGTERM
 *    with exit 0;
 *  - `node <the forwarder Deployment's Node flags> drainbridge.mjs forwarder …` leads, becomes ready, stops
 *    on SIGTERM with exit 0;
 *
 * and neither wrote a file nor printed a warning of Node's (a deprecated API reached from the bundle).
 *
 *   npm run bundle && node scripts/container-smoke.ts
 */
import { cpSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  DrainbridgeProcess,
  forwarderNodeFlags,
  spreadScenario,
  startTestCluster,
  type TestCluster,
} from '../test/forwarder/harness.ts';
import { waitUntil } from '../test/support/wait.ts';

const image = mkdtempSync(join(tmpdir(), 'drainbridge-image-'));
cpSync('dist/drainbridge.mjs', join(image, 'drainbridge.mjs'));
cpSync('dist/chunks', join(image, 'chunks'), { recursive: true });
cpSync('dist/node_modules', join(image, 'node_modules'), { recursive: true });
const content = (): string => readdirSync(image, { recursive: true }).map(String).sort().join('\n');
const before = content();
const env = { PATH: '/usr/bin:/bin', HOME: image, NODE_ENV: 'production' };

function start(args: string[], extraEnv: Record<string, string>, nodeFlags: string[] = []): DrainbridgeProcess {
  return new DrainbridgeProcess(
    args,
    { ...env, ...extraEnv },
    { entry: join(image, 'drainbridge.mjs'), nodeFlags, cwd: image },
  );
}

async function stops(child: DrainbridgeProcess, what: string): Promise<void> {
  child.kill('SIGTERM');
  const exit = await child.exited;
  if (exit.code !== 0) throw new Error(`${what}: exit ${JSON.stringify(exit)} after SIGTERM`);
  // A warning of Node's own (a deprecated API reached from the bundle) lands in every pod's log.
  const warnings = child.output.filter((line) => /\bWarning\b|\(node:\d+\)/.test(line) && !line.startsWith('{'));
  if (warnings.length > 0) throw new Error(`${what} printed Node warnings:\n${warnings.join('\n')}`);
}

async function runEvacuates(cluster: TestCluster): Promise<void> {
  const run = start(
    [
      'run',
      '--kubeconfig',
      await cluster.kubeconfigFor('drainbridge-run'),
      '--cordon-evacuates',
      'all',
      '--metrics-address',
      '127.0.0.1:0',
    ],
    {},
  );
  try {
    await run.waitForLog('leader election: this replica leads', {}, 60_000);
    const ops = await run.opsUrl();
    await waitUntil('/readyz answers 200', async () => (await fetch(`${ops}/readyz`)).status === 200);
    if ((await cluster.kubectl.run(['cordon', 'node-2'])).code !== 0) throw new Error('kubectl cordon failed');
    await waitUntil(
      'node-2 evacuated',
      async () => (await cluster.admin.listEvacuations()).some((r) => r.status?.phase === 'NodeDrained'),
      60_000,
      { context: () => run.output.slice(-20).join('\n') },
    );
    await stops(run, 'drainbridge run');
  } finally {
    run.kill('SIGKILL');
  }
}

async function forwarderRuns(cluster: TestCluster): Promise<void> {
  const forwarder = start(
    [
      'forwarder',
      '--kubeconfig',
      await cluster.kubeconfigFor('drainbridge-forwarder'),
      '--metrics-address',
      '127.0.0.1:0',
    ],
    { AWS_REGION: 'eu-west-1', AWS_ACCESS_KEY_ID: 'AKIDSMOKE', AWS_SECRET_ACCESS_KEY: 'smoke' },
    forwarderNodeFlags(),
  );
  try {
    await forwarder.waitForLog('leader election: this replica leads', {}, 60_000);
    const ops = await forwarder.opsUrl();
    await waitUntil('/readyz answers 200', async () => (await fetch(`${ops}/readyz`)).status === 200);
    await stops(forwarder, 'drainbridge forwarder');
  } finally {
    forwarder.kill('SIGKILL');
  }
}

const cluster = await startTestCluster(spreadScenario(3, { replicas: 3 }));
try {
  await runEvacuates(cluster);
  await forwarderRuns(cluster);
  if (content() !== before) throw new Error(`the processes wrote files beside the bundle:\n${content()}`);
  console.log(
    `container smoke: the bundle alone ran \`drainbridge run\` (evacuated a cordoned node) and \`drainbridge forwarder\` (${forwarderNodeFlags().join(' ')}), both stopped cleanly, no file written`,
  );
} catch (error) {
  console.error(String(error));
  process.exitCode = 1;
} finally {
  await cluster.stop();
}
