/**
 * A cluster without the NodeMaintenance CRD (node-maintenance-operator's or ours not installed): the
 * forwarder is ready anyway (an empty list, nothing to watch), keeps asking with backoff, and once the
 * CRD is installed a NodeMaintenance is handled without a restart.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { InProcessBus } from '../../lib/bus/in-process-bus.ts';
import { InProcessPublisher } from '../../lib/bus/in-process-publisher.ts';
import { createLogger } from '../../lib/log/logger.ts';
import { Forwarder } from '../../lib/sources/forwarder/forwarder.ts';
import { loadForwarderSettings } from '../../lib/sources/forwarder/settings.ts';
import { waitUntil } from '../support/wait.ts';
import { connectForwarderKube } from './connect.ts';
import { metric, spreadScenario, startTestCluster, type TestCluster } from './harness.ts';

const CRD_FILE = 'deploy/base/crds/nodemaintenances.yaml';
const CRD = 'nodemaintenances.nodemaintenance.medik8s.io';

describe('forwarder without the NodeMaintenance CRD', () => {
  let cluster: TestCluster;
  let forwarder: Forwarder;
  let bus: InProcessBus;

  before(async () => {
    cluster = await startTestCluster({ ...spreadScenario(2, { replicas: 0 }), workloads: [] });
    assert.equal((await cluster.kubectl.run(['delete', 'crd', CRD])).code, 0);
    bus = new InProcessBus({ rules: [], busName: 'drainbridge', start: async () => undefined });
    forwarder = new Forwarder({
      ...(await connectForwarderKube(await cluster.kubeconfigFor('drainbridge-forwarder'))),
      settings: loadForwarderSettings({ DRAINBRIDGE_FORWARDER_LEASE_SECONDS: '3' }),
      namespace: 'drainbridge',
      sink: new InProcessPublisher(bus),
      logger: createLogger('forwarder-test', 'ERROR'),
      serveOps: false,
      informerBackoff: { baseMs: 50, maxMs: 400 },
    });
    await forwarder.start();
  });
  after(async () => {
    await forwarder?.stop(1000);
    await cluster?.stop();
  });

  it('is ready, keeps asking, and handles a NodeMaintenance once the CRD is installed', async () => {
    await waitUntil('ready and leading', () => forwarder.notReady().length === 0 && forwarder.isLeader);
    const retries = async () =>
      metric(await forwarder.metrics.registry.metrics(), 'drainbridge_forwarder_watch_restarts_total', {
        resource: 'nodemaintenances',
        reason: 'error',
      });
    await waitUntil('it asked again', async () => (await retries()) >= 2);
    cluster.sim.apply(readFileSync(new URL(`../../${CRD_FILE}`, import.meta.url), 'utf8'), CRD_FILE);
    const applied = await cluster.kubectl.run(['apply', '-f', '-'], {
      input:
        'apiVersion: nodemaintenance.medik8s.io/v1beta1\nkind: NodeMaintenance\nmetadata: { name: nm-node-1 }\nspec: { nodeName: node-1, reason: test }\n',
    });
    assert.equal(applied.code, 0, applied.stderr);
    await waitUntil('Maintenance Requested for node-1', () =>
      bus.accepted.some(
        (e) =>
          e['detail-type'] === 'Maintenance Requested' &&
          (e.detail.target as { nodeName?: string }).nodeName === 'node-1',
      ),
    );
  });
});
