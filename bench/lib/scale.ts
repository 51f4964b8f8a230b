/**
 * The scale section: `drainbridge run` (a real child process, as deployed in a cluster) against generated
 * clusters of 10, 100 and 1,000 nodes (a child simulator process each), a tenth of the nodes asked for
 * maintenance at the same instant (medik8s NodeMaintenances), `DRAINBRIDGE_MAX_HELD_NODES` 10; a drained
 * node's NodeMaintenance is deleted (its maintenance over), so the next waiting request gets the slot. Measured:
 * the time until every requested node is drained, the most nodes held at once (the concurrency limit),
 * API requests per evacuated node (they must not grow with the cluster), whole-cluster node and pod
 * lists, and the peak RSS of `drainbridge run` and of the simulator.
 */
import { type ChildProcess, fork, spawn } from 'node:child_process';
import { appendFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { renderColumns } from './columns.ts';
import type { BenchOptions } from './options.ts';
import { scaleNodeName } from './scale-scenario.ts';
import type { ScaleDone } from './scale-sim.ts';
import type { SectionReport } from './section.ts';
import type { TargetRow } from './targets.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const MAX_HELD = 10;
/** Grace periods (30 s) and start-up (2 s) run 10× faster: a round of 10 evacuations takes seconds, not minutes. */
const SPEED = 10;
const RUN_TIMEOUT_MS = 900_000;
const MB = 1024 * 1024;

interface ScaleResult extends Omit<ScaleDone, 'type'> {
  readonly nodes: number;
  readonly requested: number;
  /** `drainbridge run`'s peak RSS (VmHWM), in bytes. */
  readonly runPeakRss: number;
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

/** Starts `drainbridge run` and resolves once it leads (its log says so). */
function startRun(kubeconfig: string): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    [join(ROOT, 'bin/drainbridge.js'), 'run', '--kubeconfig', kubeconfig, '--metrics-address', '127.0.0.1:0'],
    {
      env: {
        PATH: process.env.PATH ?? '',
        HOME: tmpdir(),
        POWERTOOLS_LOG_LEVEL: 'INFO',
        DRAINBRIDGE_LOG_LEVEL: 'info',
        DRAINBRIDGE_MAX_HELD_NODES: String(MAX_HELD),
        DRAINBRIDGE_CORDON_EVACUATES: 'off',
        DRAINBRIDGE_FORWARDER_IDENTITY: 'bench-scale',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  return new Promise((resolve, reject) => {
    let buffered = '';
    // Logs go to stderr (stdout is the command's output); both are read to the end, or a full pipe would
    // block the process once its buffer filled.
    // DRAINBRIDGE_BENCH_RUN_LOG=FILE keeps every line drainbridge run printed (to see why a request stalled).
    const keep = process.env.DRAINBRIDGE_BENCH_RUN_LOG;
    const read = (chunk: Buffer) => {
      if (keep) appendFileSync(keep, chunk);
      buffered += chunk.toString('utf8');
      if (buffered.includes('this replica leads')) {
        resolve(child);
        buffered = '';
      } else if (buffered.length > 1_000_000) buffered = buffered.slice(-10_000);
    };
    child.stdout?.on('data', read);
    child.stderr?.on('data', read);
    child.once('exit', (code) => reject(new Error(`drainbridge run exited ${code} before it led`)));
  });
}

async function runSize(nodes: number): Promise<ScaleResult> {
  const sim = fork(join(ROOT, 'bench/lib/scale-sim.ts'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  let run: ChildProcess | undefined;
  try {
    const ready = nextMessage<{ runKubeconfig: string }>(sim, 'ready');
    sim.send({ type: 'start', nodes, speed: SPEED });
    const { runKubeconfig } = await ready;
    run = await startRun(runKubeconfig);
    const requested = Math.max(1, Math.floor(nodes / 10));
    // Every tenth node (spread over the zones), all asked at once.
    const names = Array.from({ length: requested }, (_, i) => scaleNodeName(i * 10));
    const done = nextMessage<ScaleDone>(sim, 'done');
    const progress = (message: { type: string; drained?: number; held?: number; seconds?: number }) => {
      if (message.type === 'progress')
        console.log(
          `  ${nodes} nodes, ${message.seconds} s: ${message.drained}/${requested} drained, ${message.held} held`,
        );
    };
    sim.on('message', progress);
    sim.send({ type: 'request', nodes: names, timeoutMs: RUN_TIMEOUT_MS });
    const result = await done;
    const runPeakRss = peakRss(run.pid);
    const { type: _type, ...rest } = result;
    return { ...rest, nodes, requested, runPeakRss };
  } finally {
    run?.kill('SIGTERM');
    if (sim.connected) sim.send({ type: 'stop' });
    else sim.kill('SIGTERM');
  }
}

const perNode = (result: ScaleResult): number => result.requests.total / Math.max(1, result.drained);

function rowsFor(results: readonly ScaleResult[]): TargetRow[] {
  const largest = results.at(-1);
  const smallest = results[0];
  const growth = largest && smallest ? perNode(largest) / perNode(smallest) : undefined;
  const section = 'scale';
  if (!largest) return [];
  return [
    {
      section,
      figure: `most nodes held at once (${largest.requested} requests)`,
      target: `≤ ${MAX_HELD} (the limit)`,
      limit: MAX_HELD,
      value: largest.maxHeld,
      shown: String(largest.maxHeld),
      reference: `DRAINBRIDGE_MAX_HELD_NODES=${MAX_HELD}`,
    },
    {
      section,
      figure: 'lists of every pod in the cluster',
      target: '0',
      limit: 0,
      value: results.reduce((sum, r) => sum + r.requests.clusterPodLists, 0),
      shown: String(results.reduce((sum, r) => sum + r.requests.clusterPodLists, 0)),
      reference: `${results.map((r) => `${r.nodes} nodes`).join(', ')}`,
    },
    {
      section,
      figure: `requests per evacuated node, ${largest.nodes} vs ${smallest?.nodes} nodes`,
      target: 'linear (≤ 1.5× growth)',
      limit: 1.5,
      value: growth,
      shown: `${growth?.toFixed(2)}× (${results.map((r) => perNode(r).toFixed(0)).join(' / ')})`,
      reference: results.map((r) => `${r.nodes}: ${r.requested} evacuated`).join(', '),
    },
    {
      section,
      figure: `whole-node lists per admission attempt (${largest.nodes} nodes)`,
      target: '< 1 (not every attempt)',
      limit: 0.99,
      value: largest.requests.nodeLists / Math.max(1, largest.requests.admissionAttempts),
      shown: `${largest.requests.nodeLists} lists / ${largest.requests.admissionAttempts} attempts`,
      reference: 'the forwarder lists once at start (before the requests)',
    },
    {
      section,
      figure: `peak RSS drainbridge run (${largest.nodes} nodes)`,
      target: 'reported',
      value: largest.runPeakRss / MB,
      shown: `${(largest.runPeakRss / MB).toFixed(0)} MB`,
      reference: `simulator ${(largest.simulatorPeakRss / MB).toFixed(0)} MB`,
    },
  ];
}

/** Runs the scale section for every size in `options.scaleNodes`. */
export async function runScaleSection(options: BenchOptions): Promise<SectionReport> {
  console.log(
    `scale: drainbridge run (child process) against generated clusters of ${options.scaleNodes.join(', ')} nodes ` +
      `(5 pods each), a tenth of the nodes asked at once (NodeMaintenance), at most ${MAX_HELD} held, speed ${SPEED}`,
  );
  const results: ScaleResult[] = [];
  const failures: string[] = [];
  for (const nodes of options.scaleNodes) {
    let result: ScaleResult;
    try {
      result = await runSize(nodes);
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
  const table = renderColumns([
    [
      'nodes',
      'evacuated',
      'seconds',
      'most held',
      'requests',
      'per node',
      'writes/node',
      'node lists',
      'admission attempts',
      'cluster pod lists',
      'run peak RSS',
      'sim peak RSS',
    ],
    ...results.map((r) => [
      String(r.nodes),
      `${r.drained}/${r.requested}`,
      (r.elapsedMs / 1000).toFixed(1),
      String(r.maxHeld),
      String(r.requests.total),
      perNode(r).toFixed(1),
      (r.requests.writes / Math.max(1, r.drained)).toFixed(1),
      String(r.requests.nodeLists),
      String(r.requests.admissionAttempts),
      String(r.requests.clusterPodLists),
      `${(r.runPeakRss / MB).toFixed(0)} MB`,
      `${(r.simulatorPeakRss / MB).toFixed(0)} MB`,
    ]),
  ]);
  const kinds = results.at(-1)?.requests.kinds ?? {};
  const top = Object.entries(kinds)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 12)
    .map(([kind, count]) => `${kind} ${count}`)
    .join(', ');
  return {
    text: `${table}\nrequests by kind at ${results.at(-1)?.nodes} nodes: ${top}${failures.map((f) => `\nFAILED ${f}`).join('')}`,
    rows: rowsFor(results),
    json: { results, failures },
    ok: failures.length === 0 && results.every((r) => r.ok),
  };
}
