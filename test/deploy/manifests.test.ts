/** deploy/ renders and validates (scripts/validate-manifests.ts), and the validation does catch problems. */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
