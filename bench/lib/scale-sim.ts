/**
 * The scale section's simulator, as a child process of the benchmark (so that its peak RSS is its own and
 * `drainbridge run` talks to it over the network as to a real apiserver). Driven over the IPC channel:
 *
 *   parent → { type: 'start', nodes, speed }        child → { type: 'ready', runKubeconfig, adminKubeconfig }
 *   parent → { type: 'request', nodes: [names] }    child → { type: 'done', … } when every request drained
 *   parent → { type: 'stop' }                       child exits
 *
 * The maintenance requests are medik8s NodeMaintenances, created straight in the store at once. While
 * they run, the child counts the nodes drainbridge holds (ledger) at every node change: the most at once
 * is what the concurrency limit must keep.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isHeld, readLedger } from '../../lib/node/ledger.ts';
import { whenSettled } from '../../sim/scenarios/index.ts';
import type { RequestRecord } from '../../sim/server/request-log.ts';
import { type Simulator, startSimulator } from '../../sim/simulator.ts';
import type { KubeObject } from '../../sim/store/types.ts';
import { countKinds, type RequestKinds } from './requests.ts';
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
const NODE_MAINTENANCES = { group: 'nodemaintenance.medik8s.io', resource: 'nodemaintenances' };
const EVACUATIONS = { group: 'drainbridge.io', resource: 'evacuations' };

/** What the run user asked while the requests ran. */
export interface ScaleRequests {
  readonly total: number;
  readonly writes: number;
  readonly kinds: RequestKinds;
  /** Lists of every node (no label or field selector). */
  readonly nodeLists: number;
  /** Lists of pods in every namespace without a field selector: every pod of the cluster. */
  readonly clusterPodLists: number;
  /** Reads of the admission Lease: one per admission attempt. */
  readonly admissionAttempts: number;
}

export interface ScaleDone {
  readonly type: 'done';
  readonly ok: boolean;
  readonly failure: string;
  readonly elapsedMs: number;
  readonly drained: number;
  readonly maxHeld: number;
  readonly requests: ScaleRequests;
  /** The simulator process's peak RSS, in bytes. */
  readonly simulatorPeakRss: number;
}

type Message =
  | { type: 'start'; nodes: number; speed: number }
  | { type: 'request'; nodes: string[]; timeoutMs: number }
  | { type: 'stop' };

let sim: Simulator | undefined;

function send(message: Record<string, unknown>): void {
  process.send?.(message);
}

function isWhole(record: RequestRecord): boolean {
  return !/[?&](labelSelector|fieldSelector)=/.test(record.query);
}

function summarizeRequests(records: readonly RequestRecord[]): ScaleRequests {
  const mine = records.filter((record) => record.user === RUN_USER);
  const lists = (resource: string) =>
    mine.filter((r) => r.verb === 'list' && r.resource === resource && r.namespace === '' && isWhole(r)).length;
  return {
    total: mine.length,
    writes: mine.filter((r) => r.write && !(r.resource === 'pods' && r.subresource === 'eviction')).length,
    kinds: countKinds(mine),
    nodeLists: lists('nodes'),
    clusterPodLists: lists('pods'),
    admissionAttempts: mine.filter((r) => r.verb === 'get' && r.name === 'drainbridge-admission').length,
  };
}

async function start(nodes: number, speed: number): Promise<void> {
  sim = await startSimulator({ scenario: scaleScenario(nodes, speed), speed });
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

function nodeHeld(node: KubeObject): boolean {
  return isHeld(readLedger(node as never));
}

function heldNow(current: Simulator): number {
  return current.store.scan(NODES).filter(nodeHeld).length;
}

/**
 * The nodes held now, kept from the node watch's events (one node each): counting every node of the
 * cluster at every node change would cost the simulator more than the API requests it serves.
 */
function watchHeld(current: Simulator): { readonly most: () => number; readonly stop: () => void } {
  const held = new Set(
    current.store
      .scan(NODES)
      .filter(nodeHeld)
      .map((node) => node.metadata.name ?? ''),
  );
  let most = held.size;
  const watch = current.store.watch(NODES, {}, (event) => {
    if (event.type === 'BOOKMARK' || event.type === 'ERROR') return;
    const name = event.object.metadata?.name ?? '';
    if (event.type !== 'DELETED' && nodeHeld(event.object)) held.add(name);
    else held.delete(name);
    most = Math.max(most, held.size);
  });
  return { most: () => most, stop: () => watch.stop() };
}

/** The wanted nodes whose evacuation reached NodeDrained now (not counted before: they are in `seen`). */
function newlyDrained(current: Simulator, nodes: ReadonlySet<string>, seen: ReadonlySet<string>): string[] {
  return current.store
    .list(EVACUATIONS)
    .items.map((record) => record as unknown as { spec?: { nodeName?: string }; status?: { phase?: string } })
    .filter((evacuation) => evacuation.status?.phase === 'NodeDrained')
    .map((evacuation) => evacuation.spec?.nodeName ?? '')
    .filter((node) => nodes.has(node) && !seen.has(node));
}

/**
 * A drained node's maintenance is over: its NodeMaintenance goes (drainbridge restores the node and
 * releases the hold), so that a request waiting for one of the limited slots is admitted — as an operator
 * ending maintenance node by node would.
 */
function endMaintenance(current: Simulator, node: string): void {
  try {
    current.store.delete(NODE_MAINTENANCES, { name: `nm-${node}` });
  } catch {
    // already gone
  }
}

async function request(nodes: readonly string[], timeoutMs: number): Promise<void> {
  const current = sim as Simulator;
  const wanted = new Set(nodes);
  const held = watchHeld(current);
  const mark = current.requestLog.mark();
  const started = performance.now();
  for (const node of nodes) {
    current.store.create(NODE_MAINTENANCES, {
      apiVersion: 'nodemaintenance.medik8s.io/v1beta1',
      kind: 'NodeMaintenance',
      metadata: { name: `nm-${node}` },
      spec: { nodeName: node, reason: 'benchmark: scale' },
    });
  }
  const drainedNodes = new Set<string>();
  let drained = 0;
  let reported = started;
  while (drained < nodes.length && performance.now() - started < timeoutMs) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    for (const node of newlyDrained(current, wanted, drainedNodes)) {
      drainedNodes.add(node);
      endMaintenance(current, node);
    }
    drained = drainedNodes.size;
    if (performance.now() - reported > 15_000) {
      reported = performance.now();
      send({ type: 'progress', drained, held: heldNow(current), seconds: Math.round((reported - started) / 1000) });
    }
  }
  const elapsedMs = performance.now() - started;
  held.stop();
  const ok = drained === nodes.length;
  const done: ScaleDone = {
    type: 'done',
    ok,
    failure: ok ? '' : `${drained} of ${nodes.length} nodes drained within ${timeoutMs / 1000} s`,
    elapsedMs,
    drained,
    maxHeld: held.most(),
    requests: summarizeRequests(current.requestLog.all({ since: mark })),
    simulatorPeakRss: process.resourceUsage().maxRSS * 1024,
  };
  send(done as unknown as Record<string, unknown>);
}

process.on('message', (message: Message) => {
  const handle = async () => {
    if (message.type === 'start') await start(message.nodes, message.speed);
    else if (message.type === 'request') await request(message.nodes, message.timeoutMs);
    else {
      await sim?.stop();
      process.exit(0);
    }
  };
  handle().catch((error: unknown) => {
    send({ type: 'error', message: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  });
});
