/**
 * The scale section's simulator, as a child process of the benchmark (so that its peak RSS is its own and
 * `drainbridge run` talks to it over the network as to a real apiserver). Driven over the IPC channel:
 *
 *   parent → { type: 'start', nodes, speed }        child → { type: 'ready', runKubeconfig, adminKubeconfig }
 *   parent → { type: 'request', requests, bus, … }  child → { type: 'done', … } when every request drained
 *   parent → { type: 'stop' }                       child exits
 *
 * The maintenance requests come from two origins at once: medik8s NodeMaintenances (created straight in the
 * store, as the operator's users do) and cloud notices — `Maintenance Requested` naming the EC2 instance
 * (not the node), put on run's bus endpoint with the node agents' signed PutEvents, as an AWS Health rule or
 * a node agent would. A drained node's maintenance then ends by the same origin (the NodeMaintenance
 * deleted, `Maintenance Ended` put). While they run, the child changes node labels and pod annotations at
 * random (churn) and follows the node watch: the most nodes cordoned at once, in all and per zone, is what
 * the configured limits must keep — read from the cluster, not from drainbridge's own records.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { createBusEndpointClient } from '../../lib/bus/bus-endpoint-client.ts';
import { busSigningKey } from '../../lib/bus/bus-key.ts';
import type { MaintenanceRequestedEvent } from '../../lib/bus/contracts/index.ts';
import { toPublishEntry } from '../../lib/bus/entry.ts';
import { whenSettled } from '../../sim/scenarios/index.ts';
import type { RequestRecord } from '../../sim/server/request-log.ts';
import { type Simulator, startSimulator } from '../../sim/simulator.ts';
import type { KubeObject } from '../../sim/store/types.ts';
import { type ScaleRequests, summarizeScaleRequests } from './scale-requests.ts';
import { scaleScenario } from './scale-scenario.ts';

const ROOT = new URL('../../', import.meta.url);
const MANIFESTS = [
  'deploy/base/crds/evacuations.yaml',
  'deploy/base/crds/nodemaintenances.yaml',
  'deploy/base/rbac/drainbridge.yaml',
  'deploy/base/rbac/forwarder.yaml',
  'deploy/components/run/serviceaccount.yaml',
  'deploy/components/run/rbac.yaml',
];
const RUN_USER = 'system:serviceaccount:drainbridge:drainbridge-run';
const NODES = { group: '', resource: 'nodes' };
const PODS = { group: '', resource: 'pods' };
const NODE_MAINTENANCES = { group: 'nodemaintenance.medik8s.io', resource: 'nodemaintenances' };
const EVACUATIONS = { group: 'drainbridge.io', resource: 'evacuations' };
const ZONE_LABEL = 'topology.kubernetes.io/zone';
/** PutEvents takes at most 10 entries a call. */
const PUT_BATCH = 10;

export type ScaleOrigin = 'node-maintenance' | 'cloud-notice';

/** One maintenance request: its node, and for a cloud notice the EC2 instance it names instead. */
export interface ScaleRequest {
  readonly node: string;
  readonly instanceId: string;
  readonly origin: ScaleOrigin;
}

/** Where run's bus endpoint listens, and the key it takes. */
export interface ScaleBus {
  readonly url: string;
  readonly key: string;
}

export type { ScaleRequests } from './scale-requests.ts';

export interface ScaleDone {
  readonly type: 'done';
  readonly ok: boolean;
  readonly failure: string;
  readonly elapsedMs: number;
  readonly drained: number;
  /** The most nodes cordoned at once (the node watch), and the most in one zone. */
  readonly maxHeld: number;
  readonly maxHeldPerZone: number;
  /** Node label and pod annotation changes made while the requests ran. */
  readonly churn: number;
  readonly requests: ScaleRequests;
  /** The simulator process's peak RSS, in bytes. */
  readonly simulatorPeakRss: number;
  /** CPU seconds (user + system) the simulator process used while the requests ran. */
  readonly simulatorCpuSeconds: number;
}

type Message =
  | { type: 'start'; nodes: number; speed: number }
  | { type: 'request'; requests: ScaleRequest[]; bus: ScaleBus; timeoutMs: number; churnPerSecond: number }
  | { type: 'stop' };

let sim: Simulator | undefined;

function send(message: Record<string, unknown>): void {
  process.send?.(message);
}

async function start(nodes: number, speed: number): Promise<void> {
  // 500 requests at ≈ 140 API requests each, and what came before them: more than the default 100,000.
  sim = await startSimulator({ scenario: scaleScenario(nodes, speed), speed, requestLogSize: 1_000_000 });
  for (const file of MANIFESTS) sim.apply(readFileSync(new URL(file, ROOT), 'utf8'), file);
  // Settling is measured on the simulated clock: ten real minutes at any speed.
  if (sim.scenario) await whenSettled(sim.store, sim.scenario, 600_000 * speed);
  const dir = mkdtempSync(join(tmpdir(), 'drainbridge-scale-'));
  const runKubeconfig = join(dir, 'run.kubeconfig');
  writeFileSync(runKubeconfig, sim.kubeconfig(await sim.tokenFor('drainbridge/drainbridge-run')), { mode: 0o600 });
  const adminKubeconfig = join(dir, 'admin.kubeconfig');
  writeFileSync(adminKubeconfig, sim.kubeconfig(sim.adminToken), { mode: 0o600 });
  send({ type: 'ready', runKubeconfig, adminKubeconfig });
}

function cordoned(node: KubeObject): boolean {
  return (node as { spec?: { unschedulable?: boolean } }).spec?.unschedulable === true;
}

function zoneOf(node: KubeObject): string {
  return node.metadata.labels?.[ZONE_LABEL] ?? '';
}

/** The most nodes of `byNode` in any one zone. */
function mostInOneZone(byNode: ReadonlyMap<string, string>): number {
  const perZone = new Map<string, number>();
  for (const zone of byNode.values()) perZone.set(zone, (perZone.get(zone) ?? 0) + 1);
  return Math.max(0, ...perZone.values());
}

interface HeldWatch {
  readonly now: () => number;
  readonly most: () => number;
  readonly mostPerZone: () => number;
  readonly stop: () => void;
}

/**
 * The cordoned nodes, kept from the node watch's events (one node each): counting every node of the
 * cluster at every node change would cost the simulator more than the API requests it serves. Nobody but
 * drainbridge cordons in this cluster (the churn changes labels only), so a cordoned node is one it holds.
 */
function watchHeld(current: Simulator): HeldWatch {
  const held = new Map<string, string>();
  for (const node of current.store.scan(NODES)) if (cordoned(node)) held.set(node.metadata.name ?? '', zoneOf(node));
  let most = held.size;
  let mostPerZone = mostInOneZone(held);
  const watch = current.store.watch(NODES, {}, (event) => {
    if (event.type === 'BOOKMARK' || event.type === 'ERROR') return;
    const name = event.object.metadata?.name ?? '';
    if (event.type !== 'DELETED' && cordoned(event.object)) held.set(name, zoneOf(event.object));
    else held.delete(name);
    most = Math.max(most, held.size);
    mostPerZone = Math.max(mostPerZone, mostInOneZone(held));
  });
  return { now: () => held.size, most: () => most, mostPerZone: () => mostPerZone, stop: () => watch.stop() };
}

/**
 * Changes while the requests run, as a busy cluster has them: a label on a random node and an annotation
 * on a random pod, `perSecond` of each; every change reaches run's watches. Returns how many were made.
 */
function startChurn(current: Simulator, perSecond: number): { readonly stop: () => number } {
  const nodes = current.store.scan(NODES).map((node) => node.metadata.name ?? '');
  const pods = current.store
    .scan(PODS)
    .map((pod) => ({ namespace: pod.metadata.namespace ?? '', name: pod.metadata.name ?? '' }));
  let changes = 0;
  const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)] as T;
  const change = (ref: typeof NODES, key: { namespace?: string; name: string }, field: 'labels' | 'annotations') => {
    try {
      current.store.mutate(ref, key, (copy) => {
        copy.metadata[field] = { ...copy.metadata[field], 'bench.drainbridge.io/churn': String(changes) };
        return copy;
      });
      changes++;
    } catch {
      // the pod went (evicted) since the scan
    }
  };
  const timer =
    perSecond > 0
      ? setInterval(() => {
          change(NODES, { name: pick(nodes) }, 'labels');
          change(PODS, pick(pods), 'annotations');
        }, 1000 / perSecond)
      : undefined;
  return {
    stop: () => {
      clearInterval(timer);
      return changes;
    },
  };
}

/** The wanted nodes whose evacuation reached NodeDrained now (not counted before: they are in `seen`). */
function newlyDrained(current: Simulator, nodes: ReadonlySet<string>, seen: ReadonlySet<string>): string[] {
  // Read, not copied (scan): 500 records copied ten times a second would load the simulator's one thread.
  return current.store
    .scan(EVACUATIONS)
    .map((record) => record as unknown as { spec?: { nodeName?: string }; status?: { phase?: string } })
    .filter((evacuation) => evacuation.status?.phase === 'NodeDrained')
    .map((evacuation) => evacuation.spec?.nodeName ?? '')
    .filter((node) => nodes.has(node) && !seen.has(node));
}

function noticeOf(request: ScaleRequest): MaintenanceRequestedEvent {
  return {
    version: '1',
    requestId: `aws:${request.instanceId}:bench-scale`,
    requester: 'aws.health',
    origin: 'aws',
    target: { instance: { provider: 'aws', id: request.instanceId } },
    reason: 'benchmark: scale (EC2 scheduled event)',
  };
}

/** The cloud notices' side: `Maintenance Requested` / `Ended` put on run's bus endpoint, 10 a call. */
async function busSender(bus: ScaleBus) {
  const client = await createBusEndpointClient({ endpoint: bus.url, key: busSigningKey(bus.key) });
  const put = async (type: 'Maintenance Requested' | 'Maintenance Ended', requests: readonly ScaleRequest[]) => {
    for (let at = 0; at < requests.length; at += PUT_BATCH) {
      const entries = requests.slice(at, at + PUT_BATCH).map((request) => {
        const { reason: _reason, ...ended } = noticeOf(request);
        return type === 'Maintenance Requested'
          ? toPublishEntry(type, noticeOf(request), 'drainbridge')
          : toPublishEntry(type, ended, 'drainbridge');
      });
      const answer = await client.send(new PutEventsCommand({ Entries: entries }));
      if (answer.FailedEntryCount) throw new Error(`bus endpoint refused: ${JSON.stringify(answer.Entries)}`);
    }
  };
  return { put, close: () => client.destroy() };
}

function createMaintenance(current: Simulator, node: string): void {
  current.store.create(NODE_MAINTENANCES, {
    apiVersion: 'nodemaintenance.medik8s.io/v1beta1',
    kind: 'NodeMaintenance',
    metadata: { name: `nm-${node}` },
    spec: { nodeName: node, reason: 'benchmark: scale' },
  });
}

/**
 * A drained node's maintenance is over (drainbridge restores the node and releases the hold), so that a
 * request waiting for one of the limited slots is admitted — as an operator ending maintenance node by node
 * would: its NodeMaintenance goes, or its cloud notice ends.
 */
async function endMaintenance(
  current: Simulator,
  requests: readonly ScaleRequest[],
  bus: Awaited<ReturnType<typeof busSender>>,
): Promise<void> {
  for (const request of requests.filter((r) => r.origin === 'node-maintenance')) {
    try {
      current.store.delete(NODE_MAINTENANCES, { name: `nm-${request.node}` });
    } catch {
      // already gone
    }
  }
  await bus.put(
    'Maintenance Ended',
    requests.filter((r) => r.origin === 'cloud-notice'),
  );
}

/**
 * DRAINBRIDGE_BENCH_SCALE_REQUESTS=FILE keeps one line per request run made (time, verb, resource, namespace,
 * name, query): to see what a figure counted.
 */
function keepRequests(records: readonly RequestRecord[]): readonly RequestRecord[] {
  const file = process.env.DRAINBRIDGE_BENCH_SCALE_REQUESTS;
  if (file) {
    const mine = records.filter((r) => r.user === RUN_USER);
    writeFileSync(
      file,
      mine.map((r) => `${r.at} ${r.verb} ${r.resource} ${r.namespace} ${r.name} ${r.query}\n`).join(''),
    );
  }
  return records;
}

async function request(message: Extract<Message, { type: 'request' }>): Promise<void> {
  const current = sim as Simulator;
  const { requests, timeoutMs } = message;
  const byNode = new Map(requests.map((r) => [r.node, r]));
  const wanted = new Set(byNode.keys());
  const held = watchHeld(current);
  const churn = startChurn(current, message.churnPerSecond);
  const bus = await busSender(message.bus);
  const mark = current.requestLog.mark();
  const cpuAtStart = process.cpuUsage();
  const started = performance.now();
  // Both origins at once: the NodeMaintenances in one go, the notices as fast as the endpoint takes them.
  for (const r of requests) if (r.origin === 'node-maintenance') createMaintenance(current, r.node);
  await bus.put(
    'Maintenance Requested',
    requests.filter((r) => r.origin === 'cloud-notice'),
  );
  const drainedNodes = new Set<string>();
  let reported = started;
  while (drainedNodes.size < requests.length && performance.now() - started < timeoutMs) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    const fresh = newlyDrained(current, wanted, drainedNodes);
    for (const node of fresh) drainedNodes.add(node);
    await endMaintenance(
      current,
      fresh.map((node) => byNode.get(node) as ScaleRequest),
      bus,
    );
    if (performance.now() - reported > 15_000) {
      reported = performance.now();
      const seconds = Math.round((reported - started) / 1000);
      send({ type: 'progress', drained: drainedNodes.size, held: held.now(), seconds });
    }
  }
  const elapsedMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuAtStart);
  held.stop();
  const changes = churn.stop();
  bus.close();
  const drained = drainedNodes.size;
  const records = current.requestLog.all({ since: mark });
  // The log drops its oldest records past its size: a window that lost its start would count too few.
  const complete = records.length === 0 || records[0]?.seq === mark + 1;
  const ok = drained === requests.length && complete;
  const done: ScaleDone = {
    type: 'done',
    ok,
    failure: [
      drained === requests.length ? '' : `${drained} of ${requests.length} nodes drained within ${timeoutMs / 1000} s`,
      complete ? '' : 'the request log dropped requests of the window (raise requestLogSize)',
    ]
      .filter(Boolean)
      .join('; '),
    elapsedMs,
    drained,
    maxHeld: held.most(),
    maxHeldPerZone: held.mostPerZone(),
    churn: changes,
    requests: summarizeScaleRequests(keepRequests(records), RUN_USER),
    simulatorPeakRss: process.resourceUsage().maxRSS * 1024,
    simulatorCpuSeconds: (cpu.user + cpu.system) / 1e6,
  };
  send(done as unknown as Record<string, unknown>);
}

process.on('message', (message: Message) => {
  const handle = async () => {
    if (message.type === 'start') await start(message.nodes, message.speed);
    else if (message.type === 'request') await request(message);
    else {
      await sim?.stop();
      process.exit(0);
    }
  };
  handle().catch((error: unknown) => {
    send({ type: 'error', message: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  });
});
