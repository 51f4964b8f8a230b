/**
 * Stopping the forwarder, whatever its informers are doing: `stop()` returns within its grace period and
 * leaves nothing behind — no request in flight, no watch open (or opened later), no timer. Each case
 * catches an informer at one moment, made observable by the simulator's faults: a list held unanswered, a
 * watch held before its headers, a restart waiting out its backoff, an open watch. The last case stops a
 * real `drainbridge forwarder` process with SIGTERM while its list is held: it must exit by itself (an
 * open socket or a pending timer would keep it alive).
 *
 * Then the graceful part, with two real replicas: events queued while the bus was away (the leader's
 * backoff grown past its grace period) reach the bus once it answers, within the grace period after
 * SIGTERM; the Lease is released (its holder cleared, seen on a watch of the Lease) and the follower takes
 * over at its next read instead of after the lease duration.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import type { V1Lease } from '@kubernetes/client-node';
import { InProcessBus } from '../../lib/bus/in-process-bus.ts';
import { InProcessPublisher } from '../../lib/bus/in-process-publisher.ts';
import { ResilientInformer } from '../../lib/clients/kube/http/informer.ts';
import { createLogger } from '../../lib/log/logger.ts';
import { Forwarder } from '../../lib/sources/forwarder/forwarder.ts';
import { electionTimings } from '../../lib/sources/forwarder/leader.ts';
import { loadForwarderSettings } from '../../lib/sources/forwarder/settings.ts';
import { type EventBridgeEndpoint, startEventBridgeEndpoint } from '../../sim/eventbridge/endpoint.ts';
import { waitUntil } from '../support/wait.ts';
import { connectForwarderKube } from './connect.ts';
import {
  DrainbridgeProcess,
  FORWARDER_USER,
  metric,
  scrape,
  spreadScenario,
  startTestCluster,
  type TestCluster,
} from './harness.ts';

const user = FORWARDER_USER;
const GRACE_MS = 1000;
/** What stop() may take beyond its grace period (a loaded machine; the Lease release is one request). */
const STOP_SLACK_MS = 4000;

describe('forwarder stop', () => {
  let cluster: TestCluster;
  let forwarder: Forwarder | undefined;
  let heal: (() => void) | undefined;

  before(async () => {
    // Speed 1: the server's watch timeout (300 s) is far beyond every wait here.
    cluster = await startTestCluster({ ...spreadScenario(3, { replicas: 0, speed: 1 }), workloads: [] });
  });
  afterEach(async () => {
    heal?.();
    heal = undefined;
    await forwarder?.stop(GRACE_MS);
    forwarder = undefined;
  });
  after(async () => {
    await cluster?.stop();
  });

  async function startForwarder(backoff?: { baseMs: number; maxMs: number }): Promise<Forwarder> {
    const bus = new InProcessBus({ rules: [], busName: 'drainbridge', start: async () => undefined });
    // A long request timeout: only stop() may end a held request here.
    const kube = await connectForwarderKube(await cluster.kubeconfigFor('drainbridge-forwarder'), {
      timeoutMs: 120_000,
    });
    forwarder = new Forwarder({
      ...kube,
      settings: loadForwarderSettings({ DRAINBRIDGE_CORDON_EVACUATES: 'all' }),
      namespace: 'drainbridge',
      sink: new InProcessPublisher(bus),
      logger: createLogger('forwarder-stop-test', 'ERROR'),
      serveOps: false,
      ...(backoff ? { informerBackoff: backoff } : {}),
    });
    await forwarder.start();
    return forwarder;
  }

  /** Stops `running` and checks the promise: within the grace period, and nothing of the forwarder's left open. */
  async function stopAndCheck(running: Forwarder): Promise<void> {
    const stoppedAt = Date.now();
    await running.stop(GRACE_MS);
    forwarder = undefined;
    const took = Date.now() - stoppedAt;
    assert.ok(took <= GRACE_MS + STOP_SLACK_MS, `stop() took ${took} ms`);
    // The client closes its connections in stop(); the server sees them go a moment later. A watch left
    // open or opened after stop() (what client-node's ListWatch did when stopped during a list or while a
    // watch was being opened) would stay open here until the server's watch timeout.
    await waitUntil(
      'no request of the forwarder held or watching',
      () => cluster.sim.faults.heldRequests({ user }) === 0 && cluster.sim.faults.openWatches({ user }) === 0,
      10_000,
    );
  }

  it('during a list: the list is abandoned and no watch follows it', async () => {
    heal = cluster.sim.faults.holdRequests({ user, verbs: ['list'], resources: ['nodes'] });
    const running = await startForwarder();
    await waitUntil('the node list is in flight', () => cluster.sim.faults.heldRequests({ user }) > 0);
    await stopAndCheck(running);
  });

  it('while a watch is being opened: it is abandoned before its first answer', async () => {
    heal = cluster.sim.faults.holdRequests({ user, verbs: ['watch'], resources: ['nodes'] });
    const running = await startForwarder();
    await waitUntil('the node watch is in flight', () => cluster.sim.faults.heldRequests({ user }) > 0);
    await stopAndCheck(running);
  });

  it('during a restart backoff: the timer goes, no restart follows', async () => {
    heal = cluster.sim.faults.failRequests({ user, verbs: ['list'], resources: ['nodes'] });
    const running = await startForwarder({ baseMs: 60_000, maxMs: 60_000 });
    const failedBefore = cluster.sim.faults.injected;
    await waitUntil('the node list failed', () => cluster.sim.faults.injected > failedBefore);
    await stopAndCheck(running);
  });

  it('with its watches open: they are closed', async () => {
    const running = await startForwarder();
    await waitUntil(
      'synced and watching nodes',
      () => running.nodes.synced && cluster.sim.faults.openWatches({ user }) >= 1,
    );
    await stopAndCheck(running);
  });

  it('drainbridge forwarder stopped by SIGTERM while its list is held exits 0 by itself, within its grace', async () => {
    heal = cluster.sim.faults.holdRequests({ user, verbs: ['list'], resources: ['nodes'] });
    const child = new DrainbridgeProcess(
      [
        'forwarder',
        '--kubeconfig',
        await cluster.kubeconfigFor('drainbridge-forwarder'),
        '--metrics-address',
        '127.0.0.1:0',
        '--shutdown-grace',
        '2',
      ],
      { AWS_REGION: 'eu-west-1', AWS_ACCESS_KEY_ID: 'AKIDTEST', AWS_SECRET_ACCESS_KEY: 'test-secret' },
    );
    await waitUntil('the process lists nodes', () => cluster.sim.faults.heldRequests({ user }) > 0, 60_000, {
      context: () => child.output.slice(-10).join('\n'),
    });
    child.kill('SIGTERM');
    const exit = await Promise.race([
      child.exited,
      new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 2000 + 15_000).unref()),
    ]);
    if (!exit) child.kill('SIGKILL');
    assert.deepEqual(exit, { code: 0, signal: null }, `exited by itself:\n${child.output.slice(-10).join('\n')}`);
    await waitUntil('its held list is gone', () => cluster.sim.faults.heldRequests({ user }) === 0, 10_000);
  });
});

describe('forwarder SIGTERM with events queued and a follower waiting', () => {
  const LEASE_SECONDS = 15;
  const GRACE_SECONDS = 3;
  const { retryEveryMs } = electionTimings(LEASE_SECONDS * 1000);
  /** Beyond the follower's next read: the takeover's requests and its log line on a shared machine. */
  const TAKEOVER_SLACK_MS = 1500;
  const NODES = ['node-1', 'node-2', 'node-3'];
  let cluster: TestCluster;
  const buses: InProcessBus[] = [];
  const endpoints: EventBridgeEndpoint[] = [];
  const replicas: DrainbridgeProcess[] = [];
  let leases: ResilientInformer<V1Lease> | undefined;
  let watcher: Awaited<ReturnType<typeof connectForwarderKube>> | undefined;

  before(async () => {
    cluster = await startTestCluster({ ...spreadScenario(3, { replicas: 0, speed: 1 }), workloads: [] });
  });
  after(async () => {
    for (const replica of replicas) replica.kill('SIGKILL');
    await Promise.all(replicas.map((r) => r.exited));
    await leases?.stop();
    watcher?.client.close();
    for (const endpoint of endpoints) await endpoint.close();
    await cluster?.stop();
  });

  /** A replica publishing to its own PutEvents endpoint (so what each one put on the bus is told apart). */
  async function replica(
    identity: string,
  ): Promise<{ process: DrainbridgeProcess; bus: InProcessBus; endpoint: EventBridgeEndpoint }> {
    const bus = new InProcessBus({ rules: [], busName: 'drainbridge', start: async () => undefined });
    const endpoint = await startEventBridgeEndpoint(bus);
    buses.push(bus);
    endpoints.push(endpoint);
    const process = new DrainbridgeProcess(
      [
        'forwarder',
        '--kubeconfig',
        await cluster.kubeconfigFor('drainbridge-forwarder'),
        '--cordon-evacuates',
        'all',
        '--metrics-address',
        '127.0.0.1:0',
        '--identity',
        identity,
        '--shutdown-grace',
        String(GRACE_SECONDS),
      ],
      {
        AWS_ENDPOINT_URL_EVENTBRIDGE: endpoint.url,
        AWS_REGION: 'eu-west-1',
        AWS_ACCESS_KEY_ID: 'AKIDTEST',
        AWS_SECRET_ACCESS_KEY: 'test-secret',
        DRAINBRIDGE_FORWARDER_LEASE_SECONDS: String(LEASE_SECONDS),
      },
    );
    replicas.push(process);
    return { process, bus, endpoint };
  }

  it('flushes the queued events within its grace, releases the Lease, and the follower takes over at its next read', async () => {
    const a = await replica('fwd-a');
    await a.process.waitForLog('leader election: this replica leads', {}, 60_000);
    const b = await replica('fwd-b');
    const bOps = await b.process.opsUrl();
    await waitUntil('fwd-b is ready', async () => (await fetch(`${bOps}/readyz`)).status === 200);
    // Every version of the Lease, as the cluster admin watches it.
    const adminKubeconfig = join(cluster.dir, 'admin.kubeconfig');
    writeFileSync(adminKubeconfig, cluster.sim.kubeconfig(), { mode: 0o600 });
    watcher = await connectForwarderKube(adminKubeconfig);
    const holders: string[] = [];
    leases = new ResilientInformer<V1Lease>({
      resource: 'leases',
      path: '/apis/coordination.k8s.io/v1/namespaces/drainbridge/leases',
      client: watcher.client,
      logger: createLogger('lease-watch', 'ERROR'),
    });
    leases.subscribe({
      onChange: (_type, lease) => {
        if (lease.metadata?.name !== 'drainbridge-forwarder') return;
        const holder = lease.spec?.holderIdentity ?? '';
        if (holders.at(-1) !== holder) holders.push(holder);
      },
    });
    leases.start();
    await leases.whenSynced();
    assert.deepEqual(holders, ['fwd-a'], 'the list reported the Lease held by fwd-a');

    // The bus goes away; three cordons wait in fwd-a's queue while its backoff grows past the grace period
    // (0.5, 1, 2, then 4 s > 3 s).
    const aOps = await a.process.opsUrl();
    const heal = a.endpoint.failCalls();
    for (const node of NODES) assert.equal((await cluster.kubectl.run(['cordon', node])).code, 0);
    await waitUntil(
      'three events queued, four sends failed',
      async () => {
        const text = await scrape(aOps);
        return (
          metric(text, 'drainbridge_forwarder_queue_depth') === NODES.length &&
          metric(text, 'drainbridge_forwarder_publish_failures_total', { kind: 'transient' }) >= 4 * NODES.length
        );
      },
      30_000,
    );
    assert.equal(a.bus.accepted.length, 0, 'nothing reached the bus yet');

    heal();
    a.process.kill('SIGTERM');
    const exit = await Promise.race([
      a.process.exited,
      new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), GRACE_SECONDS * 1000 + 15_000).unref()),
    ]);
    const exitedAt = Date.now();
    assert.deepEqual(exit, { code: 0, signal: null }, a.process.output.slice(-10).join('\n'));
    const flushed = a.bus.accepted
      .filter((e) => e['detail-type'] === 'Node Cordoned')
      .map((e) => (e.detail.target as { nodeName: string }).nodeName)
      .sort();
    assert.deepEqual(flushed, NODES, 'the queued events reached the bus before fwd-a exited');
    assert.deepEqual(a.process.logs('stopping with events still queued; the next leader derives them again'), []);

    await b.process.waitForLog('leader election: this replica leads', {}, LEASE_SECONDS * 1000 + 10_000);
    const takeoverMs =
      Date.parse(String(b.process.logs('leader election: this replica leads')[0]?.timestamp)) - exitedAt;
    assert.ok(
      takeoverMs <= retryEveryMs + TAKEOVER_SLACK_MS,
      `fwd-b led ${takeoverMs} ms after fwd-a exited (its next read: ≤ ${retryEveryMs} ms; the lease duration is ${LEASE_SECONDS} s)`,
    );
    await waitUntil('the watch saw fwd-b take the Lease', () => holders.at(-1) === 'fwd-b');
    assert.deepEqual(holders, ['fwd-a', '', 'fwd-b'], 'fwd-a released the Lease (holder cleared) before fwd-b took it');
  });
});
