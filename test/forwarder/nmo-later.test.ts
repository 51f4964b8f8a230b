/**
 * node-maintenance-operator installed after the forwarder took the lead: the forwarder reads the
 * NodeMaintenance CRD again before deciding about a NodeMaintenance it has not adopted, so the next one is
 * left to NMO (a Warning Event, no finalizer, nothing published) — whether NMO's installer relabels the CRD
 * drainbridge shipped (OLM's label) or the CRD appears only with NMO. A NodeMaintenance drainbridge adopted
 * before stays drainbridge's. No CRD read happens while nothing changes.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { parse, stringify } from 'yaml';
import { InProcessBus } from '../../lib/bus/in-process-bus.ts';
import { InProcessPublisher } from '../../lib/bus/in-process-publisher.ts';
import { createLogger } from '../../lib/log/logger.ts';
import { Forwarder } from '../../lib/sources/forwarder/forwarder.ts';
import { loadForwarderSettings } from '../../lib/sources/forwarder/settings.ts';
import { waitUntil } from '../support/wait.ts';
import { connectForwarderKube } from './connect.ts';
import { FORWARDER_USER, spreadScenario, startTestCluster, type TestCluster } from './harness.ts';

const CRD = 'nodemaintenances.nodemaintenance.medik8s.io';
const CRD_FILE = new URL('../../deploy/base/crds/nodemaintenances.yaml', import.meta.url);
/** The label OLM puts on what it installs for the node-maintenance-operator package. */
const OLM_LABEL = 'operators.coreos.com/node-maintenance-operator.openshift-workload-availability';

const nodeMaintenance = (name: string, node: string): string =>
  `apiVersion: nodemaintenance.medik8s.io/v1beta1\nkind: NodeMaintenance\nmetadata: { name: ${name} }\nspec: { nodeName: ${node}, reason: test }\n`;

async function startForwarder(cluster: TestCluster, bus: InProcessBus): Promise<Forwarder> {
  const forwarder = new Forwarder({
    ...(await connectForwarderKube(await cluster.kubeconfigFor('drainbridge-forwarder'))),
    settings: loadForwarderSettings({ DRAINBRIDGE_FORWARDER_LEASE_SECONDS: '3' }),
    namespace: 'drainbridge',
    sink: new InProcessPublisher(bus),
    logger: createLogger('forwarder-test', 'ERROR'),
    serveOps: false,
    informerBackoff: { baseMs: 50, maxMs: 400 },
  });
  await forwarder.start();
  await waitUntil('ready and leading', () => forwarder.notReady().length === 0 && forwarder.isLeader);
  return forwarder;
}

const requested = (bus: InProcessBus, node: string): boolean =>
  bus.accepted.some(
    (e) => e['detail-type'] === 'Maintenance Requested' && (e.detail.target as { nodeName?: string }).nodeName === node,
  );

/** Waits for the refusal Event on `name`, then checks that drainbridge left it alone. */
async function assertRefused(cluster: TestCluster, bus: InProcessBus, name: string, node: string): Promise<void> {
  await waitUntil(`the refusal Event on ${name}`, async () => {
    const events = await cluster.kubectl.run([
      'get',
      'events',
      '-n',
      'default',
      '--field-selector',
      `reason=NodeMaintenanceOperatorPresent,involvedObject.name=${name}`,
      '-o',
      'name',
    ]);
    return events.stdout.trim().length > 0;
  });
  const nm = JSON.parse((await cluster.kubectl.run(['get', 'nm', name, '-o', 'json'])).stdout);
  assert.equal(nm.metadata.finalizers, undefined, `${name}: no drainbridge finalizer`);
  assert.equal(nm.status, undefined, `${name}: no status written`);
  assert.equal(requested(bus, node), false, `${name}: nothing published`);
}

describe('node-maintenance-operator installed after the forwarder took the lead', () => {
  describe("NMO's installer takes over drainbridge's CRD", () => {
    let cluster: TestCluster;
    let forwarder: Forwarder;
    let bus: InProcessBus;

    before(async () => {
      cluster = await startTestCluster({ ...spreadScenario(3, { replicas: 0 }), workloads: [] });
      bus = new InProcessBus({ rules: [], busName: 'drainbridge', start: async () => undefined });
      forwarder = await startForwarder(cluster, bus);
    });
    after(async () => {
      await forwarder?.stop(1000);
      await cluster?.stop();
    });

    it('adopts a NodeMaintenance before, leaves the next one to NMO, keeps the one it adopted', async () => {
      assert.equal(
        (await cluster.kubectl.run(['apply', '-f', '-'], { input: nodeMaintenance('nm-a', 'node-1') })).code,
        0,
      );
      await waitUntil('nm-a requested', () => requested(bus, 'node-1'));

      // Nothing changes: no CRD read (not periodic).
      const idle = cluster.sim.requestLog.mark();
      assert.equal((await cluster.kubectl.run(['cordon', 'node-3'])).code, 0);
      await waitUntil(
        'the node watch saw the cordon',
        () => forwarder.nodes.get('node-3')?.spec?.unschedulable === true,
      );

      assert.equal((await cluster.kubectl.run(['label', 'crd', CRD, `${OLM_LABEL}=`])).code, 0);
      assert.equal(
        (await cluster.kubectl.run(['apply', '-f', '-'], { input: nodeMaintenance('nm-b', 'node-2') })).code,
        0,
      );
      await assertRefused(cluster, bus, 'nm-b', 'node-2');
      const crdReads = cluster.sim.requestLog
        .all({ since: idle, user: FORWARDER_USER, resource: 'customresourcedefinitions' })
        .map((r) => `${r.verb} ${r.name}`);
      assert.deepEqual(crdReads, [`get ${CRD}`], 'one CRD read, for the new NodeMaintenance');

      const adopted = JSON.parse((await cluster.kubectl.run(['get', 'nm', 'nm-a', '-o', 'json'])).stdout);
      assert.deepEqual(adopted.metadata.finalizers, ['drainbridge.io/node-maintenance'], 'nm-a stays adopted');
    });
  });

  describe("the CRD appears with NMO's labels after the lead was taken without one", () => {
    let cluster: TestCluster;
    let forwarder: Forwarder;
    let bus: InProcessBus;

    before(async () => {
      cluster = await startTestCluster({ ...spreadScenario(2, { replicas: 0 }), workloads: [] });
      assert.equal((await cluster.kubectl.run(['delete', 'crd', CRD])).code, 0);
      bus = new InProcessBus({ rules: [], busName: 'drainbridge', start: async () => undefined });
      forwarder = await startForwarder(cluster, bus);
    });
    after(async () => {
      await forwarder?.stop(1000);
      await cluster?.stop();
    });

    it('leaves the first NodeMaintenance to NMO', async () => {
      const crd = parse(readFileSync(CRD_FILE, 'utf8')) as { metadata: { labels?: Record<string, string> } };
      crd.metadata.labels = { ...crd.metadata.labels, 'node-maintenance-operator': '' };
      assert.equal((await cluster.kubectl.run(['apply', '-f', '-'], { input: stringify(crd) })).code, 0);
      // Applied until the NodeMaintenance API is served (the CRD established).
      await waitUntil('the NodeMaintenance is created', async () => {
        const created = await cluster.kubectl.run(['apply', '-f', '-'], { input: nodeMaintenance('nm-c', 'node-1') });
        return created.code === 0;
      });
      await assertRefused(cluster, bus, 'nm-c', 'node-1');
    });
  });
});
