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
import { busySeconds } from './nova-busy.ts';
import {
  bootServers,
  connectLab,
  deleteBenchServers,
  labBusyReason,
  maxConcurrentLiveMigrations,
  type NovaLab,
} from './nova-lab.ts';
import { runDrainbridgeOnHosts, runHostEvacuateLiveOnHosts, runReferenceOnHosts } from './nova-multi.ts';
import { type NovaRun, runDrainbridgeNova, runNovaHostEvacuateLive, runReferencePoller } from './nova-runs.ts';
import { ratioOf, spreadOf } from './stats.ts';
import { renderTargets, type TargetRow } from './targets.ts';

interface NovaBenchOptions {
  /** Servers booted on each source host. */
  readonly servers: number;
  /** The source hosts: one (`--host`) or several evacuated together (`--hosts`). */
  readonly hosts: readonly string[];
  readonly repetitions: number;
  readonly maxConcurrent: number;
  /** The reference poller's interval (drainbridge's cadence), ms. */
  readonly pollMs: number;
  readonly runTimeoutMs: number;
  readonly outDir: string;
}

const USAGE = `Usage: npm run bench:nova -- [--servers 20] [--host compute-1 | --hosts compute-1,compute-2,compute-3]
                             [--repetitions 2] [--max-concurrent N] [--poll-ms 1000] [--run-timeout 900]
                             [--out bench/results]
  --servers         servers booted on each source host
  --hosts           several source hosts evacuated together (needs more nova-compute hosts than sources:
                    NCOMPUTE=6 test/e2e/openstack/lab/lab.sh up)
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
      hosts: { type: 'string' },
      repetitions: { type: 'string' },
      'max-concurrent': { type: 'string' },
      'poll-ms': { type: 'string' },
      'run-timeout': { type: 'string' },
      out: { type: 'string' },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.host !== undefined && values.hosts !== undefined) throw new RangeError('give --host or --hosts, not both');
  const hosts =
    values.hosts !== undefined ? values.hosts.split(',').map((h) => h.trim()) : [values.host ?? 'compute-1'];
  for (const host of hosts) {
    if (!/^[A-Za-z0-9._-]+$/.test(host)) throw new RangeError(`--host(s) must name Nova hosts, got "${host}"`);
  }
  if (new Set(hosts).size !== hosts.length) throw new RangeError(`--hosts names a host twice: ${hosts.join(',')}`);
  return {
    servers: intFlag(values.servers, 'servers', [1, 40, hosts.length > 1 ? 10 : 20]),
    hosts,
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

async function bootOnHosts(
  lab: NovaLab,
  options: NovaBenchOptions,
  repetition: number,
): Promise<Map<string, string[]>> {
  const byHost = new Map<string, string[]>();
  for (const host of options.hosts) {
    byHost.set(host, await bootServers(lab, host, options.servers, `${repetition + 1}-${host}`));
  }
  return byHost;
}

/** One measured run of one tool on fresh servers. */
interface Trial {
  readonly lab: NovaLab;
  readonly options: NovaBenchOptions;
  readonly tool: NovaRun['tool'];
  readonly byHost: Map<string, string[]>;
  readonly repetition: number;
}

function runOne({ lab, options, tool, byHost, repetition }: Trial): Promise<NovaRun> {
  const host = options.hosts[0] as string;
  const ids = byHost.get(host) ?? [];
  const settings = { host, repetition, timeoutMs: options.runTimeoutMs };
  if (tool === 'drainbridge')
    return runDrainbridgeNova(lab, ids, { ...settings, maxConcurrent: options.maxConcurrent });
  if (tool === 'reference') {
    return runReferencePoller(lab, ids, { ...settings, concurrency: options.maxConcurrent, pollMs: options.pollMs });
  }
  return runNovaHostEvacuateLive(lab, ids, settings);
}

function runSeveral({ lab, options, tool, byHost, repetition }: Trial): Promise<NovaRun> {
  const settings = {
    repetition,
    maxConcurrent: options.maxConcurrent,
    pollMs: options.pollMs,
    timeoutMs: options.runTimeoutMs,
  };
  if (tool === 'drainbridge') return runDrainbridgeOnHosts(lab, byHost, settings);
  if (tool === 'reference') return runReferenceOnHosts(lab, byHost, settings);
  return runHostEvacuateLiveOnHosts(lab, byHost, settings);
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
  const byHost = await bootOnHosts(lab, options, repetition);
  const trial = { lab, options, tool, byHost, repetition };
  const measured = options.hosts.length > 1 ? await runSeveral(trial) : await runOne(trial);
  const run = { ...measured, detail: { ...measured.detail, busySeconds: await busySeconds(lab, byHost) } };
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

/** Each successful run's wall time over its own busy floor (Nova's records of that run), median. */
function medianOverOwnFloor(runs: readonly NovaRun[], tool: NovaRun['tool']): number | undefined {
  const ratios = runs
    .filter((run) => run.tool === tool && run.ok && Number(run.detail.busySeconds) > 0)
    .map((run) => run.wallMs / 1000 / Number(run.detail.busySeconds));
  return spreadOf(ratios)?.median;
}

function targetRows(runs: readonly NovaRun[], options: NovaBenchOptions): TargetRow[] {
  const floor = floorSeconds(runs);
  const drainbridge = medianSeconds(runs, 'drainbridge');
  const nova = medianSeconds(runs, 'nova host-evacuate-live');
  const ratio = medianOverOwnFloor(runs, 'drainbridge');
  const novaRatio = medianOverOwnFloor(runs, 'nova host-evacuate-live');
  const shown = (r: number | undefined): string => (r === undefined ? 'n/a' : `${r.toFixed(2)}×`);
  return [
    {
      section: 'nova',
      figure:
        options.hosts.length > 1
          ? `${options.hosts.length} hosts × ${options.servers} servers ACTIVE elsewhere / the run's own floor`
          : `${options.servers} servers ACTIVE elsewhere / the run's own floor`,
      target: '≤ 1.10×',
      limit: 1.1,
      value: ratio,
      shown: `${shown(ratio)} (${drainbridge?.toFixed(1) ?? '-'} s)`,
      reference: `host-evacuate-live + polling ${shown(novaRatio)} (${nova?.toFixed(1) ?? '-'} s); reference poller's floor ${floor?.toFixed(1) ?? '-'} s at ${options.maxConcurrent} at a time`,
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
    `drainbridge Nova branch vs nova host-evacuate-live — ${options.servers} servers on each of ${options.hosts.join(', ')}, ` +
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
    `\n${renderColumns(rows)}\nfloor (the reference's migration times end to end per slot, the slowest host, median): ${floorSeconds(runs)?.toFixed(1) ?? '-'} s` +
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
