/**
 * The bundled scenarios load, apply and settle; bad scenario files fail with the field named and
 * create nothing.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InvalidInput } from '../../../lib/errors/index.ts';
import {
  applyScenario,
  bundledScenarios,
  loadScenario,
  parseScenario,
  startScenario,
  whenSettled,
} from '../../../sim/scenarios/index.ts';
import { createStore } from '../../../sim/store/index.ts';
import type { KubeObject } from '../../../sim/store/types.ts';
import { NODES, nodeNameOf, PODS } from './harness.ts';

const count = (items: KubeObject[], predicate: (o: KubeObject) => boolean): number => items.filter(predicate).length;

describe('bundled scenarios', () => {
  it('include small and busy-node', () => {
    assert.deepEqual(
      bundledScenarios().filter((name) => name === 'small' || name === 'busy-node'),
      ['busy-node', 'small'],
    );
  });

  it('small: 3 nodes settle with every pod ready', async () => {
    const scenario = loadScenario('small');
    const store = createStore({ speed: 500 });
    const controllers = startScenario(store, scenario);
    try {
      await whenSettled(store, scenario, 600_000);
      assert.equal(store.list(NODES).items.length, 3);
      const pdb = store.get({ group: 'policy', resource: 'poddisruptionbudgets' }, 'shop', 'web')?.status as {
        disruptionsAllowed?: number;
      };
      assert.equal(pdb.disruptionsAllowed, 1);
    } finally {
      controllers.stop();
      store.close();
    }
  });

  it('busy-node: 110 pods of every kind on busy-node, all Ready (or the Job Succeeded)', async () => {
    const scenario = loadScenario('busy-node');
    const store = createStore({ speed: 1000 });
    const started = performance.now();
    const controllers = startScenario(store, scenario);
    try {
      await whenSettled(store, scenario, 3_600_000);
      const elapsed = performance.now() - started;
      // A measurement for the benchmark, not an assertion: wall-clock bounds make flaky tests.
      console.log(`busy-node settled in ${elapsed.toFixed(0)} ms (speed 1000)`);
      const onBusy = store.list(PODS).items.filter((p) => nodeNameOf(p) === 'busy-node');
      assert.equal(onBusy.length, 110);
      const labels = (p: KubeObject) => p.metadata.labels ?? {};
      const owner = (p: KubeObject) => p.metadata.ownerReferences?.find((r) => r.controller)?.kind;
      assert.equal(
        count(onBusy, (p) => owner(p) === 'DaemonSet'),
        3,
      );
      assert.equal(
        count(onBusy, (p) => p.metadata.annotations?.['kubernetes.io/config.mirror'] !== undefined),
        2,
      );
      assert.equal(
        count(onBusy, (p) => owner(p) === 'Job' && (p.status as { phase?: string }).phase === 'Succeeded'),
        1,
      );
      assert.equal(
        count(onBusy, (p) => owner(p) === undefined),
        5,
      );
      assert.equal(
        count(onBusy, (p) => labels(p)['kubevirt.io'] === 'virt-launcher'),
        5,
      );
      const emptyDir = (p: KubeObject) =>
        ((p.spec as { volumes?: { emptyDir?: unknown }[] }).volumes ?? []).some((v) => v.emptyDir);
      assert.equal(count(onBusy, emptyDir), 10);
      assert.equal(
        count(onBusy, (p) => ['web', 'api', 'queue'].includes(labels(p).app ?? '')),
        53,
      );
    } finally {
      controllers.stop();
      store.close();
    }
  });
});

/** `promise`, or a rejection naming what hung once `ms` of real time have passed. */
async function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: still pending after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, limit]);
  } finally {
    clearTimeout(timer);
  }
}

describe('whenSettled', () => {
  it('resolves at once for a scenario with no workloads (no change ever comes to recheck on)', async () => {
    const scenario = parseScenario('name: bare\nnodes: [{ name: n1 }, { name: n2 }]');
    const store = createStore({ speed: 1 });
    const controllers = startScenario(store, scenario);
    try {
      // The timeout is an hour of simulated (= real) time: only the immediate check can resolve it.
      await within(2_000, 'whenSettled on a scenario without workloads', whenSettled(store, scenario, 3_600_000));
      assert.equal(store.list(NODES).items.length, 2);
    } finally {
      controllers.stop();
      store.close();
    }
  });

  it('rejects, naming what is unsettled, when the store is closed while it waits', async () => {
    const scenario = parseScenario(
      `name: slow\npodStartupDelaySeconds: 3600\nnodes: [{ name: n1 }]\npods: [{ apiVersion: v1, kind: Pod, metadata: { name: p }, spec: { nodeName: n1, containers: [{ name: c, image: busybox }] } }]`,
    );
    const store = createStore({ speed: 1 });
    const controllers = startScenario(store, scenario);
    const waiting = whenSettled(store, scenario, 3_600_000);
    controllers.stop();
    store.close();
    await assert.rejects(
      within(2_000, 'whenSettled after close', waiting),
      /scenario slow did not settle before the store was closed: Pod default\/p/,
    );
  });

  it('rejects at once on a store that is already closed', async () => {
    const scenario = parseScenario('name: bare\nnodes: [{ name: n1 }]');
    const store = createStore({ speed: 1 });
    store.close();
    await assert.rejects(
      within(2_000, 'whenSettled on a closed store', whenSettled(store, scenario, 60_000)),
      /scenario bare cannot settle: the store is closed/,
    );
  });

  it('still rejects after its timeout with what is unsettled', async () => {
    const scenario = parseScenario(
      `name: slow\npodStartupDelaySeconds: 3600\nnodes: [{ name: n1 }]\npods: [{ apiVersion: v1, kind: Pod, metadata: { name: p }, spec: { nodeName: n1, containers: [{ name: c, image: busybox }] } }]`,
    );
    const store = createStore({ speed: 1000 });
    const controllers = startScenario(store, scenario);
    try {
      await assert.rejects(
        whenSettled(store, scenario, 5_000),
        /scenario slow did not settle in 5000 ms: Pod default\/p/,
      );
    } finally {
      controllers.stop();
      store.close();
    }
  });
});

describe('scenario validation', () => {
  const node = 'nodes: [{ name: n1 }]';
  const cases: [string, string, RegExp][] = [
    ['missing nodes', 'name: x', /nodes: /],
    ['bad node name', 'name: x\nnodes: [{ name: Node_1 }]', /nodes\[0\]\.name: must be a lowercase RFC 1123 subdomain/],
    ['unknown field', `name: x\n${node}\nspeeed: 3`, /speeed: unknown field/],
    [
      'bad taint effect',
      'name: x\nnodes: [{ name: n1, taints: [{ key: k, effect: Sometimes }] }]',
      /nodes\[0\]\.taints\[0\]\.effect/,
    ],
    ['negative speed', `name: x\n${node}\nspeed: -1`, /speed: /],
    [
      'workload without containers',
      `name: x\n${node}\nworkloads: [{ apiVersion: apps/v1, kind: Deployment, metadata: { name: d }, spec: { selector: { matchLabels: { a: b } }, template: { metadata: { labels: { a: b } }, spec: { containers: [] } } } }]`,
      /workloads\[0\]\.spec\.template\.spec\.containers: must list at least one container/,
    ],
    [
      'selector not matching template',
      `name: x\n${node}\nworkloads: [{ apiVersion: apps/v1, kind: Deployment, metadata: { name: d }, spec: { selector: { matchLabels: { a: b } }, template: { metadata: { labels: { a: c } }, spec: { containers: [{ name: c }] } } } }]`,
      /workloads\[0\]\.spec\.template\.metadata\.labels: `selector` does not match template `labels`/,
    ],
    [
      'PDB with both fields',
      `name: x\n${node}\npdbs: [{ apiVersion: policy/v1, kind: PodDisruptionBudget, metadata: { name: p }, spec: { minAvailable: 1, maxUnavailable: 1, selector: {} } }]`,
      /pdbs\[0\]\.spec: minAvailable and maxUnavailable cannot be both set/,
    ],
    [
      'PDB with a bad percentage',
      `name: x\n${node}\npdbs: [{ apiVersion: policy/v1, kind: PodDisruptionBudget, metadata: { name: p }, spec: { minAvailable: "half", selector: {} } }]`,
      /pdbs\[0\]\.spec\.minAvailable/,
    ],
    [
      'pod on an unknown node',
      `name: x\n${node}\npods: [{ apiVersion: v1, kind: Pod, metadata: { name: p }, spec: { nodeName: n9, containers: [{ name: c }] } }]`,
      /pods\[0\]\.spec\.nodeName: unknown node "n9"/,
    ],
    ['duplicate node', 'name: x\nnodes: [{ name: n1 }, { name: n1 }]', /nodes\[1\]\.name: duplicate node n1/],
    ['not YAML', 'name: [x', /not valid YAML/],
  ];
  for (const [name, text, expected] of cases) {
    it(name, () => {
      assert.throws(
        () => parseScenario(text, 'test.yaml'),
        (error: unknown) =>
          error instanceof InvalidInput &&
          expected.test(error.message) &&
          error.message.startsWith('scenario test.yaml: '),
      );
    });
  }

  it('refuses an unknown kind or a missing owner before creating anything', () => {
    const scenario = parseScenario(
      `name: x\n${node}\ncustomResources: [{ apiVersion: example.com/v1, kind: Widget, metadata: { name: w } }]\npods: [{ apiVersion: v1, kind: Pod, metadata: { name: p, ownerReferences: [{ apiVersion: v1, kind: Thing, name: t }] }, spec: { containers: [{ name: c }] } }]`,
    );
    const store = createStore({ speed: 1 });
    try {
      const before = store.currentResourceVersion();
      assert.throws(
        () => applyScenario(store, scenario),
        /no resource of kind Widget.*owner Thing t is not defined earlier/s,
      );
      assert.equal(store.currentResourceVersion(), before);
      assert.equal(store.list(NODES).items.length, 0);
    } finally {
      store.close();
    }
  });

  it('names the scenarios there are when the name is unknown', () => {
    assert.throws(() => loadScenario('no-such-scenario'), /neither a bundled scenario \(.*small.*\) nor a file/);
  });
});
