/** deploy/ renders and validates (scripts/validate-manifests.ts), and the validation does catch problems. */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { parse, parseAllDocuments } from 'yaml';
import { TARGETS, validateTarget } from '../../scripts/validate-manifests.ts';
import { findKubectl } from '../../sim/kubectl.ts';
import { AGENT_RBAC } from '../sources/harness.ts';

const ROOT = new URL('../../', import.meta.url).pathname;

const kubectl = findKubectl();

describe('deploy/ manifests', { skip: kubectl ? false : 'no kubectl' }, () => {
  for (const target of TARGETS) {
    it(`${target} renders and validates`, async () => {
      const result = await validateTarget(kubectl as string, target);
      assert.deepEqual(result.problems, []);
      assert.ok(result.count >= 10);
    });
  }

  it('a wrong type, a writable root filesystem and a node-writing forwarder role are caught', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'drainbridge-kustomize-'));
    writeFileSync(join(dir, 'kustomization.yaml'), 'resources: [bad.yaml]\n');
    writeFileSync(
      join(dir, 'bad.yaml'),
      [
        'apiVersion: apps/v1',
        'kind: Deployment',
        'metadata: { name: x }',
        'spec:',
        '  replicas: two',
        '  selector: { matchLabels: { a: b } }',
        '  template:',
        '    metadata: { labels: { a: b } }',
        '    spec: { containers: [{ name: c, image: i }] }',
        '---',
        'apiVersion: rbac.authorization.k8s.io/v1',
        'kind: ClusterRole',
        'metadata: { name: drainbridge-forwarder }',
        'rules: [{ apiGroups: [""], resources: [nodes], verbs: [get, patch] }]',
      ].join('\n'),
    );
    const { problems } = await validateTarget(kubectl as string, dir);
    const text = problems.join('\n');
    assert.match(text, /replicas must be integer/);
    assert.match(text, /readOnlyRootFilesystem must be true/);
    assert.match(text, /runAsNonRoot must be true/);
    assert.match(text, /read-only on nodes \(has patch\)/);
  });

  it('a node agent without the downward-API node name or a cloud, and a node agent role that watches, are caught', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'drainbridge-kustomize-'));
    writeFileSync(join(dir, 'kustomization.yaml'), 'resources: [bad.yaml]\n');
    writeFileSync(
      join(dir, 'bad.yaml'),
      [
        'apiVersion: apps/v1',
        'kind: DaemonSet',
        'metadata: { name: drainbridge-node-agent }',
        'spec:',
        '  selector: { matchLabels: { a: b } }',
        '  template:',
        '    metadata: { labels: { a: b } }',
        '    spec:',
        '      securityContext: { runAsNonRoot: true }',
        '      containers:',
        '        - name: c',
        '          image: i',
        '          env: [{ name: DRAINBRIDGE_NODE_NAME, value: node-1 }]',
        '          securityContext: { readOnlyRootFilesystem: true, allowPrivilegeEscalation: false }',
        '---',
        'apiVersion: rbac.authorization.k8s.io/v1',
        'kind: ClusterRole',
        'metadata: { name: drainbridge-node-agent }',
        'rules: [{ apiGroups: [""], resources: [nodes], verbs: [get, list, watch] }]',
      ].join('\n'),
    );
    const { problems } = await validateTarget(kubectl as string, dir);
    const text = problems.join('\n');
    assert.match(text, /DRAINBRIDGE_NODE_NAME must come from the downward API/);
    assert.match(text, /DRAINBRIDGE_AGENT_PROVIDER must name the cloud/);
    assert.match(text, /the node agent only reads \(get, list\); has watch/);
  });
});

describe('the node agent role in deploy/ is what the agent tests run under', () => {
  it('deploy/base/rbac/node-agent.yaml has the rules of AGENT_RBAC (test/sources/harness.ts)', () => {
    const deployed = parse(readFileSync(join(ROOT, 'deploy/base/rbac/node-agent.yaml'), 'utf8')) as { rules: unknown };
    const tested = parseAllDocuments(AGENT_RBAC)
      .map((doc) => doc.toJSON() as { kind: string; rules?: unknown })
      .find((doc) => doc.kind === 'ClusterRole');
    assert.deepEqual(deployed.rules, tested?.rules);
  });
});

interface Workload {
  kind: string;
  metadata: { name: string };
  spec: { template: { spec: { containers: { name: string; env?: { name: string; value?: string }[] }[] } } };
}

/** The Deployments and DaemonSets `kubectl kustomize DIR` renders, and their first container's env values. */
function workloadsOf(dir: string): { name: string; env: Map<string, string | undefined> }[] {
  const rendered = execFileSync(kubectl as string, ['kustomize', dir], { encoding: 'utf8' });
  return parseAllDocuments(rendered)
    .map((doc) => doc.toJSON() as Workload)
    .filter((doc) => doc?.kind === 'Deployment' || doc?.kind === 'DaemonSet')
    .map((doc) => ({
      name: `${doc.kind}/${doc.metadata.name}`,
      env: new Map((doc.spec.template.spec.containers[0]?.env ?? []).map((e) => [e.name, e.value])),
    }));
}

/** The bus and region `serverless deploy` uses with its defaults (no --stage, no --region). */
function stackDefaults(): { bus: string; region: string } {
  const text = readFileSync(join(ROOT, 'serverless.yml'), 'utf8');
  // CloudFormation's short tags (!GetAtt, …) are not YAML the parser knows; they are not read here.
  const stack = parse(text, { logLevel: 'silent' }) as {
    provider: { stage: string; region: string };
    resources: { Resources: { DrainbridgeBus: { Properties: { Name: string } } } };
  };
  const defaultOf = (option: string, value: string): string => {
    const found = new RegExp(`^\\$\\{opt:${option},\\s*'([^']+)'\\}$`).exec(value);
    assert.ok(found, `serverless.yml provider.${option} has a default: ${value}`);
    return found[1] as string;
  };
  const stage = defaultOf('stage', stack.provider.stage);
  const bus = stack.resources.Resources.DrainbridgeBus.Properties.Name.replace('${sls:stage}', stage);
  assert.doesNotMatch(bus, /\$\{/, `the bus name resolves: ${bus}`);
  return { bus, region: defaultOf('region', stack.provider.region) };
}

/**
 * Every target whose workloads publish to EventBridge: the forwarder's and the node agents' overlays — not
 * node-agent-run, whose agents publish to `drainbridge run`'s own bus endpoint (components/run-bus).
 */
const PUBLISHING = TARGETS.filter((t) => /overlays\/(forwarder|node-agent)/.test(t) && !/node-agent-run$/.test(t));

describe('the bus the manifests publish to is the one serverless.yml creates', {
  skip: kubectl ? false : 'no kubectl',
}, () => {
  it("every forwarder and node agent workload names the default stage's bus and region", () => {
    const { bus, region } = stackDefaults();
    assert.equal(bus, 'drainbridge-dev');
    assert.ok(PUBLISHING.length >= 5, `targets checked: ${PUBLISHING.join(', ')}`);
    for (const target of PUBLISHING) {
      const workloads = workloadsOf(join(ROOT, target));
      assert.ok(workloads.length >= 1, `${target} renders a workload`);
      for (const workload of workloads) {
        assert.equal(
          workload.env.get('DRAINBRIDGE_EVENT_BUS'),
          bus,
          `${target} ${workload.name}: DRAINBRIDGE_EVENT_BUS`,
        );
        assert.equal(workload.env.get('AWS_REGION'), region, `${target} ${workload.name}: AWS_REGION`);
      }
    }
  });

  it('the overlay deploy/README.md shows ("The bus") changes the bus and the region and nothing else', () => {
    const readme = readFileSync(join(ROOT, 'deploy/README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('**The bus.**'));
    const snippet = /```yaml\n([\s\S]*?)```/.exec(section)?.[1];
    assert.ok(snippet, 'deploy/README.md "The bus" has a yaml example');
    // The example sits in deploy/overlays/my-cluster; here it sits in a temporary folder.
    const dir = mkdtempSync(join(tmpdir(), 'drainbridge-bus-'));
    const forwarder = relative(dir, join(ROOT, 'deploy/overlays/forwarder'));
    writeFileSync(join(dir, 'kustomization.yaml'), snippet.replace('../forwarder', forwarder));
    const [patched] = workloadsOf(dir);
    const [shipped] = workloadsOf(join(ROOT, 'deploy/overlays/forwarder'));
    assert.equal(patched?.env.get('DRAINBRIDGE_EVENT_BUS'), 'drainbridge-prod');
    assert.equal(patched?.env.get('AWS_REGION'), 'us-east-1');
    const rest = (env: Map<string, string | undefined> | undefined) =>
      [...(env ?? [])].filter(([name]) => name !== 'DRAINBRIDGE_EVENT_BUS' && name !== 'AWS_REGION');
    assert.deepEqual(rest(patched?.env), rest(shipped?.env), 'the other variables are kept');
  });
});

interface Rendered {
  kind: string;
  metadata: { name: string };
  rules?: unknown[];
}

const rendered = (dir: string): Rendered[] =>
  parseAllDocuments(execFileSync(kubectl as string, ['kustomize', join(ROOT, dir)], { encoding: 'utf8' }))
    .map((doc) => doc.toJSON() as Rendered)
    .filter(Boolean);

describe('clusters that already run node-maintenance-operator (deploy/components/nmo-installed)', {
  skip: kubectl ? false : 'no kubectl',
}, () => {
  const NM_CRD = 'nodemaintenances.nodemaintenance.medik8s.io';
  const variants = [
    { plain: 'deploy/overlays/forwarder', nmo: 'deploy/overlays/forwarder-nmo' },
    { plain: 'deploy/overlays/run', nmo: 'deploy/overlays/run-nmo' },
  ];

  for (const { plain, nmo } of variants) {
    it(`${nmo}: ${plain} without the NodeMaintenance CRD, handling or rules; nothing else changed`, () => {
      assert.ok(TARGETS.includes(nmo), `${nmo} is validated by npm run validate:manifests`);
      const withNmo = rendered(nmo);
      const without = rendered(plain);
      const names = (docs: Rendered[]) => docs.map((d) => `${d.kind}/${d.metadata.name}`).sort();
      // NMO takes the medik8s node Leases itself, in the namespace it creates: drainbridge's are left out.
      const service = plain.endsWith('run') ? 'run' : 'forwarder';
      const nmoOnly = [
        `CustomResourceDefinition/${NM_CRD}`,
        'Namespace/medik8s-leases',
        'Role/drainbridge-node-leases',
        `RoleBinding/drainbridge-${service}-node-leases`,
        // deploy/components/nodemaintenance-webhook: NMO serves its own webhook.
        'ClusterRole/drainbridge-nodemaintenance-webhook',
        'ClusterRoleBinding/drainbridge-nodemaintenance-webhook',
        'Role/drainbridge-nodemaintenance-webhook',
        'Role/drainbridge-nodemaintenance-webhook-etcd',
        'RoleBinding/drainbridge-nodemaintenance-webhook',
        'RoleBinding/drainbridge-nodemaintenance-webhook-etcd',
        'Service/drainbridge-nodemaintenance-webhook',
        'ValidatingWebhookConfiguration/drainbridge-nodemaintenance',
      ];
      for (const name of nmoOnly) assert.ok(names(without).includes(name), `${plain} has ${name}`);
      assert.deepEqual(
        names(withNmo),
        names(without).filter((name) => !nmoOnly.includes(name)),
        "only drainbridge's NodeMaintenance CRD, the node Leases' namespace and role, and the webhook are left out",
      );
      const [deployment] = workloadsOf(join(ROOT, nmo));
      assert.equal(deployment?.env.get('DRAINBRIDGE_NODE_MAINTENANCE'), 'false');
      assert.equal(workloadsOf(join(ROOT, plain))[0]?.env.get('DRAINBRIDGE_NODE_MAINTENANCE'), undefined);
      // The forwarder's role: read nodes, nothing of NodeMaintenances (test/forwarder/rbac.test.ts runs a
      // forwarder without NodeMaintenance handling under it, both ways).
      const role = (docs: Rendered[]) =>
        docs.find((d) => d.kind === 'ClusterRole' && d.metadata.name === 'drainbridge-forwarder')?.rules;
      assert.deepEqual(role(withNmo), [{ apiGroups: [''], resources: ['nodes'], verbs: ['list', 'watch'] }]);
    });
  }
});
