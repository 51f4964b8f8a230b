/**
 * The operations endpoint of a real `drainbridge forwarder` process — what the Deployment's probes and
 * Prometheus read: `/healthz` answers at once; `/readyz` answers 503 naming each cache not synced yet (the
 * simulator holds the node and NodeMaintenance lists unanswered) and 200 once both are; `/metrics` has
 * `drainbridge_forwarder_queue_depth` counting the events waiting while the bus is away (and 0 once they
 * are out), the leader gauge, and the events published by type.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { InProcessBus } from '../../lib/bus/in-process-bus.ts';
import { type EventBridgeEndpoint, startEventBridgeEndpoint } from '../../sim/eventbridge/endpoint.ts';
import { waitUntil } from '../support/wait.ts';
import {
  DrainbridgeProcess,
  FORWARDER_USER,
  metric,
  scrape,
  spreadScenario,
  startTestCluster,
  type TestCluster,
} from './harness.ts';

interface Readiness {
  readonly ready: boolean;
  readonly reasons: string[];
}

describe('forwarder operations endpoint: probes and metrics', () => {
  let cluster: TestCluster;
  let bus: InProcessBus;
  let endpoint: EventBridgeEndpoint;
  let forwarder: DrainbridgeProcess;
  let ops: string;
  const heals: (() => void)[] = [];

  const readyz = async (): Promise<{ status: number; body: Readiness }> => {
    const answer = await fetch(`${ops}/readyz`);
    return { status: answer.status, body: (await answer.json()) as Readiness };
  };

  before(async () => {
    cluster = await startTestCluster({ ...spreadScenario(3, { replicas: 0 }), workloads: [] });
    bus = new InProcessBus({ rules: [], busName: 'drainbridge-dev', start: async () => undefined });
    endpoint = await startEventBridgeEndpoint(bus);
    // The caches cannot fill until the test lets the lists through.
    heals.push(cluster.sim.faults.holdRequests({ user: FORWARDER_USER, verbs: ['list'], resources: ['nodes'] }));
    heals.push(
      cluster.sim.faults.holdRequests({ user: FORWARDER_USER, verbs: ['list'], resources: ['nodemaintenances'] }),
    );
    forwarder = new DrainbridgeProcess(
      [
        'forwarder',
        '--kubeconfig',
        await cluster.kubeconfigFor('drainbridge-forwarder'),
        '--cordon-evacuates',
        'all',
        '--metrics-address',
        '127.0.0.1:0',
        '--identity',
        'fwd-ops',
      ],
      {
        AWS_ENDPOINT_URL_EVENTBRIDGE: endpoint.url,
        AWS_REGION: 'eu-west-1',
        AWS_ACCESS_KEY_ID: 'AKIDTEST',
        AWS_SECRET_ACCESS_KEY: 'test-secret',
        DRAINBRIDGE_EVENT_BUS: 'drainbridge-dev',
        DRAINBRIDGE_FORWARDER_LEASE_SECONDS: '3',
      },
    );
    ops = await forwarder.opsUrl();
  });
  after(async () => {
    for (const heal of heals) heal();
    forwarder?.kill('SIGKILL');
    await forwarder?.exited;
    await endpoint?.close();
    await cluster?.stop();
  });

  it('/healthz answers while the caches fill; /readyz is 503 naming each unsynced cache, then 200', async () => {
    await waitUntil('both lists are held', () => cluster.sim.faults.heldRequests({ user: FORWARDER_USER }) >= 2);
    const health = await fetch(`${ops}/healthz`);
    assert.equal(health.status, 200);
    assert.equal(await health.text(), 'ok\n');

    const unsynced = await readyz();
    assert.equal(unsynced.status, 503);
    assert.equal(unsynced.body.ready, false);
    assert.ok(unsynced.body.reasons.includes('nodes: not listed yet'), unsynced.body.reasons.join('; '));
    assert.ok(
      unsynced.body.reasons.includes('source node-maintenance: caches not synced'),
      unsynced.body.reasons.join('; '),
    );

    // The nodes listed: still not ready while the NodeMaintenance cache is empty.
    heals.shift()?.();
    await waitUntil(
      'the node cache synced',
      async () => !(await readyz()).body.reasons.includes('nodes: not listed yet'),
    );
    const half = await readyz();
    assert.equal(half.status, 503);
    assert.deepEqual(half.body.reasons, ['source node-maintenance: caches not synced']);

    heals.shift()?.();
    await waitUntil('ready', async () => (await readyz()).status === 200);
    assert.deepEqual((await readyz()).body, { ready: true, reasons: [] });
  });

  it('drainbridge_forwarder_queue_depth counts what waits for the bus, and falls to 0 once it is out', async () => {
    await waitUntil('leading', async () => metric(await scrape(ops), 'drainbridge_forwarder_leader') === 1);
    assert.equal(metric(await scrape(ops), 'drainbridge_forwarder_queue_depth'), 0);
    const heal = endpoint.failCalls();
    for (const node of ['node-1', 'node-2']) assert.equal((await cluster.kubectl.run(['cordon', node])).code, 0);
    await waitUntil(
      'two events waiting after a failed send',
      async () => {
        const text = await scrape(ops);
        return (
          metric(text, 'drainbridge_forwarder_queue_depth') === 2 &&
          metric(text, 'drainbridge_forwarder_publish_failures_total', { kind: 'transient' }) >= 2
        );
      },
      20_000,
    );
    heal();
    await waitUntil(
      'both published',
      async () =>
        metric(await scrape(ops), 'drainbridge_forwarder_events_published_total', { detail_type: 'Node Cordoned' }) ===
        2,
      20_000,
    );
    const text = await scrape(ops);
    assert.equal(metric(text, 'drainbridge_forwarder_queue_depth'), 0);
    assert.equal(bus.accepted.filter((e) => e['detail-type'] === 'Node Cordoned').length, 2);
  });
});
