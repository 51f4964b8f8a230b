/** sim.apply: YAML manifests into the store, for test setup (RBAC from deploy/, CRDs, workloads). */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { InvalidInput } from '../../lib/errors/index.ts';
import type { Simulator } from '../../sim/index.ts';
import { api, startBare } from './helpers.ts';

const MANIFESTS = `
apiVersion: v1
kind: Namespace
metadata: { name: tools }
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: { name: widgets.example.com }
spec:
  group: example.com
  scope: Namespaced
  names: { plural: widgets, kind: Widget }
  versions: [{ name: v1, served: true, storage: true }]
---
apiVersion: example.com/v1
kind: Widget
metadata: { name: w1, namespace: tools }
spec: { size: 1 }
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: { name: widget-reader, namespace: tools }
rules: [{ apiGroups: [example.com], resources: [widgets], verbs: [get, list] }]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: { name: widget-reader, namespace: tools }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: Role, name: widget-reader }
subjects: [{ kind: ServiceAccount, name: reader, namespace: tools }]
`;

describe('sim.apply', () => {
  let sim: Simulator;
  before(async () => {
    sim = await startBare();
  });
  after(async () => {
    await sim.stop();
  });

  it('creates objects in order, CRD kinds included, and a bound ServiceAccount can use them', async () => {
    const stored = sim.apply(MANIFESTS);
    assert.deepEqual(
      stored.map((o) => o.kind),
      ['Namespace', 'CustomResourceDefinition', 'Widget', 'Role', 'RoleBinding'],
    );
    const token = await sim.tokenFor('tools/reader');
    assert.equal((await api(sim, 'GET', '/apis/example.com/v1/namespaces/tools/widgets/w1', { token })).status, 200);
    assert.equal((await api(sim, 'DELETE', '/apis/example.com/v1/namespaces/tools/widgets/w1', { token })).status, 403);
  });

  it('replaces what exists on a second apply', () => {
    const [widget] = sim.apply(MANIFESTS.replace('size: 1', 'size: 2')).filter((o) => o.kind === 'Widget');
    assert.deepEqual(widget?.spec, { size: 2 });
    assert.equal(widget?.metadata.generation, 2);
  });

  it('refuses unknown kinds and documents without a name before writing anything', () => {
    const rv = sim.store.currentResourceVersion();
    assert.throws(
      () =>
        sim.apply(
          'apiVersion: v1\nkind: ConfigMap\nmetadata: { name: ok }\n---\napiVersion: x.io/v1\nkind: Nope\nmetadata: { name: n }\n',
        ),
      (error: unknown) =>
        error instanceof InvalidInput && /document 1\.kind: no resource of kind Nope in x\.io\/v1/.test(error.message),
    );
    assert.throws(
      () => sim.apply('apiVersion: v1\nkind: ConfigMap\nmetadata: {}\n'),
      (error: unknown) =>
        error instanceof InvalidInput && /document 0\.metadata\.name: Required value/.test(error.message),
    );
    assert.equal(sim.store.currentResourceVersion(), rv);
  });

  it("applies the project's own deploy/ manifests (CRDs and RBAC), when present", (t) => {
    const dirs = ['deploy/base/crds', 'deploy/base/rbac'].filter((dir) => existsSync(dir));
    if (dirs.length === 0) {
      t.skip('no deploy/ manifests in this checkout');
      return;
    }
    for (const dir of dirs) {
      for (const file of readdirSync(dir).filter((f) => f.endsWith('.yaml') || f.endsWith('.yml'))) {
        const path = join(dir, file);
        assert.ok(sim.apply(readFileSync(path, 'utf8'), path).length > 0, path);
      }
    }
  });
});
