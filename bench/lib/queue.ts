/**
 * The queue section (issue 23 point 1, "waiting costs nothing"): `drainbridge run` embedded, in real time,
 * one maintenance slot (the default) held by node-0 and 10 or 100 requests queued behind it on a cluster of
 * idle nodes (nothing to drain: only the waiting is measured). Measured, for each queue length, with
 * wake-ups on (the release wakes the front of the line) and off (`wakeUps: false`: only the waits'
 * fallbacks, what a lost wake-up costs):
 * - reads of the admission Lease per minute while the line waits (the requests' GETs; `run`'s own watch
 *   of the Lease is one stream, not counted), in total and per waiting request;
 * - Step Functions transitions as they would be billed (states entered + retries) per waiting request
 *   per minute;
 * - the slot's idle time between a release and the next admission: the release's write of the holder
 *   node (its ledger) to the admitted request's first write of its own node, in the simulator's log.
 * Run on main's code (a checkout), the same file gives the polling figures the README sets beside these.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { KubeConfig } from '@kubernetes/client-node';
import { billedStateTransitions } from '../../embedded/executor.ts';
import { DrainbridgeRun } from '../../embedded/run/run.ts';
import { readAdmissionLease, readAdmissionView } from '../../lib/admission/index.ts';
import { KubeClient } from '../../lib/clients/kube/client.ts';
import { loadConfig } from '../../lib/config/index.ts';
import { createLogger } from '../../lib/log/logger.ts';
import { isHeld, readLedger } from '../../lib/node/ledger.ts';
import { loadForwarderSettings } from '../../lib/sources/forwarder/settings.ts';
import { startDrainbridgeCluster } from '../../sim/drainbridge.ts';
import type { Simulator } from '../../sim/index.ts';
import { renderColumns } from './columns.ts';
import type { SectionReport } from './section.ts';
import { percentileOf } from './stats.ts';
import { type TargetRow, times } from './targets.ts';

export const QUEUE_LENGTHS = [10, 100] as const;
/** How long the line is watched once formed (reads and transitions are counted over it). */
const WINDOW_MS = 60_000;
/** Waiting after the line formed before counting: every request past its first attempts. */
const WARM_UP_MS = 15_000;
/** Releases (slot handovers) per run, for the idle time. */
const HANDOVERS = 5;
const WAIT_MS = 300_000;
const RUN_MANIFESTS = [
  'deploy/base/crds/nodemaintenances.yaml',
  'deploy/base/rbac/forwarder.yaml',
  'deploy/components/run/serviceaccount.yaml',
  'deploy/components/run/rbac.yaml',
];
const NAMESPACE = 'drainbridge';
const ADMISSION_LEASE = 'drainbridge-admission';

export interface QueueRun {
  readonly queued: number;
  readonly wakeUps: boolean;
  /** The requests' GETs of the admission Lease per minute, all of them. */
  readonly leaseReadsPerMinute: number;
  readonly leaseReadsPerWaitingPerMinute: number;
  readonly transitionsPerWaitingPerMinute: number;
  /** Slot idle times of the handovers, ms. */
  readonly idleMs: number[];
}

function idleScenario(nodes: number) {
  return {
    name: `queue-${nodes}`,
    speed: 1,
    nodes: Array.from({ length: nodes }, (_, i) => ({ name: `node-${i}` })),
    namespaces: [],
    workloads: [],
    pdbs: [],
  };
}

const requestIdOf = (node: string) => `queue-${node}`;
const detailOf = (node: string) => ({
  version: '1' as const,
  requestId: requestIdOf(node),
  requester: 'bench@example.com',
  origin: 'manual' as const,
  target: { nodeName: node },
  reason: 'queue benchmark',
  drain: { ignoreDaemonSets: true, deleteEmptyDirData: true },
});
const endedOf = (node: string) => ({
  version: '1' as const,
  requestId: requestIdOf(node),
  requester: 'bench@example.com',
  origin: 'manual' as const,
  target: { nodeName: node },
});

async function until(what: string, check: () => Promise<boolean> | boolean): Promise<void> {
  const deadline = performance.now() + WAIT_MS;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error(`queue bench: timed out waiting until ${what}`);
    await sleep(20);
  }
}

async function heldNodes(admin: KubeClient): Promise<string[]> {
  const nodes = await admin.listNodes();
  return nodes.filter((node) => isHeld(readLedger(node))).map((node) => node.metadata?.name ?? '');
}

/** Transitions billed so far to the waiting requests' executions. */
function billedFor(run: DrainbridgeRun, requestIds: ReadonlySet<string>): number {
  return run.runtime.executions
    .filter((execution) => execution.requestId !== undefined && requestIds.has(execution.requestId))
    .reduce((sum, execution) => sum + billedStateTransitions(execution.stats), 0);
}

/** The first write of `node` (or of any node but `node`, with `other`) by drainbridge after `since`. */
function firstNodeWrite(sim: Simulator, since: number, match: (name: string) => boolean): number | undefined {
  return sim.requestLog
    .writes({ since, resource: 'nodes' })
    .find((record) => record.user.includes(':drainbridge') && match(record.name))?.at;
}

async function startRun(sim: Simulator, kubeconfigPath: string, wakeUps: boolean): Promise<DrainbridgeRun> {
  const root = new URL('../../', import.meta.url);
  for (const file of RUN_MANIFESTS) sim.apply(readFileSync(new URL(file, root), 'utf8'), file);
  const runKubeconfig = `${kubeconfigPath}.run`;
  writeFileSync(runKubeconfig, sim.kubeconfig(await sim.tokenFor('drainbridge/drainbridge-run')), { mode: 0o600 });
  const env = {
    KUBECONFIG: runKubeconfig,
    DRAINBRIDGE_KUBE_ACCESS: 'kubeconfig',
    DRAINBRIDGE_FORWARDER_LEASE: 'drainbridge-run',
    DRAINBRIDGE_METRICS_ADDRESS: '127.0.0.1:0',
    DRAINBRIDGE_FORWARDER_IDENTITY: `bench-${randomUUID().slice(0, 8)}`,
  };
  const run = await DrainbridgeRun.create({
    config: loadConfig(env),
    settings: loadForwarderSettings(env),
    logger: createLogger('bench-queue', 'ERROR'),
    wakeUps,
  });
  await run.start();
  await until('drainbridge run leads', () => run.forwarder.isLeader && run.forwarder.notReady().length === 0);
  await run.whenResumed();
  return run;
}

/** One run: node-0 holds the slot, `queued` requests wait behind it. */
export async function queueRun(queued: number, wakeUps: boolean): Promise<QueueRun> {
  const cluster = await startDrainbridgeCluster({ scenario: idleScenario(queued + 1), speed: 1, settleMs: 2000 });
  const admin = new KubeConfig();
  admin.loadFromFile(cluster.adminKubeconfigPath);
  const adminClient = new KubeClient(admin);
  const run = await startRun(cluster.sim, cluster.kubeconfigPath, wakeUps);
  try {
    await run.runtime.put('Maintenance Requested', detailOf('node-0'));
    await until('node-0 holds the slot', async () => (await heldNodes(adminClient)).includes('node-0'));
    const waiting = Array.from({ length: queued }, (_, i) => `node-${i + 1}`);
    for (const node of waiting) await run.runtime.put('Maintenance Requested', detailOf(node));
    await until(`${queued} requests wait in line`, async () => {
      const view = readAdmissionView(await readAdmissionLease(adminClient, NAMESPACE));
      return Object.keys(view.queue).length === queued;
    });
    await sleep(WARM_UP_MS);
    const ids = new Set(waiting.map(requestIdOf));
    const mark = cluster.sim.requestLog.mark();
    const billedBefore = billedFor(run, ids);
    const started = performance.now();
    await sleep(WINDOW_MS);
    const minutes = (performance.now() - started) / 60_000;
    const reads = cluster.sim.requestLog
      .all({ since: mark, verb: 'get', resource: 'leases' })
      .filter((record) => record.name === ADMISSION_LEASE && record.user.includes(':drainbridge')).length;
    const billed = billedFor(run, ids) - billedBefore;
    const idleMs = await handovers(cluster.sim, run, adminClient);
    return {
      queued,
      wakeUps,
      leaseReadsPerMinute: reads / minutes,
      leaseReadsPerWaitingPerMinute: reads / minutes / queued,
      transitionsPerWaitingPerMinute: billed / minutes / queued,
      idleMs,
    };
  } finally {
    await run.stop(1000);
    await cluster.stop();
  }
}

/** Releases the holder HANDOVERS times; each time, the slot's idle time until the next admission. */
async function handovers(sim: Simulator, run: DrainbridgeRun, admin: KubeClient): Promise<number[]> {
  let holder = 'node-0';
  const idle: number[] = [];
  for (let i = 0; i < HANDOVERS; i++) {
    const mark = sim.requestLog.mark();
    await run.runtime.put('Maintenance Ended', endedOf(holder));
    let next: string | undefined;
    await until('the next request holds the slot', async () => {
      next = (await heldNodes(admin)).find((name) => name !== holder);
      return next !== undefined;
    });
    const released = firstNodeWrite(sim, mark, (name) => name === holder);
    const admitted = firstNodeWrite(sim, mark, (name) => name !== holder);
    if (released !== undefined && admitted !== undefined) idle.push(admitted - released);
    holder = next as string;
  }
  return idle;
}

const fixed = (value: number, digits = 1) => value.toFixed(digits);

/** Runs the queue section: each queue length with wake-ups on and off. */
export async function runQueueSection(): Promise<SectionReport> {
  console.log(
    `queue: one slot held, ${QUEUE_LENGTHS.join(' and ')} requests waiting behind it, ${WINDOW_MS / 1000} s counted, ` +
      `${HANDOVERS} handovers; embedded \`drainbridge run\`, real time`,
  );
  const runs: QueueRun[] = [];
  for (const queued of QUEUE_LENGTHS) {
    for (const wakeUps of [true, false]) {
      const result = await queueRun(queued, wakeUps);
      console.log(JSON.stringify(result));
      runs.push(result);
    }
  }
  const table = renderColumns([
    ['queued', 'wake-ups', 'Lease reads/min', 'per waiting/min', 'transitions per waiting/min', 'idle p50', 'idle max'],
    ...runs.map((r) => [
      String(r.queued),
      r.wakeUps ? 'on' : 'off (fallback)',
      fixed(r.leaseReadsPerMinute),
      fixed(r.leaseReadsPerWaitingPerMinute, 2),
      fixed(r.transitionsPerWaitingPerMinute, 2),
      `${Math.round(percentileOf(r.idleMs, 50) ?? Number.NaN)} ms`,
      `${Math.round(Math.max(...r.idleMs))} ms`,
    ]),
  ]);
  const on = (queued: number) => runs.find((r) => r.queued === queued && r.wakeUps);
  const small = on(QUEUE_LENGTHS[0]);
  const large = on(QUEUE_LENGTHS[1]);
  const growth = (pick: (r: QueueRun) => number) => (small && large ? pick(large) / pick(small) : undefined);
  const readsGrowth = growth((r) => r.leaseReadsPerWaitingPerMinute);
  const transitionsGrowth = growth((r) => r.transitionsPerWaitingPerMinute);
  const idleP50 = percentileOf([...(small?.idleMs ?? []), ...(large?.idleMs ?? [])], 50);
  const reference = 'polling on main: bench/README.md';
  const rows: TargetRow[] = [
    {
      section: 'queue',
      figure: 'Lease reads per waiting request, 100 vs 10 queued',
      target: '≤ 1.1×',
      limit: 1.1,
      value: readsGrowth,
      shown: times(readsGrowth),
      reference,
    },
    {
      section: 'queue',
      figure: 'billed transitions per waiting request, 100 vs 10 queued',
      target: '≤ 1.1×',
      limit: 1.1,
      value: transitionsGrowth,
      shown: times(transitionsGrowth),
      reference,
    },
    {
      section: 'queue',
      figure: 'slot idle, release → next admission, p50',
      target: '≤ 1 s',
      limit: 1000,
      value: idleP50,
      shown: idleP50 === undefined ? 'n/a' : `${Math.round(idleP50)} ms`,
      reference,
    },
  ];
  const ok = runs.every((r) => r.idleMs.length === HANDOVERS);
  return { text: table, rows, json: { runs }, ok };
}
