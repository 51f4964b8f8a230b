/** deploy/ renders and validates (scripts/validate-manifests.ts), and the validation does catch problems. */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { TARGETS, validateTarget } from '../../scripts/validate-manifests.ts';
import { findKubectl } from '../../sim/kubectl.ts';

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
});
