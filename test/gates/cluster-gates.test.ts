/**
 * The cluster gates read through the API server (the simulator, its PDB controller filling in the
 * DisruptionAllowed condition): NotReady nodes counted besides the requested one, the requested node's
 * zone, and a PodDisruptionBudget at zero that blocks every node but the one whose own pod it covers.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { checkGates } from '../../lib/admission/gates/index.ts';
import { KubeClient } from '../../lib/clients/kube/client.ts';
import { gateSpecs } from '../../lib/model/gate-spec.ts';
import { type Simulator, startSimulator } from '../../sim/index.ts';
import { whenSettled } from '../../sim/scenarios/index.ts';
import { waitUntil } from '../support/wait.ts';

const ZONE = 'topology.kubernetes.io/zone';

const SCENARIO = {
  name: 'cluster-gates',
  nodes: [
    { name: 'node-1', labels: { [ZONE]: 'a' } },
    { name: 'node-2', labels: { [ZONE]: 'a' }, ready: false },
    { name: 'node-3', labels: { [ZONE]: 'b' } },
  ],
  namespaces: ['shop'],
  pods: [
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'solo', namespace: 'shop', labels: { app: 'solo' } },
      spec: { nodeName: 'node-1', containers: [{ name: 'c', image: 'nginx:1.27' }] },
    },
  ],
  pdbs: [
    {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: 'solo', namespace: 'shop' },
      spec: { minAvailable: 1, selector: { matchLabels: { app: 'solo' } } },
    },
  ],
};

describe('the cluster gates through the API server', () => {
  let sim: Simulator;
  let client: KubeClient;
  before(async () => {
    sim = await startSimulator({ scenario: SCENARIO });
    if (sim.scenario) await whenSettled(sim.store, sim.scenario, 30_000);
    const config = new KubeConfig();
    config.loadFromString(sim.kubeconfig());
    client = new KubeClient(config);
  });
  after(async () => {
    await sim?.stop();
  });

  const verdictsFor = async (node: string, specs: Record<string, unknown>[]) =>
    checkGates(gateSpecs.parse(specs), { client, node: await client.getNode(node), now: new Date() });

  it('not-ready-nodes and failure-domain', async () => {
    const [strict, lenient, zone] = await verdictsFor('node-1', [
      { kind: 'not-ready-nodes', name: 'none', max: 0 },
      { kind: 'not-ready-nodes', name: 'one', max: 1 },
      { kind: 'failure-domain' },
    ]);
    assert.deepEqual(strict, {
      gate: 'none',
      open: false,
      why: '1 other node(s) NotReady (node-2); at most 0',
    });
    assert.equal(lenient?.open, true, lenient?.why);
    assert.deepEqual(zone, {
      gate: 'failure-domain',
      open: false,
      why: 'topology.kubernetes.io/zone=a has NotReady node(s) node-2',
    });
    const [otherZone] = await verdictsFor('node-3', [{ kind: 'failure-domain' }]);
    assert.equal(otherZone?.open, true, otherZone?.why);
  });

  it('pdbs-at-zero: blocks other nodes once the budget has been at zero for longer than `for`', async () => {
    await waitUntil('the budget is at zero, observed', async () => {
      const pdb = (await client.listPodDisruptionBudgets()).find((p) => p.metadata?.name === 'solo');
      return pdb?.status?.disruptionsAllowed === 0 && pdb.status.conditions !== undefined;
    });
    const spec = [{ kind: 'pdbs-at-zero', for: '1s' }];
    await waitUntil('node-3 is blocked by shop/solo', async () => {
      const [verdict] = await verdictsFor('node-3', spec);
      return verdict?.open === false && /PodDisruptionBudget shop\/solo \(since /.test(verdict.why);
    });
    const [own] = await verdictsFor('node-1', spec);
    assert.equal(own?.open, true, `node-1 runs the budget's own pod: the drain waits on it itself (${own?.why})`);
  });
});
