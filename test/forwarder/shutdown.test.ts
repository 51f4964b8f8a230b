/**
 * Stopping the forwarder, whatever its informers are doing: `stop()` returns within its grace period and
 * leaves nothing behind — no request in flight, no watch open (or opened later), no timer. Each case
 * catches an informer at one moment, made observable by the simulator's faults: a list held unanswered, a
 * watch held before its headers, a restart waiting out its backoff, an open watch. The last case stops a
 * real `drainbridge forwarder` process with SIGTERM while its list is held: it must exit by itself (an
 * open socket or a pending timer would keep it alive).
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { InProcessBus } from '../../lib/bus/in-process-bus.ts';
import { Forwarder } from '../../lib/forwarder/forwarder.ts';
import { loadForwarderSettings } from '../../lib/forwarder/settings.ts';
import { InProcessSink } from '../../lib/forwarder/sinks.ts';
import { createLogger } from '../../lib/log/logger.ts';
import { connectForwarderKube } from './connect.ts';
import {
  DrainbridgeProcess,
  FORWARDER_USER,
  spreadScenario,
  startTestCluster,
  type TestCluster,
  waitUntil,
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
      sink: new InProcessSink(bus),
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
    await waitUntil(
      'the process lists nodes',
      () => cluster.sim.faults.heldRequests({ user }) > 0,
      60_000,
      () => child.output.slice(-10).join('\n'),
    );
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
