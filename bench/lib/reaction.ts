/**
 * The reaction section: how soon drainbridge acts on a request, embedded. Two triggers, each `runs`
 * times on a fresh simulated cluster (`bench/scenarios/pdb-heavy.yaml`, whose first pods may go at once):
 *
 * - `Maintenance Requested` put on the in-process bus → drainbridge's first eviction request;
 * - a cordon by the admin, seen by `drainbridge run`'s forwarder watch (cordon means evacuate) → the
 *   first eviction request.
 *
 * Times are the simulator's request log arrival times against the instant just before the trigger; the
 * runtime (and `drainbridge run`, leading, its watches synced) is up before the clock starts, as in a
 * process that is already running.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { KubeConfig } from '@kubernetes/client-node';
import { DrainbridgeRun } from '../../embedded/run/run.ts';
import { EmbeddedRuntime } from '../../embedded/runtime.ts';
import { KubeClient } from '../../lib/clients/kube/client.ts';
import { loadConfig } from '../../lib/config/index.ts';
import { createLogger } from '../../lib/log/logger.ts';
import { loadForwarderSettings } from '../../lib/sources/forwarder/settings.ts';
import { startDrainbridgeCluster } from '../../sim/drainbridge.ts';
import type { Simulator } from '../../sim/index.ts';
import { defaultCases } from './cases.ts';
import { renderColumns } from './columns.ts';
import type { BenchOptions } from './options.ts';
import type { SectionReport } from './section.ts';
import { percentileOf } from './stats.ts';
import type { TargetRow } from './targets.ts';

const CASE = 'pdb-heavy';
const WAIT_MS = 30_000;
/** The accounts and roles `drainbridge run` needs beside deploy/'s base (applied by startDrainbridgeCluster). */
const RUN_MANIFESTS = [
  'deploy/base/crds/nodemaintenances.yaml',
  'deploy/base/rbac/forwarder.yaml',
  'deploy/components/run/serviceaccount.yaml',
  'deploy/components/run/rbac.yaml',
];
type Trigger = 'Maintenance Requested' | 'cordon (drainbridge run)';

/** When the first eviction request of a drainbridge account arrived after `since` (ms epoch), or undefined. */
async function firstEvictionAt(sim: Simulator, mark: number): Promise<number | undefined> {
  const deadline = performance.now() + WAIT_MS;
  while (performance.now() < deadline) {
    const first = sim.requestLog
      .all({ since: mark, verb: 'create', resource: 'pods' })
      .find((record) => record.subresource === 'eviction' && record.user.includes(':drainbridge'));
    if (first) return first.at;
    await sleep(2);
  }
  return undefined;
}

async function requestOnce(): Promise<number | undefined> {
  const benchCase = defaultCases(1).find((c) => c.name === CASE);
  if (!benchCase) throw new Error(`no bench case ${CASE}`);
  const cluster = await startDrainbridgeCluster({ scenario: benchCase.scenario, speed: 1 });
  const config = loadConfig({ KUBECONFIG: cluster.kubeconfigPath, DRAINBRIDGE_KUBE_ACCESS: 'kubeconfig' });
  const runtime = await EmbeddedRuntime.create({ config });
  try {
    const mark = cluster.sim.requestLog.mark();
    const started = Date.now();
    await runtime.put('Maintenance Requested', {
      version: '1',
      requestId: `reaction-${randomUUID().slice(0, 8)}`,
      requester: 'bench',
      origin: 'manual',
      target: { nodeName: benchCase.node },
      reason: 'benchmark: reaction',
      drain: benchCase.drainOptions,
    });
    const at = await firstEvictionAt(cluster.sim, mark);
    return at === undefined ? undefined : at - started;
  } finally {
    runtime.stop();
    await cluster.stop();
  }
}

async function untilLeading(run: DrainbridgeRun): Promise<void> {
  const deadline = performance.now() + WAIT_MS;
  while (!run.forwarder.isLeader || run.forwarder.notReady().length > 0) {
    if (performance.now() > deadline) throw new Error('drainbridge run did not lead and get ready within 30 s');
    await sleep(5);
  }
  await run.whenResumed();
}

async function cordonOnce(): Promise<number | undefined> {
  const benchCase = defaultCases(1).find((c) => c.name === CASE);
  if (!benchCase) throw new Error(`no bench case ${CASE}`);
  const cluster = await startDrainbridgeCluster({ scenario: benchCase.scenario, speed: 1 });
  const root = new URL('../../', import.meta.url);
  for (const file of RUN_MANIFESTS) cluster.sim.apply(readFileSync(new URL(file, root), 'utf8'), file);
  const kubeconfigPath = `${cluster.kubeconfigPath}.run`;
  writeFileSync(kubeconfigPath, cluster.sim.kubeconfig(await cluster.sim.tokenFor('drainbridge/drainbridge-run')), {
    mode: 0o600,
  });
  const env = {
    KUBECONFIG: kubeconfigPath,
    DRAINBRIDGE_KUBE_ACCESS: 'kubeconfig',
    DRAINBRIDGE_FORWARDER_LEASE: 'drainbridge-run',
    DRAINBRIDGE_CORDON_EVACUATES: 'all',
    DRAINBRIDGE_METRICS_ADDRESS: '127.0.0.1:0',
    DRAINBRIDGE_FORWARDER_IDENTITY: `bench-${randomUUID().slice(0, 8)}`,
  };
  // The cordon evacuates with the case's drain options, as the put request does (`drainbridge run`'s drain
  // flags): both triggers then plan the same evictions.
  const run = await DrainbridgeRun.create({
    config: { ...loadConfig(env), drainDefaults: benchCase.drainOptions },
    settings: loadForwarderSettings(env),
    logger: createLogger('bench-reaction', 'ERROR'),
  });
  const admin = new KubeConfig();
  admin.loadFromFile(cluster.adminKubeconfigPath);
  try {
    await run.start();
    await untilLeading(run);
    const mark = cluster.sim.requestLog.mark();
    const started = Date.now();
    await new KubeClient(admin).patchNode(benchCase.node, { spec: { unschedulable: true } });
    const at = await firstEvictionAt(cluster.sim, mark);
    return at === undefined ? undefined : at - started;
  } finally {
    await run.stop(1000);
    await cluster.stop();
  }
}

interface TriggerResult {
  readonly trigger: Trigger;
  readonly samplesMs: number[];
  readonly missed: number;
  readonly p50?: number | undefined;
  readonly p95?: number | undefined;
}

async function measure(trigger: Trigger, runs: number): Promise<TriggerResult> {
  const samplesMs: number[] = [];
  let missed = 0;
  for (let i = 0; i < runs; i++) {
    const ms = trigger === 'Maintenance Requested' ? await requestOnce() : await cordonOnce();
    if (ms === undefined) missed++;
    else samplesMs.push(ms);
  }
  console.log(`${trigger}: ${samplesMs.map((ms) => Math.round(ms)).join(' ')} ms${missed ? `, ${missed} missed` : ''}`);
  return { trigger, samplesMs, missed, p50: percentileOf(samplesMs, 50), p95: percentileOf(samplesMs, 95) };
}

const ms = (value: number | undefined): string => (value === undefined ? '-' : `${Math.round(value)} ms`);

/** Runs the reaction section: `options.reactionRuns` runs of each trigger. */
export async function runReactionSection(options: BenchOptions): Promise<SectionReport> {
  console.log(
    `reaction: trigger → drainbridge's first eviction request, embedded, ${options.reactionRuns} runs each ` +
      `(a fresh ${CASE} cluster per run)`,
  );
  const results = [
    await measure('Maintenance Requested', options.reactionRuns),
    await measure('cordon (drainbridge run)', options.reactionRuns),
  ];
  const table = renderColumns([
    ['trigger → first eviction', 'runs', 'p50', 'p95', 'min', 'max'],
    ...results.map((r) => [
      r.trigger,
      `${r.samplesMs.length}/${r.samplesMs.length + r.missed}`,
      ms(r.p50),
      ms(r.p95),
      ms(r.samplesMs.length ? Math.min(...r.samplesMs) : undefined),
      ms(r.samplesMs.length ? Math.max(...r.samplesMs) : undefined),
    ]),
  ]);
  const rows: TargetRow[] = results.flatMap((r) => [
    {
      section: 'reaction',
      figure: `${r.trigger} → 1st eviction, p50`,
      target: '≤ 1000 ms',
      limit: 1000,
      value: r.p50,
      shown: ms(r.p50),
      reference: `p95 ${ms(r.p95)} (reported)`,
    },
  ]);
  return { text: table, rows, json: results, ok: results.every((r) => r.missed === 0) };
}
