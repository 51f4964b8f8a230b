/**
 * `drainbridge forwarder --force …`: the forwarder's kubectl drain flags travel on the Node Cordoned it
 * publishes (lib/sources/forwarder/drain-outlet.ts), since the evacuation runs in another process that reads only
 * the event; without flags the event carries no `drain` and the origin `cordon` decides there.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { InProcessBus } from '../../lib/bus/in-process-bus.ts';
import { InProcessPublisher } from '../../lib/bus/in-process-publisher.ts';
import { createLogger } from '../../lib/log/logger.ts';
import { Forwarder } from '../../lib/sources/forwarder/forwarder.ts';
import { loadForwarderSettings } from '../../lib/sources/forwarder/settings.ts';
import { waitUntil } from '../support/wait.ts';
import { connectForwarderKube } from './connect.ts';
import { spreadScenario, startTestCluster, type TestCluster } from './harness.ts';

describe("the forwarder's drain flags ride on Node Cordoned", () => {
  let cluster: TestCluster;
  let forwarder: Forwarder;
  let bus: InProcessBus;

  before(async () => {
    cluster = await startTestCluster({ ...spreadScenario(2, { replicas: 0 }), workloads: [] });
    bus = new InProcessBus({ rules: [], busName: 'drainbridge', start: async () => undefined });
    forwarder = new Forwarder({
      ...(await connectForwarderKube(await cluster.kubeconfigFor('drainbridge-forwarder'))),
      settings: loadForwarderSettings({
        DRAINBRIDGE_FORWARDER_LEASE_SECONDS: '3',
        DRAINBRIDGE_CORDON_EVACUATES: 'all',
      }),
      namespace: 'drainbridge',
      sink: new InProcessPublisher(bus),
      logger: createLogger('forwarder-test', 'ERROR'),
      serveOps: false,
      drain: { force: true, gracePeriodSeconds: 20 },
    });
    await forwarder.start();
  });
  after(async () => {
    await forwarder?.stop(1000);
    await cluster?.stop();
  });

  it('kubectl cordon node-1 → Node Cordoned with drain; the uncordon without', async () => {
    await waitUntil('leading', () => forwarder.isLeader);
    assert.equal((await cluster.kubectl.run(['cordon', 'node-1'])).code, 0);
    await waitUntil('Node Cordoned', () => bus.accepted.some((e) => e['detail-type'] === 'Node Cordoned'));
    const cordoned = bus.accepted.find((e) => e['detail-type'] === 'Node Cordoned');
    assert.deepEqual(cordoned?.detail.drain, { force: true, gracePeriodSeconds: 20 });
    assert.equal((await cluster.kubectl.run(['uncordon', 'node-1'])).code, 0);
    await waitUntil('Node Uncordoned', () => bus.accepted.some((e) => e['detail-type'] === 'Node Uncordoned'));
    assert.equal(bus.accepted.find((e) => e['detail-type'] === 'Node Uncordoned')?.detail.drain, undefined);
  });
});
