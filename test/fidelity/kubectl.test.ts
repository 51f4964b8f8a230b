/**
 * Fidelity with the real kubectl (the machine image's, which picks client 1.32 from the simulator's
 * /version): get, apply, describe, cordon/uncordon, drain (refusals, dry run, success, PDB waits),
 * auth can-i, a CRD with printer columns. Skipped with a message when kubectl is absent, except under
 * CI=true, where that fails.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Simulator, startSimulator } from '../../sim/index.ts';
import { whenSettled } from '../../sim/scenarios/index.ts';
import type { KubeObject } from '../../sim/store/types.ts';
import { waitUntil } from '../support/wait.ts';
import { findKubectl, Kubectl } from './kubectl-runner.ts';

const PODS = { group: '', resource: 'pods' };
const NODES = { group: '', resource: 'nodes' };
const binary = findKubectl();
const skip = binary ? false : 'kubectl not found on this machine (the fidelity suite needs /usr/bin/kubectl)';

if (!binary && process.env.CI === 'true') {
  it('kubectl is present in CI', () => assert.fail('kubectl not found and CI=true: the fidelity suite must run in CI'));
}

const nodeNameOf = (pod: KubeObject): string => String((pod.spec as { nodeName?: string }).nodeName ?? '');
const ownerKind = (pod: KubeObject): string => pod.metadata.ownerReferences?.[0]?.kind ?? '';

describe('kubectl against the simulator', { skip }, () => {
  let sim: Simulator;
  let kubectl: Kubectl;

  const podsOn = (node: string): KubeObject[] => sim.store.list(PODS, { fieldSelector: `spec.nodeName=${node}` }).items;
  const unschedulable = (node: string): boolean =>
    (sim.store.mustGet(NODES, undefined, node).spec as { unschedulable?: boolean } | undefined)?.unschedulable === true;
  const ok = async (args: string[]): Promise<string> => {
    const result = await kubectl.run(args);
    assert.equal(result.code, 0, `kubectl ${args.join(' ')} failed:\n${result.stderr}`);
    return result.stdout;
  };

  before(async () => {
    sim = await startSimulator({ scenario: 'small', speed: 20 });
    kubectl = new Kubectl(binary as string, sim.kubeconfig());
    if (sim.scenario) await whenSettled(sim.store, sim.scenario, 20_000);
  });
  after(async () => {
    kubectl?.close();
    await sim?.stop();
  });

  it("runs client 1.32, selected from the simulator's /version", async () => {
    const version = JSON.parse(await ok(['version', '-o', 'json'])) as {
      clientVersion: { major: string; minor: string };
      serverVersion: { gitVersion: string };
    };
    // The machine image's kubectl reports minor "32+" (a vendor build); the "+" is not a version.
    assert.equal(version.clientVersion.major, '1');
    assert.match(version.clientVersion.minor, /^32\+?$/);
    assert.match(version.serverVersion.gitVersion, /^v1\.32\./);
    const agents = new Set(sim.requestLog.all().map((r) => r.userAgent.split(' ')[0]));
    assert.ok(
      [...agents].some((agent) => agent?.startsWith('kubectl/v1.32.')),
      [...agents].join(', '),
    );
  });

  it('get -o wide prints the server-side columns', async () => {
    const out = await ok(['get', 'nodes', '-o', 'wide']);
    const [header, ...rows] = out.trim().split('\n');
    assert.match(header ?? '', /^NAME\s+STATUS\s+ROLES\s+AGE\s+VERSION\s+INTERNAL-IP\s+EXTERNAL-IP\s+OS-IMAGE/);
    assert.deepEqual(
      rows.map((r) => r.split(/\s+/).slice(0, 2)),
      [
        ['node-1', 'Ready'],
        ['node-2', 'Ready'],
        ['node-3', 'Ready'],
      ],
    );
  });

  it('get -o json returns the objects', async () => {
    const list = JSON.parse(await ok(['get', 'pods', '-n', 'shop', '-o', 'json'])) as {
      kind: string;
      items: KubeObject[];
    };
    assert.equal(list.kind, 'List');
    assert.ok(list.items.some((p) => p.metadata.name?.startsWith('web-')));
  });

  it('get -w streams changes', async () => {
    const watch = kubectl.start(['get', 'pods', '-n', 'default', '-w']);
    try {
      await waitUntil('the initial listing', () => watch.output().includes('NAME'), 20_000);
      sim.store.create(PODS, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'watched', namespace: 'default' },
        spec: { containers: [{ name: 'c', image: 'busybox' }] },
      });
      await waitUntil('the watched pod', () => /watched\s+\S+\s+(Pending|Running)/.test(watch.output()), 20_000);
    } finally {
      await watch.stop();
    }
    sim.store.delete(PODS, { namespace: 'default', name: 'watched' }, { gracePeriodSeconds: 0 });
  });

  it('apply -f creates, then updates', async () => {
    const manifest = (replicas: number): string => `
apiVersion: v1
kind: Namespace
metadata: { name: fid }
---
apiVersion: apps/v1
kind: Deployment
metadata: { name: api, namespace: fid }
spec:
  replicas: ${replicas}
  selector: { matchLabels: { app: api } }
  template:
    metadata: { labels: { app: api } }
    spec:
      containers: [{ name: api, image: nginx:1.27 }]
`;
    const created = await kubectl.run(['apply', '-f', '-'], { input: manifest(1) });
    assert.equal(created.code, 0, created.stderr);
    assert.match(created.stdout, /namespace\/fid created/);
    assert.match(created.stdout, /deployment\.apps\/api created/);
    const updated = await kubectl.run(['apply', '-f', '-'], { input: manifest(2) });
    assert.equal(updated.code, 0, updated.stderr);
    assert.match(updated.stdout, /deployment\.apps\/api configured/);
    const stored = sim.store.mustGet({ group: 'apps', resource: 'deployments' }, 'fid', 'api');
    assert.equal((stored.spec as { replicas: number }).replicas, 2);
    assert.equal(stored.metadata.generation, 2);
  });

  it('describe node shows the node and its pods', async () => {
    const out = await ok(['describe', 'node', 'node-1']);
    assert.match(out, /^Name:\s+node-1$/m);
    assert.match(out, /Non-terminated Pods:/);
    assert.match(out, /node-exporter-/);
  });

  it('cordon and uncordon', async () => {
    assert.match(await ok(['cordon', 'node-3']), /node\/node-3 cordoned/);
    assert.equal(unschedulable('node-3'), true);
    assert.match(await ok(['get', 'node', 'node-3']), /Ready,SchedulingDisabled/);
    assert.match(await ok(['uncordon', 'node-3']), /node\/node-3 uncordoned/);
    assert.equal(unschedulable('node-3'), false);
  });

  it("drain refuses a bare pod without --force and a DaemonSet pod without --ignore-daemonsets, in kubectl's words", async () => {
    const debug = sim.store.mustGet(PODS, 'default', 'debug');
    const node = nodeNameOf(debug);
    const result = await kubectl.run(['drain', node, '--timeout=30s']);
    assert.notEqual(result.code, 0);
    assert.match(
      result.stderr,
      /cannot delete Pods that declare no controller \(use --force to override\): default\/debug/,
    );
    assert.match(
      result.stderr,
      /cannot delete DaemonSet-managed Pods \(use --ignore-daemonsets to ignore\): monitoring\/node-exporter-/,
    );
    assert.ok(sim.store.get(PODS, 'default', 'debug'), 'the bare pod is still there');
    await ok(['uncordon', node]);
  });

  it('drain --dry-run=server changes nothing', async () => {
    const node = nodeNameOf(sim.store.mustGet(PODS, 'default', 'debug'));
    const before = podsOn(node).map((p) => p.metadata.uid);
    const mark = sim.requestLog.mark();
    const out = await ok([
      'drain',
      node,
      '--ignore-daemonsets',
      '--delete-emptydir-data',
      '--force',
      '--dry-run=server',
    ]);
    assert.match(out, /\(server dry run\)/);
    assert.deepEqual(sim.requestLog.writes({ since: mark }), []);
    assert.ok(sim.requestLog.all({ since: mark }).some((r) => r.subresource === 'eviction' && r.dryRun));
    assert.equal(unschedulable(node), false);
    assert.deepEqual(
      podsOn(node).map((p) => p.metadata.uid),
      before,
    );
  });

  it('drain --ignore-daemonsets --delete-emptydir-data --force succeeds; replacements run elsewhere', async () => {
    const node = nodeNameOf(sim.store.mustGet(PODS, 'default', 'debug'));
    const result = await kubectl.run([
      'drain',
      node,
      '--ignore-daemonsets',
      '--delete-emptydir-data',
      '--force',
      '--timeout=60s',
    ]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, new RegExp(`node/${node} drained`));
    assert.deepEqual(
      podsOn(node)
        .map(ownerKind)
        .filter((kind) => kind !== 'DaemonSet'),
      [],
    );
    await waitUntil(
      'web replicas running on other nodes',
      () => {
        const web = sim.store.list(PODS, { namespace: 'shop', labelSelector: 'app=web' }).items;
        return (
          web.length === 3 &&
          web.every((p) => nodeNameOf(p) !== node && (p.status as { phase?: string }).phase === 'Running')
        );
      },
      20_000,
    );
    await ok(['uncordon', node]);
  });

  it('a PDB-bound drain waits for the budget and completes as it frees', async () => {
    const target = 'node-2';
    const others = ['node-1', 'node-3'];
    for (const node of others) await ok(['cordon', node]);
    const manifest = `
apiVersion: apps/v1
kind: Deployment
metadata: { name: guarded, namespace: fid }
spec:
  replicas: 2
  selector: { matchLabels: { app: guarded } }
  template:
    metadata: { labels: { app: guarded } }
    spec:
      containers: [{ name: c, image: nginx:1.27 }]
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: { name: guarded, namespace: fid }
spec:
  minAvailable: 1
  selector: { matchLabels: { app: guarded } }
`;
    const applied = await kubectl.run(['apply', '-f', '-'], { input: manifest });
    assert.equal(applied.code, 0, applied.stderr);
    const guarded = (): KubeObject[] => sim.store.list(PODS, { namespace: 'fid', labelSelector: 'app=guarded' }).items;
    await waitUntil(
      'two guarded pods running on the target',
      () =>
        guarded().filter((p) => nodeNameOf(p) === target && (p.status as { phase?: string }).phase === 'Running')
          .length === 2,
      20_000,
    );
    await waitUntil(
      'the budget to allow one disruption',
      () => {
        const pdb = sim.store.get({ group: 'policy', resource: 'poddisruptionbudgets' }, 'fid', 'guarded');
        return (pdb?.status as { disruptionsAllowed?: number } | undefined)?.disruptionsAllowed === 1;
      },
      20_000,
    );
    for (const node of others) await ok(['uncordon', node]);
    const result = await kubectl.run(
      ['drain', target, '--ignore-daemonsets', '--delete-emptydir-data', '--force', '--timeout=90s'],
      {
        timeoutMs: 120_000,
      },
    );
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stderr, /Cannot evict pod as it would violate the pod's disruption budget/);
    assert.match(result.stdout, new RegExp(`node/${target} drained`));
    assert.equal(guarded().filter((p) => nodeNameOf(p) === target).length, 0);
    await ok(['uncordon', target]);
  });

  it('auth can-i answers for the admin, a bound ServiceAccount and one without bindings', async () => {
    // `pods/eviction` on the command line is TYPE/NAME for kubectl; the subresource needs --subresource.
    const evict = ['auth', 'can-i', 'create', 'pods', '--subresource=eviction', '-n', 'shop'];
    assert.equal((await ok(evict)).trim(), 'yes');
    const role = `
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: { name: evictor, namespace: shop }
rules: [{ apiGroups: [""], resources: [pods/eviction], verbs: [create] }]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: { name: evictor, namespace: shop }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: Role, name: evictor }
subjects: [{ kind: ServiceAccount, name: evictor, namespace: shop }]
`;
    const applied = await kubectl.run(['apply', '-f', '-'], { input: role });
    assert.equal(applied.code, 0, applied.stderr);
    const evictor = kubectl.withKubeconfig(sim.kubeconfig(await sim.tokenFor('shop/evictor')));
    const nobody = kubectl.withKubeconfig(sim.kubeconfig(await sim.tokenFor('shop/nobody')));
    try {
      assert.equal((await evictor.run(evict)).stdout.trim(), 'yes');
      const list = await evictor.run(['auth', 'can-i', '--list', '-n', 'shop']);
      assert.equal(list.code, 0, list.stderr);
      assert.match(list.stdout, /^pods\/eviction\s+\[\]\s+\[\]\s+\[create\]$/m);
      const denied = await nobody.run(evict);
      assert.equal(denied.stdout.trim(), 'no');
      assert.equal(denied.code, 1);
      const refused = await nobody.run(['get', 'pods', '-n', 'shop']);
      assert.match(
        refused.stderr,
        /Error from server \(Forbidden\): pods is forbidden: User "system:serviceaccount:shop:nobody" cannot list resource "pods" in API group "" in the namespace "shop"/,
      );
    } finally {
      evictor.close();
      nobody.close();
    }
  });

  it('serves an applied CRD, with its printer columns in kubectl get', async () => {
    const crd = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: { name: nodemaintenances.nodemaintenance.medik8s.io }
spec:
  group: nodemaintenance.medik8s.io
  scope: Cluster
  names: { plural: nodemaintenances, singular: nodemaintenance, kind: NodeMaintenance, shortNames: [nm] }
  versions:
    - name: v1beta1
      served: true
      storage: true
      subresources: { status: {} }
      schema: { openAPIV3Schema: { type: object, x-kubernetes-preserve-unknown-fields: true } }
      additionalPrinterColumns:
        - { name: Node, type: string, jsonPath: .spec.nodeName }
        - { name: Phase, type: string, jsonPath: .status.phase }
`;
    const created = await kubectl.run(['apply', '-f', '-'], { input: crd });
    assert.equal(created.code, 0, created.stderr);
    const cr = `
apiVersion: nodemaintenance.medik8s.io/v1beta1
kind: NodeMaintenance
metadata: { name: nm-node-3 }
spec: { nodeName: node-3, reason: kernel update }
`;
    const applied = await kubectl.run(['apply', '-f', '-'], { input: cr });
    assert.equal(applied.code, 0, applied.stderr);
    const out = await ok(['get', 'nm']);
    // apiextensions serves a CRD's own columns only; Age is the default when it lists none.
    assert.match(out, /^NAME\s+NODE\s+PHASE\s*$/m);
    assert.match(out, /^nm-node-3\s+node-3\s*$/m, 'an absent value prints as an empty cell');
  });
});
