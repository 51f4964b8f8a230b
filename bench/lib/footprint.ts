/**
 * The footprint section: what `serverless package` builds for Lambda, and how fast it loads.
 *
 * - every function's zip: size, whether its code is minified, whether it carries a source map, whether
 *   the AWS SDK v3 is bundled or left to the nodejs24.x runtime;
 * - cold import: a fresh `node` process per sample, from spawn until the handler module has loaded
 *   (`require`, as the runtime's bootstrap does), median of 10 — beside an empty module loaded the same
 *   way (the process start itself). An SDK left to the runtime resolves from the project's node_modules,
 *   as it would from the runtime's /var/runtime/node_modules;
 * - the CLI's start: `drainbridge --help`, median of 10, beside the empty module.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { renderColumns } from './columns.ts';
import type { SectionReport } from './section.ts';
import { spreadOf } from './stats.ts';
import type { TargetRow } from './targets.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const SAMPLES = 10;
const MB = 1024 * 1024;

export interface FunctionFootprint {
  readonly name: string;
  readonly zipBytes: number;
  /** The handler file's size unzipped. */
  readonly codeBytes: number;
  readonly minified: boolean;
  readonly sourceMap: boolean;
  readonly sdk: 'bundled' | 'runtime' | 'unused';
  readonly importMs: number | undefined;
}

function packageFunctions(outDir: string): void {
  const result = spawnSync(join(ROOT, 'node_modules/.bin/serverless'), ['package', '--package', outDir], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, SLS_TELEMETRY_DISABLED: '1', SLS_NOTIFICATIONS_MODE: 'off' },
  });
  if (result.status !== 0) {
    throw new Error(`serverless package failed (${result.status}): ${(result.stderr || result.stdout).slice(-2000)}`);
  }
}

/** Wall time of a fresh `node` process loading `file`, in ms (process spawn to exit). */
function loadOnce(file: string): number {
  const started = performance.now();
  const result = spawnSync(process.execPath, ['-e', `require(${JSON.stringify(file)})`], {
    env: { PATH: process.env.PATH, NODE_PATH: join(ROOT, 'node_modules') },
    encoding: 'utf8',
  });
  const elapsed = performance.now() - started;
  if (result.status !== 0) throw new Error(`loading ${file} failed: ${result.stderr.slice(-1000)}`);
  return elapsed;
}

/** Median of `SAMPLES` runs of `once`. */
function medianMs(once: () => number): number {
  return spreadOf(Array.from({ length: SAMPLES }, once))?.median ?? Number.NaN;
}

/** Minified code has long lines: esbuild's minifier writes a bundle as a handful of them. */
function looksMinified(code: string): boolean {
  const lines = code.split('\n').length;
  return code.length / lines > 500;
}

/** Whether the AWS SDK's clients are in the bundle (their wire-protocol target names are) or required from the runtime. */
function sdkUse(code: string): FunctionFootprint['sdk'] {
  if (/AWSEvents\.PutEvents|"AWSEvents"|AWSStepFunctions|AmazonSSM|secretsmanager\.GetSecretValue/.test(code))
    return 'bundled';
  return /require\("@aws-sdk\/client-/.test(code) ? 'runtime' : 'unused';
}

function handlerFile(dir: string): string | undefined {
  const functions = join(dir, 'functions');
  const found = readdirSync(functions).find((file) => /\.(c?js|mjs)$/.test(file));
  return found ? join(functions, found) : undefined;
}

function inspectZip(zip: string, work: string): FunctionFootprint {
  const name = basename(zip, '.zip');
  const dir = join(work, name);
  mkdirSync(dir, { recursive: true });
  execFileSync('unzip', ['-q', '-o', zip, '-d', dir]);
  const entries = execFileSync('unzip', ['-Z1', zip], { encoding: 'utf8' }).split('\n');
  const file = handlerFile(dir);
  const code = file ? readFileSync(file, 'utf8') : '';
  return {
    name,
    zipBytes: statSync(zip).size,
    codeBytes: code.length,
    minified: looksMinified(code),
    sourceMap: entries.some((entry) => entry.endsWith('.map')),
    sdk: sdkUse(code),
    importMs: file ? medianMs(() => loadOnce(file)) : undefined,
  };
}

function cliStartMs(): number {
  return medianMs(() => {
    const started = performance.now();
    const result = spawnSync(process.execPath, [join(ROOT, 'bin/drainbridge.js'), '--help'], { encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`drainbridge --help exited ${result.status}: ${result.stderr}`);
    return performance.now() - started;
  });
}

const mb = (bytes: number): string => `${(bytes / MB).toFixed(2)} MB`;
const ms = (value: number | undefined): string => (value === undefined ? '-' : `${Math.round(value)} ms`);

function targetRows(functions: readonly FunctionFootprint[], baselineMs: number, cliMs: number): TargetRow[] {
  const largest = [...functions].sort((a, b) => b.zipBytes - a.zipBytes)[0];
  const slowest = [...functions].sort((a, b) => (b.importMs ?? 0) - (a.importMs ?? 0))[0];
  const reference = `empty module ${ms(baselineMs)}`;
  return [
    {
      section: 'footprint',
      figure: `largest zip (${largest?.name ?? '-'})`,
      target: '≤ 2 MB',
      limit: 2,
      value: largest ? largest.zipBytes / MB : undefined,
      shown: largest ? mb(largest.zipBytes) : '-',
      reference: largest
        ? `minified ${largest.minified ? 'yes' : 'NO'}, source map ${largest.sourceMap ? 'in zip' : 'none'}, AWS SDK ${largest.sdk}`
        : '-',
    },
    {
      section: 'footprint',
      figure: `slowest cold import (${slowest?.name ?? '-'}), median of ${SAMPLES}`,
      target: '≤ 300 ms',
      limit: 300,
      value: slowest?.importMs,
      shown: ms(slowest?.importMs),
      reference,
    },
    {
      section: 'footprint',
      figure: `drainbridge --help, median of ${SAMPLES}`,
      target: '≤ 300 ms',
      limit: 300,
      value: cliMs,
      shown: ms(cliMs),
      reference,
    },
  ];
}

/** Packages the functions into a temporary directory and measures them; the directory is removed after. */
export async function runFootprintSection(): Promise<SectionReport> {
  const work = mkdtempSync(join(tmpdir(), 'drainbridge-footprint-'));
  try {
    console.log('footprint: serverless package (a fresh build), every function unzipped and loaded 10 times');
    const packaged = join(work, 'package');
    packageFunctions(packaged);
    const zips = readdirSync(packaged)
      .filter((file) => file.endsWith('.zip'))
      .map((file) => join(packaged, file));
    const functions = zips.map((zip) => inspectZip(zip, join(work, 'unzipped')));
    const empty = join(work, 'empty.cjs');
    writeFileSync(empty, '');
    const baselineMs = medianMs(() => loadOnce(empty));
    const cliMs = cliStartMs();
    const table = renderColumns([
      ['function', 'zip', 'code', 'minified', 'source map', 'AWS SDK', 'cold import (median)'],
      ...functions.map((f) => [
        f.name,
        mb(f.zipBytes),
        mb(f.codeBytes),
        f.minified ? 'yes' : 'no',
        f.sourceMap ? 'in zip' : 'none',
        f.sdk,
        ms(f.importMs),
      ]),
    ]);
    const text = `${table}\nempty module, loaded the same way: ${ms(baselineMs)}; drainbridge --help: ${ms(cliMs)}`;
    return {
      text,
      rows: targetRows(functions, baselineMs, cliMs),
      json: { functions, baselineMs, cliStartMs: cliMs },
      ok: functions.length > 0,
    };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
