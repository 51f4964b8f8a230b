/**
 * Topology spread, end to end on the simulator: with DRAINBRIDGE_SPREAD_LIMITS=zone=1 and six nodes in
 * three zones asked for at once, never two nodes of one zone are held together; with
 * DRAINBRIDGE_MIN_SCHEDULABLE a pool is never left with fewer schedulable nodes than its minimum. Both
 * are read from what the simulated cluster saw (every change to a node, in order, and the request log),
 * not from drainbridge's own account. The cluster-wide limit is set wide so that only the spread rules
 * can hold a request back.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { TrackedExecution } from '../../embedded/runtime.ts';
import { isSlotWait } from '../../lib/errors/registry.ts';
import type { KubeObject } from '../../sim/store/types.ts';
import { runCli } from '../cli/run-cli.ts';
import { ledgerHolds } from '../support/invariants.ts';
import { DRAINBRIDGE_SA } from '../support/request-log.ts';
import { waitUntil } from '../support/wait.ts';
import { failureOf, maintenanceEnded, maintenanceRequested, startWorkflowSim, type WorkflowSim } from './harness.ts';
import { IDLE_NODES_SCENARIO } from './scenario.ts';

const NODES = { group: '', resource: 'nodes' };
const ZONE = 'topology.kubernetes.io/zone';
const POOL = 'pool';

function scenarioOf(name: string, nodes: { name: string; labels: Record<string, string> }[]) {
  return { ...IDLE_NODES_SCENARIO, name, nodes };
}

const SIX_IN_THREE_ZONES = scenarioOf(
  'spread-zones',
  ['a', 'b', 'c'].flatMap((zone) =>
    [1, 2].map((n) => ({ name: `node-${zone}${n}`, labels: { [ZONE]: `zone-${zone}` } })),
  ),
);

const THREE_WORKERS = scenarioOf('spread-pool', [
  { name: 'worker-1', labels: { [POOL]: 'workers' } },
  { name: 'worker-2', labels: { [POOL]: 'workers' } },
  { name: 'worker-3', labels: { [POOL]: 'workers' } },
]);

const labelOf = (node: KubeObject, key: string) => node.metadata.labels?.[key] ?? '';
const isCordoned = (node: KubeObject) => (node.spec as { unschedulable?: boolean } | undefined)?.unschedulable === true;

/** Calls `sample` with every node on every change to a node, in order (exact, not on a timer). */
function watchNodes(w: WorkflowSim, sample: (nodes: KubeObject[]) => void): () => void {
  const read = () => sample(w.sim.store.list(NODES).items);
  read();
  const watch = w.sim.store.watch(NODES, { resourceVersion: w.sim.store.currentResourceVersion() }, read);
  return () => watch.stop();
}

function waitMessages(w: WorkflowSim, execution: TrackedExecution): string[] {
  return w.taskCalls
    .filter((call) => call.executionId === execution.id && isSlotWait(call.error?.name))
    .map((call) => call.error?.message ?? '');
}

async function requestAll(w: WorkflowSim, nodes: readonly string[]): Promise<Map<string, TrackedExecution>> {
  await Promise.all(nodes.map((node) => w.runtime.put('Maintenance Requested', maintenanceRequested(node))));
  return new Map(
    nodes.map((node) => {
      const execution = w.runtime.executionsFor(`req-${node}`).at(-1);
      assert.ok(execution, `an Evacuate started for ${node}`);
      return [node, execution];
    }),
  );
}

/** Whether `execution` has settled; throws with its failure when it failed. */
async function settledOk(execution: TrackedExecution): Promise<boolean> {
  const pending = Symbol('pending');
  const outcome = await Promise.race([execution.outcome, Promise.resolve(pending)]);
  if (outcome === pending) return false;
  const settled = outcome as Awaited<TrackedExecution['outcome']>;
  assert.equal(settled.ok, true, `${failureOf(settled).name}: ${failureOf(settled).message}`);
  return true;
}

/** A drainbridge command as drainbridge's ServiceAccount, with the test's settings: its text output (exit 0). */
async function cliText(w: WorkflowSim, args: string[], env: Record<string, string> = {}): Promise<string> {
  const kubeconfig = join(mkdtempSync(join(tmpdir(), 'drainbridge-spread-')), 'kubeconfig');
  writeFileSync(kubeconfig, w.sim.kubeconfig(await w.sim.tokenFor('drainbridge/drainbridge')));
  const result = await runCli([...args, '--kubeconfig', kubeconfig], env);
  assert.equal(result.code, 0, `${args.join(' ')}\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

const statusText = (w: WorkflowSim) => cliText(w, ['status']);

/** A node of `zone` that drainbridge does not hold now (the one a second request for the zone waits on). */
function unheldOf(w: WorkflowSim, zone: string): string {
  const node = w.sim.store.list(NODES).items.find((n) => labelOf(n, ZONE) === zone && ledgerHolds(n) === 'none');
  assert.ok(node, `a node of ${zone} is not held`);
  return node.metadata.name ?? '';
}

/** Restores each node as soon as its evacuation is done, until every request has been evacuated. */
async function restoreAsTheyFinish(w: WorkflowSim, executions: Map<string, TrackedExecution>): Promise<void> {
  const pending = new Set(executions.keys());
  while (pending.size > 0) {
    let done: string | undefined;
    await waitUntil(`one of ${[...pending].join(', ')} is evacuated`, async () => {
      for (const node of pending) {
        if (await settledOk(executions.get(node) as TrackedExecution)) {
          done = node;
          return true;
        }
      }
      return false;
    });
    pending.delete(done as string);
    await w.runtime.put('Maintenance Ended', maintenanceEnded(done as string));
  }
}

const SPREAD_ENV = { DRAINBRIDGE_MAX_HELD_NODES: '6', DRAINBRIDGE_SPREAD_LIMITS: `${ZONE}=1` };

describe('topology spread: one node per zone (DRAINBRIDGE_SPREAD_LIMITS)', () => {
  let w: WorkflowSim;
  before(async () => {
    w = await startWorkflowSim(SIX_IN_THREE_ZONES, { env: SPREAD_ENV });
  });
  after(async () => {
    await w?.stop();
  });

  it('six nodes in three zones asked at once: never two of one zone held together, and every node evacuated', async () => {
    const mark = w.sim.requestLog.mark();
    const peakPerZone = new Map<string, { count: number; nodes: string[] }>();
    const stop = watchNodes(w, (nodes) => {
      for (const zone of ['zone-a', 'zone-b', 'zone-c']) {
        const held = nodes.filter((n) => labelOf(n, ZONE) === zone && ledgerHolds(n) !== 'none');
        const names = held.map((n) => n.metadata.name ?? '');
        if (held.length > (peakPerZone.get(zone)?.count ?? 0))
          peakPerZone.set(zone, { count: held.length, nodes: names });
      }
    });
    const names = SIX_IN_THREE_ZONES.nodes.map((node) => node.name);
    const executions = await requestAll(w, names);
    // The second node of each zone waits, saying which node of its zone is in maintenance.
    await waitUntil('a second node of a zone waits on the spread limit', () =>
      [...executions.values()].some((e) =>
        waitMessages(w, e).some((m) =>
          /topology\.kubernetes\.io\/zone=zone-[abc] already has 1 node\(s\) in maintenance \(node-[abc][12]\)/.test(m),
        ),
      ),
    );
    // Nothing is restored yet: `status` shows the waiting requests and why they wait.
    assert.match(
      await statusText(w),
      /^ {5}waiting: topology\.kubernetes\.io\/zone=zone-[abc] already has 1 node\(s\) in maintenance \(node-[abc][12]\)/m,
    );
    // `drainbridge plan` for the zone's other node says it would wait, and on what.
    const plan = await cliText(w, ['plan', unheldOf(w, 'zone-a'), '--ignore-daemonsets'], SPREAD_ENV);
    assert.match(
      plan,
      /^Admission now: would wait \(topology\.kubernetes\.io\/zone=zone-a already has 1 node\(s\) in maintenance \(node-a[12]\)/m,
    );
    await restoreAsTheyFinish(w, executions);
    await w.runtime.settle();
    stop();
    for (const zone of ['zone-a', 'zone-b', 'zone-c']) {
      const peak = peakPerZone.get(zone);
      assert.equal(peak?.count, 1, `${zone}: at most one node held at once (peak: ${peak?.nodes.join(', ')})`);
    }
    // The request log: drainbridge wrote (cordoned) every one of the six nodes.
    const written = new Set(
      w.sim.requestLog.writes({ since: mark, user: DRAINBRIDGE_SA, resource: 'nodes' }).map((record) => record.name),
    );
    assert.deepEqual([...written].sort(), [...names].sort(), 'every node was taken into maintenance in turn');
  });
});

describe('never the last nodes of a pool (DRAINBRIDGE_MIN_SCHEDULABLE)', () => {
  let w: WorkflowSim;
  before(async () => {
    w = await startWorkflowSim(THREE_WORKERS, {
      env: { DRAINBRIDGE_MAX_HELD_NODES: '3', DRAINBRIDGE_MIN_SCHEDULABLE: `${POOL}=workers=2` },
    });
  });
  after(async () => {
    await w?.stop();
  });

  it('three workers with a minimum of two: one in maintenance at a time, the others wait saying why', async () => {
    let fewest = Number.POSITIVE_INFINITY;
    const stop = watchNodes(w, (nodes) => {
      const schedulable = nodes.filter((n) => labelOf(n, POOL) === 'workers' && !isCordoned(n)).length;
      fewest = Math.min(fewest, schedulable);
    });
    const executions = await requestAll(
      w,
      THREE_WORKERS.nodes.map((node) => node.name),
    );
    await waitUntil('a worker waits on the pool minimum', () =>
      [...executions.values()].some((e) =>
        waitMessages(w, e).some((m) =>
          /only 1 schedulable node\(s\) would remain in pool "pool=workers" \(worker-[123]\); at least 2 must stay/.test(
            m,
          ),
        ),
      ),
    );
    assert.match(
      await statusText(w),
      /^ {5}waiting: only 1 schedulable node\(s\) would remain in pool "pool=workers"/m,
    );
    await restoreAsTheyFinish(w, executions);
    await w.runtime.settle();
    stop();
    assert.equal(fewest, 2, 'two workers stayed schedulable at every moment');
  });
});
