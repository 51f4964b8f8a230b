/**
 * A maintenance window end to end (issue 10's acceptance), embedded on the simulator: the window's cron
 * (in a time zone, on the simulator's clock) fires the openWindow function, which puts one request per
 * matching node on the bus; the packaged Evacuate machine admits them one at a time (the window's one
 * slot); each node is drained, "rebooted" (the test changes its boot ID, NotReady, then Ready), the
 * forwarder's reboot source ends its maintenance, Restore uncordons it — and only then does the next
 * node start. The fourth node is not in the window and is never touched.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { V1Node } from '@kubernetes/client-node';
import type { BusClock } from '../../lib/bus/scheduler.ts';
import { KubeHttpClient } from '../../lib/clients/kube/http/client.ts';
import { createLogger } from '../../lib/log/logger.ts';
import { readLedger } from '../../lib/node/ledger.ts';
import { readPhase } from '../../lib/node/phase.ts';
import { RebootSource } from '../../lib/sources/reboot/source.ts';
import type { ForwardedEvent } from '../../lib/sources/types.ts';
import { parseWindows } from '../../lib/sources/windows/definition.ts';
import { WindowScheduler } from '../../lib/sources/windows/scheduler.ts';
import type { KubeObject } from '../../sim/index.ts';
import { bootIdOf } from '../../sim/scenarios/load.ts';
import type { ClockTimer } from '../../sim/store/types.ts';
import { waitUntil } from '../support/wait.ts';
import { evictionsSince, readNodeAsAdmin, startWorkflowSim, type WorkflowSim } from './harness.ts';

const WINDOW_NODES = ['node-1', 'node-2', 'node-3'];
const LABEL = 'drainbridge.io/maintenance-window';

const SCENARIO = {
  name: 'window',
  podStartupDelaySeconds: 1,
  nodes: [
    ...WINDOW_NODES.map((name) => ({ name, labels: { [LABEL]: 'weekly' } })),
    { name: 'node-4' }, // not in the window: where the pods go meanwhile, never touched
  ],
  namespaces: ['shop'],
  workloads: [
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: 'shop', labels: { app: 'web' } },
      spec: {
        replicas: 6,
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: { containers: [{ name: 'nginx', image: 'nginx:1.27' }] },
        },
      },
    },
  ],
};

/** Every simulated minute, in Berlin time, open for two simulated hours; one node at a time; ends on reboot. */
const WINDOWS = parseWindows(
  JSON.stringify([
    {
      name: 'weekly',
      schedule: 'cron(0/1 * * * ? *)',
      timezone: 'Europe/Berlin',
      durationMinutes: 120,
      nodeSelector: `${LABEL}=weekly`,
      maxNodes: 1,
      endsOn: 'reboot',
    },
  ]),
  'test windows',
);

const FORWARDER_RBAC = [
  'deploy/base/rbac/forwarder.yaml',
  'deploy/components/forwarder/serviceaccount.yaml',
  'deploy/components/forwarder/rbac.yaml',
];

let w: WorkflowSim;
let source: RebootSource;
let client: KubeHttpClient | undefined;
/** What happened, in order, on the simulator's clock. */
const log: { what: string; node: string; at: number }[] = [];

function simClock(): BusClock {
  return {
    now: () => new Date(w.sim.clock.now()),
    setTimeout: (callback, ms) => w.sim.clock.setTimeout(callback, ms),
    clearTimeout: (handle) => (handle as ClockTimer).cancel(),
  };
}

before(async () => {
  w = await startWorkflowSim(SCENARIO, {
    env: { DRAINBRIDGE_MAX_HELD_NODES: '3' },
    runtime: {
      onBusEvent: (detailType, detail) => {
        const { phase, nodeName, target } = detail as {
          phase?: string;
          nodeName?: string;
          target?: { nodeName?: string };
        };
        const node = nodeName ?? target?.nodeName ?? '';
        log.push({ what: phase ? `${detailType} ${phase}` : detailType, node, at: w.sim.clock.now() });
      },
    },
  });
  const root = new URL('../../', import.meta.url);
  for (const file of FORWARDER_RBAC) w.sim.apply(readFileSync(new URL(file, root), 'utf8'), file);
  // The forwarder's own (lean) client, as its ServiceAccount.
  const token = await w.sim.tokenFor('drainbridge/drainbridge-forwarder');
  client = new KubeHttpClient(
    {
      server: new URL(w.sim.url),
      tls: { ...(w.sim.caPem ? { ca: w.sim.caPem } : {}), rejectUnauthorized: true },
      authorization: async () => `Bearer ${token}`,
    },
    { retry: { baseDelayMs: 5, maxDelayMs: 20 } },
  );
  source = new RebootSource({ client, logger: createLogger('test.reboot') });
  // The forwarder's publishing path, reduced to what this test needs: offered events onto the bus.
  await source.start({
    offer: (event: ForwardedEvent) => {
      const node = (event.detail as { target?: { nodeName?: string } }).target?.nodeName ?? '';
      log.push({ what: `offered ${event.detailType}`, node, at: w.sim.clock.now() });
      void w.runtime.put(event.detailType, event.detail as never);
    },
  });
  source.lead();
});
after(async () => {
  await source?.stop();
  client?.close();
  await w?.stop();
});

const NODES = { group: '', resource: 'nodes' };

/** What a reboot looks like from the API: the kubelet reports a new boot ID, NotReady, then Ready again. */
function reboot(nodeName: string, ready: boolean): void {
  w.sim.store.mutate(NODES, { name: nodeName }, (node: KubeObject) => {
    const status = (node as V1Node).status ?? {};
    status.nodeInfo = { ...(status.nodeInfo as NonNullable<typeof status.nodeInfo>), bootID: bootIdOf(nodeName, 1) };
    status.conditions = (status.conditions ?? []).map((c) =>
      c.type === 'Ready'
        ? { ...c, status: ready ? 'True' : 'False', reason: ready ? 'KubeletReady' : 'KubeletNotReady' }
        : c,
    );
    (node as V1Node).status = status;
    return undefined;
  });
}

async function heldByWindow(): Promise<string[]> {
  const held: string[] = [];
  for (const name of WINDOW_NODES) {
    if (Object.keys(readLedger(await readNodeAsAdmin(w, name)).holds).length > 0) held.push(name);
  }
  return held;
}

const at = (what: string, node: string) => log.find((e) => e.what === what && e.node === node)?.at;

describe('a maintenance window over 3 nodes with one slot', () => {
  it('drains, reboots, waits for Ready, restores each node before the next starts; node-4 untouched', async () => {
    const mark = w.sim.requestLog.mark();
    let opened = 0;
    const scheduler = new WindowScheduler(WINDOWS, simClock(), (window, scheduledTime) => {
      if (opened++ > 0) return; // one occurrence is the test
      scheduler.stop();
      void w.runtime.openWindow(window, scheduledTime);
    });
    scheduler.start();
    await waitUntil(
      'the window opened',
      () => log.filter((e) => e.what === 'Maintenance Requested').length === 3,
      10_000,
    );
    const order: string[] = [];
    for (let turn = 0; turn < WINDOW_NODES.length; turn++) {
      await waitUntil(
        `a node of the window is drained (turn ${turn + 1})`,
        () => log.some((e) => e.what === 'Evacuation Succeeded' && !order.includes(e.node)),
        30_000,
      );
      const node = log.find((e) => e.what === 'Evacuation Succeeded' && !order.includes(e.node))?.node ?? '';
      order.push(node);
      assert.deepEqual(await heldByWindow(), [node], `only ${node} is in maintenance`);
      assert.equal(readPhase(await readNodeAsAdmin(w, node)), 'NodeDrained');
      const hold = Object.values(readLedger(await readNodeAsAdmin(w, node)).holds)[0];
      assert.equal(hold?.bootID, bootIdOf(node, 0), 'the hold recorded the boot ID');
      assert.equal(hold?.endsOn, 'reboot');

      reboot(node, false);
      log.push({ what: 'test: rebooted, NotReady', node, at: w.sim.clock.now() });
      reboot(node, true);
      log.push({ what: 'test: Ready', node, at: w.sim.clock.now() });
      await waitUntil(
        `${node} is restored`,
        () => log.some((e) => e.what === 'Node Restored' && e.node === node),
        30_000,
      );
      assert.notEqual((await readNodeAsAdmin(w, node)).spec?.unschedulable, true, `${node} uncordoned`);
    }
    assert.deepEqual([...order].sort(), WINDOW_NODES, 'each node of the window once');
    for (let i = 0; i < order.length; i++) {
      const node = order[i] as string;
      const ready = at('test: Ready', node) ?? Number.POSITIVE_INFINITY;
      const ended = at('offered Maintenance Ended', node) ?? 0;
      assert.ok(ended >= ready, `${node}: its maintenance ended only once it was Ready after the reboot`);
      const next = order[i + 1];
      if (!next) continue;
      const restored = at('Node Restored', node) ?? Number.POSITIVE_INFINITY;
      const nextCordoned = at('Evacuation Progress NodeCordoned', next) ?? 0;
      assert.ok(nextCordoned > restored, `${next} started only after ${node} was restored`);
    }
    const node4 = await readNodeAsAdmin(w, 'node-4');
    assert.deepEqual(readLedger(node4), { holds: {}, released: {} }, 'node-4 was never held');
    assert.ok(!log.some((e) => e.node === 'node-4'), 'no request for node-4');
    assert.ok(evictionsSince(w, mark).length > 0, 'the window nodes were drained by evictions');
    await w.runtime.settle();
  });
});

describe('a window that closes before all its nodes started', () => {
  it('starts nothing after it closed; the node it started stays in maintenance until the operator ends it', async () => {
    const [weekly] = WINDOWS;
    assert.ok(weekly);
    const window = { ...weekly, name: 'short', durationMinutes: 10, endsOn: 'operator' as const };
    const opened = await w.runtime.openWindow(window, new Date(w.sim.clock.now()));
    assert.equal(opened.requested.length, 3);
    await waitUntil(
      'one node of the window is drained',
      async () => (await heldByWindowNamed('short')).length === 1,
      30_000,
    );
    const [started] = await heldByWindowNamed('short');
    await waitUntil('the window closed', () => w.sim.clock.now() > Date.parse(opened.closesAt), 20_000);
    const others = opened.requested.filter((id) => !id.endsWith(`:${started}`));
    for (const requestId of others) {
      const execution = w.runtime.executionsFor(requestId).find((e) => e.machine === 'evacuate');
      assert.ok(execution);
      const outcome = await execution.outcome;
      assert.ok(outcome.ok, `${requestId} ended without failing (not started)`);
    }
    for (const name of WINDOW_NODES.filter((n) => n !== started)) {
      const node = await readNodeAsAdmin(w, name);
      assert.notEqual(node.spec?.unschedulable, true, `${name} was not cordoned`);
      assert.deepEqual(readLedger(node).holds, {}, `${name} was not held`);
    }
    assert.deepEqual(await heldByWindowNamed('short'), [started], 'the started node is still in maintenance');

    const requestId = opened.requested.find((id) => id.endsWith(`:${started}`)) as string;
    await w.runtime.put('Maintenance Ended', {
      version: '1',
      requestId,
      requester: 'operator@example.com',
      origin: 'schedule',
      target: { nodeName: started as string },
    });
    await waitUntil(`${started} is restored`, async () => (await heldByWindowNamed('short')).length === 0, 30_000);
    await w.runtime.settle();
  });
});

async function heldByWindowNamed(name: string): Promise<string[]> {
  const held: string[] = [];
  for (const node of WINDOW_NODES) {
    const holds = Object.values(readLedger(await readNodeAsAdmin(w, node)).holds);
    if (holds.some((hold) => hold.requester === `maintenance-window/${name}`)) held.push(node);
  }
  return held;
}
