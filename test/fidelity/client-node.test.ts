/**
 * The fidelity cases through @kubernetes/client-node (the client drainbridge's own code uses), over
 * HTTPS with the simulator's certificate as CA: list/get/patch/update, watch, evictions with budgets
 * and dry run, a drain done by hand (cordon + evict with retries), access reviews, refusals.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  ApiException,
  AppsV1Api,
  AuthorizationV1Api,
  CoreV1Api,
  KubeConfig,
  PatchStrategy,
  PolicyV1Api,
  setHeaderOptions,
  VersionApi,
  Watch,
} from '@kubernetes/client-node';
import { type Simulator, startSimulator } from '../../sim/index.ts';
import { whenSettled } from '../../sim/scenarios/index.ts';
import type { KubeObject } from '../../sim/store/types.ts';
import { waitUntil } from '../support/wait.ts';

const PODS = { group: '', resource: 'pods' };

function kubeConfig(yaml: string): KubeConfig {
  const config = new KubeConfig();
  config.loadFromString(yaml);
  return config;
}

async function apiError(call: () => Promise<unknown>): Promise<{ code: number; status: Record<string, unknown> }> {
  try {
    await call();
  } catch (error) {
    assert.ok(error instanceof ApiException, `expected an ApiException, got ${String(error)}`);
    const body =
      typeof error.body === 'string'
        ? (JSON.parse(error.body) as Record<string, unknown>)
        : (error.body as Record<string, unknown>);
    return { code: error.code, status: body };
  }
  assert.fail('expected the call to fail');
}

const strategic = setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch);

describe('@kubernetes/client-node against the simulator', () => {
  let sim: Simulator;
  let core: CoreV1Api;
  let apps: AppsV1Api;
  let policy: PolicyV1Api;
  let config: KubeConfig;

  const nodeOf = (pod: KubeObject): string => String((pod.spec as { nodeName?: string }).nodeName ?? '');
  const phaseOf = (pod: KubeObject): string => String((pod.status as { phase?: string }).phase ?? '');

  before(async () => {
    sim = await startSimulator({ scenario: 'small', speed: 20 });
    config = kubeConfig(sim.kubeconfig());
    core = config.makeApiClient(CoreV1Api);
    apps = config.makeApiClient(AppsV1Api);
    policy = config.makeApiClient(PolicyV1Api);
    if (sim.scenario) await whenSettled(sim.store, sim.scenario, 20_000);
  });
  after(async () => {
    await sim?.stop();
  });

  it('connects over TLS and reads /version and nodes', async () => {
    const version = await config.makeApiClient(VersionApi).getCode();
    assert.equal(version.minor, '32');
    const nodes = await core.listNode();
    assert.deepEqual(
      nodes.items.map((n) => n.metadata?.name),
      ['node-1', 'node-2', 'node-3'],
    );
  });

  it('cordons and uncordons with a strategic merge patch', async () => {
    const cordoned = await core.patchNode({ name: 'node-3', body: { spec: { unschedulable: true } } }, strategic);
    assert.equal(cordoned.spec?.unschedulable, true);
    const uncordoned = await core.patchNode({ name: 'node-3', body: { spec: { unschedulable: null } } }, strategic);
    assert.equal(uncordoned.spec?.unschedulable, undefined);
  });

  it('lists pods by field selector, as drain does', async () => {
    const pods = await core.listPodForAllNamespaces({ fieldSelector: 'spec.nodeName=node-1,status.phase!=Succeeded' });
    assert.ok(pods.items.length > 0);
    assert.ok(pods.items.every((p) => p.spec?.nodeName === 'node-1' && p.status?.phase !== 'Succeeded'));
  });

  it('updates with optimistic concurrency: a stale resourceVersion is 409', async () => {
    const current = await apps.readNamespacedDeployment({ name: 'web', namespace: 'shop' });
    const stale = structuredClone(current);
    await apps.replaceNamespacedDeployment({
      name: 'web',
      namespace: 'shop',
      body: { ...current, metadata: { ...current.metadata, labels: { touched: 'yes' } } },
    });
    const { code, status } = await apiError(() =>
      apps.replaceNamespacedDeployment({ name: 'web', namespace: 'shop', body: stale }),
    );
    assert.equal(code, 409);
    assert.equal(status.reason, 'Conflict');
  });

  it('watches pods', async () => {
    const seen: string[] = [];
    const controller = await new Watch(config).watch(
      '/api/v1/namespaces/default/pods',
      { resourceVersion: sim.store.currentResourceVersion() },
      (type, object: { metadata?: { name?: string } }) => seen.push(`${type} ${object.metadata?.name}`),
      () => {},
    );
    sim.store.create(PODS, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'watched', namespace: 'default' },
      spec: { containers: [] },
    });
    sim.store.delete(PODS, { namespace: 'default', name: 'watched' });
    await waitUntil('the DELETED event', () => seen.includes('DELETED watched'), 10_000);
    controller.abort();
    assert.deepEqual(seen, ['ADDED watched', 'DELETED watched']);
  });

  it('evicts with dry run (nothing changes), then for real', async () => {
    const victim = sim.store.list(PODS, { namespace: 'shop', labelSelector: 'app=db' }).items[0];
    const name = victim?.metadata.name ?? '';
    const rv = sim.store.currentResourceVersion();
    await core.createNamespacedPodEviction({
      name,
      namespace: 'shop',
      body: { metadata: { name, namespace: 'shop' } },
      dryRun: 'All',
    });
    assert.equal(sim.store.currentResourceVersion(), rv);
    await core.createNamespacedPodEviction({
      name,
      namespace: 'shop',
      body: { metadata: { name, namespace: 'shop' } },
    });
    assert.ok(sim.store.get(PODS, 'shop', name)?.metadata.deletionTimestamp);
  });

  it('gets 429 with a DisruptionBudget cause when the budget allows nothing', async () => {
    await policy.createNamespacedPodDisruptionBudget({
      namespace: 'shop',
      body: { metadata: { name: 'web-all' }, spec: { maxUnavailable: 0, selector: { matchLabels: { app: 'web' } } } },
    });
    await policy.deleteNamespacedPodDisruptionBudget({ name: 'web', namespace: 'shop' });
    await waitUntil(
      'the disruption controller to observe web-all',
      () => {
        const pdb = sim.store.get({ group: 'policy', resource: 'poddisruptionbudgets' }, 'shop', 'web-all');
        const status = (pdb?.status ?? {}) as { observedGeneration?: number; currentHealthy?: number };
        return status.observedGeneration === pdb?.metadata.generation && (status.currentHealthy ?? 0) === 3;
      },
      20_000,
    );
    const web = sim.store.list(PODS, { namespace: 'shop', labelSelector: 'app=web' }).items[0];
    const name = web?.metadata.name ?? '';
    const { code, status } = await apiError(() =>
      core.createNamespacedPodEviction({ name, namespace: 'shop', body: { metadata: { name, namespace: 'shop' } } }),
    );
    assert.equal(code, 429);
    assert.deepEqual((status.details as { causes: unknown[] }).causes, [
      { reason: 'DisruptionBudget', message: 'The disruption budget web-all needs 3 healthy pods and has 3 currently' },
    ]);
    await policy.deleteNamespacedPodDisruptionBudget({ name: 'web-all', namespace: 'shop' });
  });

  it('gets 403 with a NamespaceTerminating cause (key "reason") evicting in a terminating namespace', async () => {
    await core.createNamespace({ body: { metadata: { name: 'closing' } } });
    await core.createNamespacedPod({
      namespace: 'closing',
      body: {
        metadata: { name: 'leftover' },
        // Long enough (simulated) that the pod is still terminating when the eviction arrives.
        spec: {
          nodeName: 'node-1',
          terminationGracePeriodSeconds: 3600,
          containers: [{ name: 'c', image: 'busybox' }],
        },
      },
    });
    await core.deleteNamespace({ name: 'closing' });
    const { code, status } = await apiError(() =>
      core.createNamespacedPodEviction({
        name: 'leftover',
        namespace: 'closing',
        body: { metadata: { name: 'leftover', namespace: 'closing' } },
      }),
    );
    assert.equal(code, 403);
    assert.equal(
      status.message,
      'pods "leftover" is forbidden: unable to create new content in namespace closing because it is being terminated',
    );
    assert.deepEqual((status.details as { causes: unknown[] }).causes, [
      { reason: 'NamespaceTerminating', message: 'namespace closing is being terminated', field: 'metadata.namespace' },
    ]);
  });

  it('drains a node by hand: cordon, evict, retry on 429 until the budget frees, replacements elsewhere', async () => {
    const target = 'node-2';
    const others = ['node-1', 'node-3'];
    const cordon = (name: string, on: boolean) =>
      core.patchNode({ name, body: { spec: { unschedulable: on ? true : null } } }, strategic);
    for (const node of others) await cordon(node, true);
    const labels = { app: 'guarded' };
    await apps.createNamespacedDeployment({
      namespace: 'shop',
      body: {
        metadata: { name: 'guarded' },
        spec: {
          replicas: 2,
          selector: { matchLabels: labels },
          template: { metadata: { labels }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
        },
      },
    });
    await policy.createNamespacedPodDisruptionBudget({
      namespace: 'shop',
      body: { metadata: { name: 'guarded' }, spec: { minAvailable: 1, selector: { matchLabels: labels } } },
    });
    const guarded = (): KubeObject[] => sim.store.list(PODS, { namespace: 'shop', labelSelector: 'app=guarded' }).items;
    await waitUntil(
      'guarded pods on the target',
      () => guarded().filter((p) => nodeOf(p) === target && phaseOf(p) === 'Running').length === 2,
      20_000,
    );
    await waitUntil(
      'the budget to allow one disruption',
      () => {
        const pdb = sim.store.get({ group: 'policy', resource: 'poddisruptionbudgets' }, 'shop', 'guarded');
        return (pdb?.status as { disruptionsAllowed?: number } | undefined)?.disruptionsAllowed === 1;
      },
      20_000,
    );
    for (const node of others) await cordon(node, false);
    await cordon(target, true);
    let refusals = 0;
    await waitUntil(
      `${target} to be empty`,
      async () => {
        const pods = await core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${target}` });
        const movable = pods.items.filter((p) => p.metadata?.ownerReferences?.[0]?.kind !== 'DaemonSet');
        for (const pod of movable.filter((p) => !p.metadata?.deletionTimestamp)) {
          const { name = '', namespace = '' } = pod.metadata ?? {};
          try {
            await core.createNamespacedPodEviction({ name, namespace, body: { metadata: { name, namespace } } });
          } catch (error) {
            if (!(error instanceof ApiException && error.code === 429)) throw error;
            refusals += 1;
          }
        }
        return movable.length === 0;
      },
      60_000,
    );
    assert.ok(refusals >= 1, 'the second guarded pod had to wait for the budget');
    await waitUntil(
      'guarded replicas running elsewhere',
      () => guarded().length === 2 && guarded().every((p) => nodeOf(p) !== target && phaseOf(p) === 'Running'),
      20_000,
    );
    await cordon(target, false);
  });

  it("answers SelfSubjectAccessReview and refuses a ServiceAccount with the apiserver's words", async () => {
    const token = await sim.tokenFor('shop/nobody');
    const saConfig = kubeConfig(sim.kubeconfig(token));
    const review = await saConfig.makeApiClient(AuthorizationV1Api).createSelfSubjectAccessReview({
      body: {
        spec: { resourceAttributes: { namespace: 'shop', verb: 'create', resource: 'pods', subresource: 'eviction' } },
      },
    });
    assert.equal(review.status?.allowed, false);
    const { code, status } = await apiError(() =>
      saConfig.makeApiClient(CoreV1Api).listNamespacedPod({ namespace: 'shop' }),
    );
    assert.equal(code, 403);
    assert.equal(
      status.message,
      'pods is forbidden: User "system:serviceaccount:shop:nobody" cannot list resource "pods" in API group "" in the namespace "shop"',
    );
  });
});
