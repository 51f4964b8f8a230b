/**
 * `npm run invoke -- FUNCTION[:SAMPLE] …`: the Lambda functions as `serverless invoke local` runs them
 * (bundled by serverless-esbuild, the deployed handler and middleware), offline, against a simulated
 * cluster with drainbridge installed — in order, on one cluster, so `resolveTarget admit pass` walks an
 * evacuation's first steps. Each function gets its sample from events/ (FUNCTION in kebab case, or
 * SAMPLE), with every date moved so the sample starts now: samples never go stale. Outcome events are
 * printed instead of sent (embedded mode has no bus). Prints the exact command it runs.
 *
 *   npm run invoke -- resolveTarget admit pass:pass-pods finishEvacuation
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDrainbridgeCluster } from '../sim/drainbridge.ts';

const ROOT = new URL('../', import.meta.url).pathname;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
/** Errors that are a step's normal answer, not a failure: polling and waiting for a slot. */
const EXPECTED = new Set(['NotYetDone', 'SlotUnavailable']);

/** `resolveTarget` → `resolve-target`. */
export function sampleName(functionName: string): string {
  return functionName.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

function dates(value: unknown, out: number[] = []): number[] {
  if (typeof value === 'string' && ISO.test(value)) out.push(Date.parse(value));
  else if (Array.isArray(value)) for (const item of value) dates(item, out);
  else if (value && typeof value === 'object') for (const item of Object.values(value)) dates(item, out);
  return out;
}

function shift(value: unknown, by: number): unknown {
  if (typeof value === 'string' && ISO.test(value)) {
    const moved = new Date(Date.parse(value) + by).toISOString();
    return value.includes('.') ? moved : moved.replace(/\.\d{3}Z$/, 'Z');
  }
  if (Array.isArray(value)) return value.map((item) => shift(item, by));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, shift(item, by)]));
  }
  return value;
}

/**
 * The sample with every ISO date moved by the same amount, so that its start (`startedAt`, else its
 * earliest date) is `now`: deadlines stay as far ahead of the start as the sample says. Pure.
 */
export function datesFromNow(sample: unknown, now: Date): unknown {
  const start = (sample as { startedAt?: unknown }).startedAt;
  const base = typeof start === 'string' && ISO.test(start) ? Date.parse(start) : Math.min(...dates(sample));
  return Number.isFinite(base) ? shift(sample, now.getTime() - base) : sample;
}

interface Outcome {
  readonly code: number;
  readonly errorType?: string;
}

function invoke(fn: string, eventPath: string, env: Record<string, string>): Promise<Outcome> {
  const args = [
    'invoke',
    'local',
    '-f',
    fn,
    '--path',
    eventPath,
    ...Object.entries(env).flatMap(([k, v]) => ['-e', `${k}=${v}`]),
  ];
  console.log(`\n$ npx serverless ${args.join(' ')}`);
  return new Promise((resolve) => {
    const child = spawn(join(ROOT, 'node_modules/.bin/serverless'), args, {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      process.stdout.write(chunk);
    });
    child.on('close', (code) => {
      const errorType = /"errorType":\s*"(\w+)"/.exec(out)?.[1];
      resolve({ code: code ?? 1, ...(errorType ? { errorType } : {}) });
    });
  });
}

/** Runs one `FUNCTION[:SAMPLE]` with its sample made current; false when it failed (not a normal answer). */
async function invokeOne(spec: string, dir: string, env: Record<string, string>): Promise<boolean> {
  const [fn = '', sample = sampleName(fn)] = spec.split(':');
  const event = datesFromNow(JSON.parse(readFileSync(join(ROOT, 'events', `${sample}.json`), 'utf8')), new Date());
  const path = join(dir, `${sample}.json`);
  writeFileSync(path, `${JSON.stringify(event, null, 2)}\n`);
  const outcome = await invoke(fn, path, env);
  const expected = outcome.errorType !== undefined && EXPECTED.has(outcome.errorType);
  const said = outcome.code === 0 ? 'ok' : (outcome.errorType ?? 'failed');
  console.log(`→ ${fn}: ${said}${expected ? ' (a normal answer: the step is retried)' : ''}`);
  return outcome.code === 0 || expected;
}

async function main(argv: readonly string[]): Promise<number> {
  if (argv.length === 0 || argv.includes('--help')) {
    console.log(
      'Usage: npm run invoke -- FUNCTION[:SAMPLE] … (e.g. resolveTarget admit pass:pass-pods finishEvacuation)',
    );
    return argv.length === 0 ? 2 : 0;
  }
  const cluster = await startDrainbridgeCluster({ scenario: 'demo', speed: 20 });
  const dir = mkdtempSync(join(tmpdir(), 'drainbridge-invoke-'));
  let failures = 0;
  try {
    console.log(
      `simulated cluster ${cluster.sim.url} (scenario demo, deploy/ applied); functions run as ServiceAccount drainbridge`,
    );
    // Embedded mode: a kubeconfig instead of the secret Lambda reads, and no event bus (outcomes are printed).
    const env = {
      DRAINBRIDGE_MODE: 'embedded',
      DRAINBRIDGE_KUBE_ACCESS: 'kubeconfig',
      KUBECONFIG: cluster.kubeconfigPath,
    };
    for (const spec of argv) if (!(await invokeOne(spec, dir, env))) failures++;
  } finally {
    await cluster.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  return failures === 0 ? 0 : 1;
}

if (import.meta.main) process.exitCode = await main(process.argv.slice(2));
