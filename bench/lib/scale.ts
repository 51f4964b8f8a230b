/**
 * The scale section: `drainbridge run` — the image's bundle (dist/drainbridge.mjs, built first from the
 * current sources) as its Deployment runs it, a real child process — against generated clusters of 10 to
 * 5,000 nodes (a child simulator process each). A tenth of the nodes is asked for maintenance at the same
 * instant from two origins (half medik8s NodeMaintenances, half cloud notices naming the EC2 instance, put
 * on run's bus endpoint); a drained node's maintenance then ends (the NodeMaintenance deleted, `Maintenance
 * Ended` put), so the next waiting request gets the slot. Node labels and pod annotations change meanwhile
 * (churn). The limits: DRAINBRIDGE_MAX_HELD_NODES a tenth of the requests (at least 10: ten rounds of slots
 * from 1,000 nodes up, one below) and DRAINBRIDGE_SPREAD_LIMITS per zone. Measured: the time until every
 * requested node is drained, the most nodes cordoned at once in all and per zone (the simulator's node
 * watch), API requests per evacuated node (they must not grow with the cluster), cluster-wide node and pod
 * lists (an informer's, or made for a request: scale-requests.ts), and the peak RSS of `drainbridge run`
 * and of the simulator.
 */
import { type ChildProcess, execFileSync, fork, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { renderColumns } from './columns.ts';
import type { BenchOptions } from './options.ts';
import { scaleInstanceId, scaleNodeName } from './scale-scenario.ts';
import type { ScaleBus, ScaleDone, ScaleRequest } from './scale-sim.ts';
import type { SectionReport } from './section.ts';
import type { TargetRow } from './targets.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
/** What the run Deployment runs (deploy/components/run: the image's `node /app/drainbridge.mjs run`). */
const BUNDLE = join(ROOT, 'dist/drainbridge.mjs');
const RUN_DEPLOYMENT = 'deploy/components/run/deployment.yaml';
/** Grace periods (30 s) and start-up (2 s) run 10× faster: a round of evacuations takes seconds, not minutes. */
const SPEED = 10;
const RUN_TIMEOUT_MS = 1_800_000;
const MB = 1024 * 1024;
const MIB_TARGET = 120;
/** Per-request cost growth allowed from the smallest to the largest cluster (issue 23). */
const GROWTH_TARGET = 1.2;
/** The 27 Nov evening's run (issue 14), one origin and at most 10 held: 86 / 105 / 122 at 10 / 100 / 1,000. */
const GROWTH_BEFORE = '1.42× (10 → 1,000 nodes, 27 Nov)';
/**
 * Node label and pod annotation changes a second, each, while the requests run: one per 100 nodes (every
 * node and one pod on it changed about every 100 s, whatever the size), at least one.
 */
const churnPerSecond = (nodes: number): number => Math.max(1, nodes / 100);

/** The limits of one size: a tenth of the requests at once (at least 10), a third of that (+1) per zone. */
function limitsFor(requested: number): { readonly held: number; readonly perZone: number } {
  const held = Math.max(10, Math.floor(requested / 10));
  return { held, perZone: Math.ceil(held / 3) + 1 };
}

interface ScaleResult extends Omit<ScaleDone, 'type'> {
  readonly nodes: number;
  readonly requested: number;
  readonly limits: ReturnType<typeof limitsFor>;
  /** `drainbridge run`'s peak RSS (VmHWM), in bytes. */
  readonly runPeakRss: number;
  /** CPU seconds `drainbridge run` used while the requests ran. */
  readonly runCpuSeconds: number;
}

/** CPU seconds (user + system) process `pid` has used so far. */
function cpuSeconds(pid: number | undefined): number {
  if (pid === undefined) return 0;
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  // utime and stime are fields 14 and 15 of /proc/PID/stat, in clock ticks (100 per second on Linux).
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

function nextMessage<T>(child: ChildProcess, type: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: { type: string; message?: string }) => {
      if (message.type === 'error') reject(new Error(`scale simulator: ${message.message}`));
      else if (message.type === type) resolve(message as T);
      else return;
      child.off('message', onMessage);
    };
    child.on('message', onMessage);
    child.once('exit', (code) => reject(new Error(`scale simulator exited ${code}`)));
  });
}

function peakRss(pid: number | undefined): number {
  if (pid === undefined) return 0;
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = /^VmHWM:\s+(\d+) kB/m.exec(status)?.[1];
  return kb ? Number(kb) * 1024 : 0;
}

/**
 * The Node flags of the run Deployment's container: those of its `command` (`node [flags] …/drainbridge.mjs`)
 * when it sets one, else none (the image's entrypoint, `node /app/drainbridge.mjs`).
 */
export function deployedNodeFlags(): string[] {
  const workload = parse(readFileSync(join(ROOT, RUN_DEPLOYMENT), 'utf8')) as {
    spec: { template: { spec: { containers: { command?: string[] }[] } } };
  };
  const command = workload.spec.template.spec.containers[0]?.command;
  if (!command) return [];
  if (command[0] !== 'node' || !command.at(-1)?.endsWith('drainbridge.mjs'))
    throw new Error(`${RUN_DEPLOYMENT}: the command is not "node [flags] /app/drainbridge.mjs": ${command.join(' ')}`);
  return command.slice(1, -1);
}

interface StartedRun {
  readonly child: ChildProcess;
  /** run's bus endpoint (plain HTTP on loopback: DRAINBRIDGE_BUS_PLAINTEXT=allow). */
  readonly busUrl: string;
}

/** Starts `drainbridge run` and resolves once it leads and its bus endpoint listens (its log says so). */
function startRun(kubeconfig: string, limits: ReturnType<typeof limitsFor>, busKey: string): Promise<StartedRun> {
  // DRAINBRIDGE_BENCH_RUN_NODE_FLAGS='--max-semi-space-size=1 …': other Node flags for run (diagnosis).
  const override = process.env.DRAINBRIDGE_BENCH_RUN_NODE_FLAGS;
  const nodeFlags = override === undefined ? deployedNodeFlags() : override.split(' ').filter(Boolean);
  const child = spawn(
    process.execPath,
    [...nodeFlags, BUNDLE, 'run', '--kubeconfig', kubeconfig, '--metrics-address', '127.0.0.1:0'],
    {
      env: {
        PATH: process.env.PATH ?? '',
        HOME: tmpdir(),
        POWERTOOLS_LOG_LEVEL: 'INFO',
        DRAINBRIDGE_LOG_LEVEL: 'info',
        DRAINBRIDGE_MAX_HELD_NODES: String(limits.held),
        DRAINBRIDGE_SPREAD_LIMITS: `topology.kubernetes.io/zone=${limits.perZone}`,
        DRAINBRIDGE_CORDON_EVACUATES: 'off',
        DRAINBRIDGE_FORWARDER_IDENTITY: 'bench-scale',
        DRAINBRIDGE_BUS_ADDRESS: '127.0.0.1:0',
        DRAINBRIDGE_BUS_KEY: busKey,
        DRAINBRIDGE_BUS_PLAINTEXT: 'allow',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  return new Promise((resolve, reject) => {
    let buffered = '';
    let busUrl = '';
    let leads = false;
    // Logs go to stderr (stdout is the command's output); both are read to the end, or a full pipe would
    // block the process once its buffer filled.
    // DRAINBRIDGE_BENCH_RUN_LOG=FILE keeps every line drainbridge run printed (to see why a request stalled).
    const keep = process.env.DRAINBRIDGE_BENCH_RUN_LOG;
    const read = (chunk: Buffer) => {
      if (keep) appendFileSync(keep, chunk);
      if (busUrl && leads) return;
      buffered += chunk.toString('utf8');
      busUrl ||= /bus endpoint listening.*?"url":"([^"]+)"/.exec(buffered)?.[1] ?? '';
      leads ||= buffered.includes('this replica leads');
      if (busUrl && leads) resolve({ child, busUrl });
      else if (buffered.length > 1_000_000) buffered = buffered.slice(-10_000);
    };
    child.stdout?.on('data', read);
    child.stderr?.on('data', read);
    child.once('exit', (code) => reject(new Error(`drainbridge run exited ${code} before it led`)));
  });
}

/**
 * Every tenth node (spread over the zones), asked at once; every other one by a cloud notice — at least two,
 * so that the smallest cluster has both origins too and the sizes compare alike.
 */
function requestsFor(nodes: number): ScaleRequest[] {
  const count = Math.max(2, Math.floor(nodes / 10));
  const stride = Math.floor(nodes / count);
  return Array.from({ length: count }, (_, i) => ({
    node: scaleNodeName(i * stride),
    instanceId: scaleInstanceId(i * stride),
    origin: i % 2 === 0 ? 'node-maintenance' : 'cloud-notice',
  }));
}

async function runSize(nodes: number, churn: number | undefined): Promise<ScaleResult> {
  // DRAINBRIDGE_BENCH_SIM_CPU_PROF=DIR: a CPU profile of the simulator process (is it the bottleneck?).
  const profileDir = process.env.DRAINBRIDGE_BENCH_SIM_CPU_PROF;
  const sim = fork(join(ROOT, 'bench/lib/scale-sim.ts'), [], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    execArgv: [...process.execArgv, ...(profileDir ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : [])],
  });
  let run: StartedRun | undefined;
  try {
    const ready = nextMessage<{ runKubeconfig: string }>(sim, 'ready');
    sim.send({ type: 'start', nodes, speed: SPEED });
    const { runKubeconfig } = await ready;
    const requests = requestsFor(nodes);
    const requested = requests.length;
    const limits = limitsFor(requested);
    const busKey = randomBytes(32).toString('hex');
    run = await startRun(runKubeconfig, limits, busKey);
    const done = nextMessage<ScaleDone>(sim, 'done');
    const progress = (message: { type: string; drained?: number; held?: number; seconds?: number }) => {
      if (message.type === 'progress')
        console.log(
          `  ${nodes} nodes, ${message.seconds} s: ${message.drained}/${requested} drained, ${message.held} held`,
        );
    };
    sim.on('message', progress);
    const bus: ScaleBus = { url: run.busUrl, key: busKey };
    const runCpuAtStart = cpuSeconds(run.child.pid);
    sim.send({
      type: 'request',
      requests,
      bus,
      timeoutMs: RUN_TIMEOUT_MS,
      churnPerSecond: churn ?? churnPerSecond(nodes),
    });
    const result = await done;
    const runPeakRss = peakRss(run.child.pid);
    const runCpuSeconds = cpuSeconds(run.child.pid) - runCpuAtStart;
    const { type: _type, ...rest } = result;
    return { ...rest, nodes, requested, limits, runPeakRss, runCpuSeconds };
  } finally {
    run?.child.kill('SIGTERM');
    if (sim.connected) sim.send({ type: 'stop' });
    else sim.kill('SIGTERM');
  }
}

const perNode = (result: ScaleResult): number => result.requests.total / Math.max(1, result.drained);

const requestLists = (r: ScaleResult): number => r.requests.requestNodeLists + r.requests.requestPodLists;
/** Started minutes of the run: the providerID index (lib/node/provider-index.ts) lists at most once in each. */
const minutes = (r: ScaleResult): number => Math.max(1, Math.ceil(r.elapsedMs / 60_000));
const informerLists = (r: ScaleResult): number => r.requests.informerNodeLists + r.requests.informerPodLists;

function limitRows(largest: ScaleResult): TargetRow[] {
  const section = 'scale';
  return [
    {
      section,
      figure: `most nodes cordoned at once (${largest.nodes} nodes, ${largest.requested} requests)`,
      target: `≤ ${largest.limits.held} (the limit)`,
      limit: largest.limits.held,
      value: largest.maxHeld,
      shown: String(largest.maxHeld),
      reference: `DRAINBRIDGE_MAX_HELD_NODES=${largest.limits.held}; the simulator's node watch`,
    },
    {
      section,
      figure: `most cordoned at once in one zone (${largest.nodes} nodes)`,
      target: `≤ ${largest.limits.perZone} (the limit)`,
      limit: largest.limits.perZone,
      value: largest.maxHeldPerZone,
      shown: String(largest.maxHeldPerZone),
      reference: `DRAINBRIDGE_SPREAD_LIMITS=topology.kubernetes.io/zone=${largest.limits.perZone}`,
    },
  ];
}

function rowsFor(results: readonly ScaleResult[]): TargetRow[] {
  const largest = results.at(-1);
  const smallest = results[0];
  if (!largest || !smallest) return [];
  const growth = perNode(largest) / perNode(smallest);
  const section = 'scale';
  const perRequest = requestLists(largest) / Math.max(1, largest.requested);
  return [
    ...limitRows(largest),
    {
      section,
      figure: `requests per evacuated node, ${largest.nodes} vs ${smallest.nodes} nodes`,
      target: `≤ ${GROWTH_TARGET}× growth`,
      limit: GROWTH_TARGET,
      value: growth,
      shown: `${growth.toFixed(2)}× (${results.map((r) => perNode(r).toFixed(0)).join(' / ')})`,
      reference: `before: ${GROWTH_BEFORE}`,
    },
    {
      section,
      figure: `cluster-wide node/pod lists not by an informer (${largest.nodes} nodes)`,
      target: '≤ 1 a minute, not 1 per request',
      limit: 1,
      value: requestLists(largest) / minutes(largest),
      shown: `${requestLists(largest)} in ${(largest.elapsedMs / 1000).toFixed(0)} s for ${largest.requested} requests (${perRequest.toFixed(3)} per request)`,
      reference: `informer (re)lists: ${results.map((r) => informerLists(r)).join(' / ')} at ${results.map((r) => r.nodes).join(' / ')} nodes`,
    },
    {
      section,
      figure: `simulator CPU while the requests ran (${largest.nodes} nodes)`,
      target: '< 90 % of its one core (not the bottleneck)',
      limit: 90,
      value: (100 * largest.simulatorCpuSeconds) / (largest.elapsedMs / 1000),
      shown: share(largest.simulatorCpuSeconds, largest),
      reference: `run ${share(largest.runCpuSeconds, largest)}; ${results.map((r) => `${r.nodes}: ${share(r.simulatorCpuSeconds, r)}`).join(', ')}`,
    },
    {
      section,
      figure: `peak RSS drainbridge run (${largest.nodes} nodes, churn)`,
      target: `≤ ${MIB_TARGET} MiB`,
      limit: MIB_TARGET,
      value: largest.runPeakRss / MB,
      shown: `${(largest.runPeakRss / MB).toFixed(0)} MiB`,
      reference: `${results.map((r) => `${r.nodes}: ${(r.runPeakRss / MB).toFixed(0)}`).join(', ')} MiB; simulator ${(largest.simulatorPeakRss / MB).toFixed(0)} MiB`,
    },
  ];
}

/** CPU seconds as a share of one core over the requests' wall time. */
const share = (seconds: number, r: ScaleResult): string => `${((100 * seconds) / (r.elapsedMs / 1000)).toFixed(0)} %`;

function resultTable(results: readonly ScaleResult[]): string {
  return renderColumns([
    [
      'nodes',
      'evacuated',
      'seconds',
      'held ≤',
      'most held',
      'zone ≤',
      'most/zone',
      'requests',
      'per node',
      'writes/node',
      'admission attempts',
      'other lists',
      'informer lists',
      'churn',
      'run peak RSS',
      'sim peak RSS',
      'run CPU',
      'sim CPU',
    ],
    ...results.map((r) => [
      String(r.nodes),
      `${r.drained}/${r.requested}`,
      (r.elapsedMs / 1000).toFixed(1),
      String(r.limits.held),
      String(r.maxHeld),
      String(r.limits.perZone),
      String(r.maxHeldPerZone),
      String(r.requests.total),
      perNode(r).toFixed(1),
      (r.requests.writes / Math.max(1, r.drained)).toFixed(1),
      String(r.requests.admissionAttempts),
      String(requestLists(r)),
      String(informerLists(r)),
      String(r.churn),
      `${(r.runPeakRss / MB).toFixed(0)} MiB`,
      `${(r.simulatorPeakRss / MB).toFixed(0)} MiB`,
      share(r.runCpuSeconds, r),
      share(r.simulatorCpuSeconds, r),
    ]),
  ]);
}

/** Runs the scale section for every size in `options.scaleNodes`. */
export async function runScaleSection(options: BenchOptions): Promise<SectionReport> {
  // Always from the current sources (seconds): a stale dist/ would measure other code.
  execFileSync(process.execPath, [join(ROOT, 'scripts/bundle.ts')], { stdio: 'inherit', cwd: ROOT });
  console.log(
    `scale: drainbridge run (node ${[...(process.env.DRAINBRIDGE_BENCH_RUN_NODE_FLAGS?.split(' ').filter(Boolean) ?? deployedNodeFlags()), 'dist/drainbridge.mjs run'].join(' ')}, child process) against generated clusters of ${options.scaleNodes.join(', ')} nodes ` +
      '(5 pods each, 3 zones), a tenth of the nodes (at least 2) asked at once (half NodeMaintenance, half cloud notices naming the ' +
      `EC2 instance, on run's bus endpoint), at most a tenth of the requests held (≥ 10) and a third (+1) per zone, ` +
      `${options.scaleChurn === undefined ? 'a node label and a pod annotation change a second per 100 nodes (at least one)' : `${options.scaleChurn} node label and ${options.scaleChurn} pod annotation changes a second`}, speed ${SPEED}`,
  );
  const results: ScaleResult[] = [];
  const failures: string[] = [];
  for (const nodes of options.scaleNodes) {
    let result: ScaleResult;
    try {
      result = await runSize(nodes, options.scaleChurn);
    } catch (error) {
      failures.push(`${nodes} nodes: ${error instanceof Error ? error.message : String(error)}`);
      console.log(`${nodes} nodes: FAILED: ${failures.at(-1)}`);
      continue;
    }
    results.push(result);
    console.log(
      `${nodes} nodes: ${result.drained}/${result.requested} drained in ${(result.elapsedMs / 1000).toFixed(1)} s, ` +
        `${result.requests.total} requests (${perNode(result).toFixed(1)} per node), most held ${result.maxHeld}` +
        (result.failure ? ` — ${result.failure}` : ''),
    );
  }
  const kinds = results.at(-1)?.requests.kinds ?? {};
  const top = Object.entries(kinds)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 12)
    .map(([kind, count]) => `${kind} ${count}`)
    .join(', ');
  return {
    text: `${resultTable(results)}\nrequests by kind at ${results.at(-1)?.nodes} nodes: ${top}${failures.map((f) => `\nFAILED ${f}`).join('')}`,
    rows: rowsFor(results),
    json: { results, failures },
    ok: failures.length === 0 && results.every((r) => r.ok),
  };
}
