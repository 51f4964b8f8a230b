/**
 * Fidelity with the real kubectl on drain's edge cases, each on its own small simulator: an eviction
 * refused because the pod's namespace is terminating (kubectl must see the `NamespaceTerminating`
 * cause, which the apiserver sends as `details.causes[].reason`, and wait for the pod instead of
 * failing), `--grace-period=0` (the pods go at once), and a budget whose selector matches none of the
 * node's pods (it holds nothing). Skipped with a message when kubectl is absent, except under CI=true,
 * where that fails.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Simulator, startSimulator } from '../../sim/index.ts';
import { whenSettled } from '../../sim/scenarios/index.ts';
import { findKubectl, Kubectl } from './kubectl-runner.ts';

const PODS = { group: '', resource: 'pods' };
const NAMESPACES = { group: '', resource: 'namespaces' };
const binary = findKubectl();
const skip = binary ? false : 'kubectl not found on this machine (the fidelity suite needs /usr/bin/kubectl)';

if (!binary && process.env.CI === 'true') {
  it('kubectl is present in CI', () => assert.fail('kubectl not found and CI=true: the fidelity suite must run in CI'));
}

type Manifest = Record<string, unknown>;

function barePod(name: string, namespace: string, grace: number): Manifest {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace },
    spec: { nodeName: 'node-1', terminationGracePeriodSeconds: grace, containers: [{ name: 'c', image: 'busybox' }] },
  };
}

/** A simulator on `scenario`, settled, with a kubectl for its admin; `body` runs, then both go. */
async function withCluster(
  scenario: Manifest,
  speed: number,
  body: (sim: Simulator, kubectl: Kubectl) => Promise<void>,
): Promise<void> {
  const sim = await startSimulator({ scenario, speed });
  const kubectl = new Kubectl(binary as string, sim.kubeconfig());
  try {
    if (sim.scenario) await whenSettled(sim.store, sim.scenario, 600_000);
    await body(sim, kubectl);
  } finally {
    kubectl.close();
    await sim.stop();
  }
}

describe('kubectl drain edge cases against the simulator', { skip }, () => {
  it('waits for a pod whose eviction is refused because its namespace is terminating, then completes', async () => {
    const scenario = {
      name: 'terminating-namespace',
      podStartupDelaySeconds: 1,
      nodes: [{ name: 'node-1' }, { name: 'node-2' }],
      namespaces: ['old'],
      pods: [barePod('leftover', 'old', 60)],
    };
    // Speed 20: the pod's 60 s grace period lasts 3 s of real time, long enough for kubectl to see it.
    await withCluster(scenario, 20, async (sim, kubectl) => {
      // Deleting the namespace marks its pod for deletion (grace 60 s); the kubelet removes it later.
      sim.store.delete(NAMESPACES, { name: 'old' });
      assert.ok(sim.store.mustGet(PODS, 'old', 'leftover').metadata.deletionTimestamp);
      const mark = sim.requestLog.mark();
      const result = await kubectl.run(['drain', 'node-1', '--force', '--timeout=60s'], { timeoutMs: 90_000 });
      assert.equal(result.code, 0, `kubectl drain failed:\n${result.stderr}`);
      assert.doesNotMatch(result.stderr, /error when evicting/);
      assert.match(result.stdout, /pod\/leftover evicted/);
      assert.match(result.stdout, /node\/node-1 drained/);
      const evictions = sim.requestLog
        .all({ since: mark })
        .filter((r) => r.subresource === 'eviction' && r.name === 'leftover');
      assert.deepEqual(
        evictions.map((r) => r.status),
        [403],
        'one refused eviction: kubectl recognised the NamespaceTerminating cause and only waited',
      );
      assert.equal(sim.store.get(PODS, 'old', 'leftover'), undefined, 'the kubelet removed the pod');
    });
  });

  it('--grace-period=0 evicts with grace 0: the pods are gone at once, whatever their own period', async () => {
    const scenario = {
      name: 'grace-zero',
      podStartupDelaySeconds: 1,
      nodes: [{ name: 'node-1' }, { name: 'node-2' }],
      pods: [barePod('slow-a', 'default', 3600), barePod('slow-b', 'default', 3600)],
    };
    // Real time: with their own hour-long grace period these pods would outlast kubectl's timeout.
    await withCluster(scenario, 1, async (sim, kubectl) => {
      const mark = sim.requestLog.mark();
      const result = await kubectl.run(['drain', 'node-1', '--force', '--grace-period=0', '--timeout=20s']);
      assert.equal(result.code, 0, `kubectl drain failed:\n${result.stderr}`);
      assert.match(result.stdout, /pod\/slow-a evicted/);
      assert.match(result.stdout, /pod\/slow-b evicted/);
      assert.equal(sim.store.list(PODS, { namespace: 'default' }).items.length, 0);
      const evictions = sim.requestLog.all({ since: mark }).filter((r) => r.subresource === 'eviction');
      assert.deepEqual(
        evictions.map((r) => r.status),
        [201, 201],
      );
    });
  });

  it('a budget whose selector matches none of the pods does not hold the drain', async () => {
    const scenario = {
      name: 'unmatched-budget',
      podStartupDelaySeconds: 1,
      nodes: [{ name: 'node-1' }, { name: 'node-2' }],
      pods: [barePod('web', 'default', 1)],
      pdbs: [
        {
          apiVersion: 'policy/v1',
          kind: 'PodDisruptionBudget',
          metadata: { name: 'nothing', namespace: 'default' },
          spec: { minAvailable: 1, selector: { matchLabels: { app: 'absent' } } },
        },
      ],
    };
    await withCluster(scenario, 20, async (sim, kubectl) => {
      const budget = sim.store.mustGet({ group: 'policy', resource: 'poddisruptionbudgets' }, 'default', 'nothing');
      assert.equal((budget.status as { disruptionsAllowed?: number }).disruptionsAllowed, 0, 'it allows nothing');
      const result = await kubectl.run(['drain', 'node-1', '--force', '--timeout=20s']);
      assert.equal(result.code, 0, `kubectl drain failed:\n${result.stderr}`);
      assert.doesNotMatch(result.stderr, /disruption budget/);
      assert.equal(sim.store.get(PODS, 'default', 'web'), undefined);
    });
  });
});
