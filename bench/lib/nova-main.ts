/**
 * The Nova benchmark: on the real-Nova lab, N servers booted on one compute host are evacuated by
 * drainbridge's Nova branch and, on a fresh set of N, by `nova host-evacuate-live`; alternating order
 * per repetition. Prints a table and writes JSON to bench/results/.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { NOVA_PASS_WAIT } from '../../lib/branches/nova/index.ts';
import { renderColumns } from './columns.ts';
import {
  bootServers,
  connectLab,
  deleteBenchServers,
  labBusyReason,
  maxConcurrentLiveMigrations,
  type NovaLab,
} from './nova-lab.ts';
import { type NovaRun, runDrainbridgeNova, runNovaHostEvacuateLive, runReferencePoller } from './nova-runs.ts';
import { ratioOf, spreadOf } from './stats.ts';
import { renderTargets, type TargetRow } from './targets.ts';

interface NovaBenchOptions {
  readonly servers: number;
  readonly host: string;
  readonly repetitions: number;
  readonly maxConcurrent: number;
  /** The reference poller's interval (drainbridge's cadence), ms. */
  readonly pollMs: number;
  readonly runTimeoutMs: number;
  readonly outDir: string;
}

const USAGE = `Usage: npm run bench:nova -- [--servers 20] [--host compute-1] [--repetitions 2] [--max-concurrent N]
                             [--poll-ms 1000] [--run-timeout 900] [--out bench/results]
  --max-concurrent  drainbridge's maxConcurrentMigrations and the reference's slots (default: the lab's
                    max_concurrent_live_migrations, Nova's default 1)
  --poll-ms         the reference poller's interval: drainbridge's cadence (default 1000)
  Needs the real-Nova lab up and idle (test/e2e/openstack/README.md).`;

function intFlag(raw: string | undefined, flag: string, range: [number, number, number]): number {
  const [min, max, fallback] = range;
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (raw.trim() === '' || !Number.isInteger(value) || value < min || value > max) {
    throw new RangeError(`--${flag} must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

function parseNovaOptions(argv: readonly string[]): NovaBenchOptions {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      servers: { type: 'string' },
      host: { type: 'string' },
      repetitions: { type: 'string' },
      'max-concurrent': { type: 'string' },
      'poll-ms': { type: 'string' },
      'run-timeout': { type: 'string' },
      out: { type: 'string' },
    },
    strict: true,
    allowPositionals: false,
  });
  const host = values.host ?? 'compute-1';
  if (!/^[A-Za-z0-9._-]+$/.test(host)) throw new RangeError(`--host must be a Nova host name, got "${host}"`);
  return {
    servers: intFlag(values.servers, 'servers', [1, 40, 20]),
    host,
    repetitions: intFlag(values.repetitions, 'repetitions', [1, 5, 2]),
    maxConcurrent: intFlag(values['max-concurrent'], 'max-concurrent', [1, 20, maxConcurrentLiveMigrations()]),
    pollMs: intFlag(values['poll-ms'], 'poll-ms', [100, 10_000, NOVA_PASS_WAIT.pollMs]),
    runTimeoutMs: intFlag(values['run-timeout'], 'run-timeout', [30, 3600, 900]) * 1000,
    outDir: values.out ?? 'bench/results',
  };
}

/** The lab was in use by someone else before a run: the benchmark stops rather than disturb them. */
class LabBusy extends Error {
  override readonly name = 'LabBusy';
}

async function measure(
  lab: NovaLab,
  options: NovaBenchOptions,
  tool: NovaRun['tool'],
  repetition: number,
): Promise<NovaRun> {
  await deleteBenchServers(lab);
  const busyBefore = await labBusyReason(lab);
  if (busyBefore) throw new LabBusy(busyBefore);
  const ids = await bootServers(lab, options.host, options.servers, `${repetition + 1}`);
  const settings = { host: options.host, repetition, timeoutMs: options.runTimeoutMs };
  const run =
    tool === 'drainbridge'
      ? await runDrainbridgeNova(lab, ids, { ...settings, maxConcurrent: options.maxConcurrent })
      : tool === 'reference'
        ? await runReferencePoller(lab, ids, {
            ...settings,
            concurrency: options.maxConcurrent,
            pollMs: options.pollMs,
          })
        : await runNovaHostEvacuateLive(lab, ids, settings);
  // Someone else's servers or service switches during the run make its figures meaningless.
  const busyAfter = await labBusyReason(lab);
  if (!busyAfter) return run;
  return { ...run, ok: false, failure: `the lab was used by someone else during the run (${busyAfter})` };
}

const TOOLS: readonly NovaRun['tool'][] = ['reference', 'nova host-evacuate-live', 'drainbridge'];

function medianSeconds(runs: readonly NovaRun[], tool: NovaRun['tool']): number | undefined {
  return spreadOf(runs.filter((run) => run.tool === tool && run.ok).map((run) => run.wallMs / 1000))?.median;
}

/** The serial floor: the median over the reference runs of their migration times laid end to end. */
function floorSeconds(runs: readonly NovaRun[]): number | undefined {
  const floors = runs.filter((run) => run.tool === 'reference' && run.ok).map((run) => Number(run.detail.floorSeconds));
  return spreadOf(floors)?.median;
}

function summaryRows(runs: readonly NovaRun[]): string[][] {
  const cell = (value: number | undefined): string => (value === undefined ? '-' : value.toFixed(1));
  const rows = [['tool', 'ok', 'median s', 'min s', 'max s']];
  for (const tool of TOOLS) {
    const mine = runs.filter((run) => run.tool === tool);
    const spread = spreadOf(mine.filter((run) => run.ok).map((run) => run.wallMs / 1000));
    rows.push([
      tool,
      `${mine.filter((r) => r.ok).length}/${mine.length}`,
      cell(spread?.median),
      cell(spread?.min),
      cell(spread?.max),
    ]);
  }
  return rows;
}

function targetRows(runs: readonly NovaRun[], options: NovaBenchOptions): TargetRow[] {
  const floor = floorSeconds(runs);
  const drainbridge = medianSeconds(runs, 'drainbridge');
  const nova = medianSeconds(runs, 'nova host-evacuate-live');
  const ratio = ratioOf(drainbridge, floor);
  return [
    {
      section: 'nova',
      figure: `${options.servers} servers ACTIVE elsewhere / serial floor`,
      target: '≤ 1.10×',
      limit: 1.1,
      value: ratio,
      shown: `${ratio === undefined ? 'n/a' : `${ratio.toFixed(2)}×`} (${drainbridge?.toFixed(1) ?? '-'} s)`,
      reference: `floor ${floor?.toFixed(1) ?? '-'} s at ${options.maxConcurrent} at a time; host-evacuate-live + polling ${nova?.toFixed(1) ?? '-'} s`,
    },
  ];
}

function runLine(run: NovaRun): string {
  const detail = Object.entries(run.detail)
    .map(([key, value]) => `${key} ${value}`)
    .join(', ');
  const outcome = `${run.ok ? 'all moved' : 'FAILED'} in ${(run.wallMs / 1000).toFixed(1)} s`;
  return `#${run.repetition + 1} ${run.tool.padEnd(24)} ${outcome}${detail ? ` (${detail})` : ''}${run.failure ? `: ${run.failure}` : ''}`;
}

/** Runs the Nova benchmark; resolves to the exit code (0 all ok, 1 a run failed, 2 usage or no lab). */
export async function main(argv: readonly string[]): Promise<number> {
  let options: NovaBenchOptions;
  try {
    options = parseNovaOptions(argv);
  } catch (error) {
    console.error(`bench:nova: ${error instanceof Error ? error.message : String(error)}\n${USAGE}`);
    return 2;
  }
  let lab: NovaLab;
  try {
    lab = await connectLab();
  } catch (error) {
    console.error(
      `bench:nova: the real-Nova lab is not reachable: ${error instanceof Error ? error.message : String(error)}`,
    );
    return 2;
  }
  const busy = await labBusyReason(lab);
  if (busy) {
    console.error(
      `bench:nova: the lab is in use (${busy}); run it when the e2e suite and others are done with the lab`,
    );
    return 2;
  }
  const startedAt = new Date().toISOString();
  const host = { cpus: availableParallelism(), loadavg: loadavg(), node: process.version };
  console.log(
    `drainbridge Nova branch vs nova host-evacuate-live — ${options.servers} servers on ${options.host}, ` +
      `${options.repetitions} repetition(s), drainbridge maxConcurrentMigrations ${options.maxConcurrent}; ` +
      `${host.cpus} CPUs, load ${host.loadavg.map((l) => l.toFixed(1)).join(' ')}`,
  );
  const runs: NovaRun[] = [];
  try {
    for (let repetition = 0; repetition < options.repetitions; repetition++) {
      const order: NovaRun['tool'][] =
        repetition % 2 === 0
          ? ['reference', 'drainbridge', 'nova host-evacuate-live']
          : ['nova host-evacuate-live', 'drainbridge', 'reference'];
      for (const tool of order) {
        const run = await measure(lab, options, tool, repetition);
        runs.push(run);
        console.log(runLine(run));
      }
    }
  } catch (error) {
    if (!(error instanceof LabBusy)) throw error;
    console.error(`bench:nova: stopped: the lab is in use (${error.message}); the runs so far are reported`);
  } finally {
    await deleteBenchServers(lab);
  }
  const rows = summaryRows(runs);
  const targets = targetRows(runs, options);
  const versusNova = ratioOf(medianSeconds(runs, 'drainbridge'), medianSeconds(runs, 'nova host-evacuate-live'));
  console.log(
    `\n${renderColumns(rows)}\nserial floor (the reference's migration times end to end, median): ${floorSeconds(runs)?.toFixed(1) ?? '-'} s` +
      `\nratio drainbridge / nova host-evacuate-live (median wall time): ${versusNova === undefined ? 'n/a' : `${versusNova.toFixed(2)}×`}` +
      `\n\n${renderTargets(targets)}`,
  );
  const dir = resolve(options.outDir);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `nova-${new Date().toISOString().replaceAll(':', '-')}.json`);
  writeFileSync(
    file,
    `${JSON.stringify({ startedAt, finishedAt: new Date().toISOString(), host, options, runs, targets }, null, 2)}\n`,
  );
  console.log(`results: ${file}`);
  return runs.every((run) => run.ok) ? 0 : 1;
}
