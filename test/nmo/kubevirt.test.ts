/**
 * The older KubeVirt NodeMaintenance (`nodemaintenance.kubevirt.io/v1beta1`) served with
 * deploy/components/nodemaintenance-kubevirt: the example of the node-maintenance-operator README drainbridge
 * grew from (its `deploy/crds/nodemaintenance_cr.yaml`, set maintenance on and off) applied verbatim with the
 * real kubectl against `drainbridge run` and the simulator; the status in that group's names (`totalPods`).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { CoreV1Event } from '@kubernetes/client-node';
import { parseAllDocuments, stringify } from 'yaml';
import { findKubectl } from '../fidelity/kubectl-runner.ts';
import {
  type DrainbridgeProcess,
  spreadScenario,
  startRun,
  startTestCluster,
  type TestCluster,
} from '../forwarder/harness.ts';
import { waitUntil } from '../support/wait.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const KUBEVIRT_CRD = 'nodemaintenances.nodemaintenance.kubevirt.io';

/** The README's example, verbatim. */
const SEED_EXAMPLE = `apiVersion: nodemaintenance.kubevirt.io/v1beta1
kind: NodeMaintenance
metadata:
  name: nodemaintenance-xyz
spec:
  nodeName: node02
  reason: "Test node maintenance"
`;

interface Rendered {
  kind: string;
  metadata: { name: string };
  spec?: { template?: { spec?: { containers?: { env?: { name: string; value?: string }[] }[] } } };
}

/** deploy/overlays/run with the component, rendered by kubectl kustomize. */
function renderRunWithComponent(kubectl: string): Rendered[] {
  const dir = mkdtempSync(join(tmpdir(), 'drainbridge-kv-'));
  const rel = (path: string) => relative(dir, join(ROOT, path));
  writeFileSync(
    join(dir, 'kustomization.yaml'),
    stringify({
      apiVersion: 'kustomize.config.k8s.io/v1beta1',
      kind: 'Kustomization',
      resources: [rel('deploy/base')],
      components: [rel('deploy/components/run'), rel('deploy/components/nodemaintenance-kubevirt')],
    }),
  );
  const text = execFileSync(kubectl, ['kustomize', dir], { encoding: 'utf8' });
  return parseAllDocuments(text).map((doc) => doc.toJSON() as Rendered);
}

describe('the KubeVirt NodeMaintenance group (deploy/components/nodemaintenance-kubevirt)', () => {
  let cluster: TestCluster;
  let run: DrainbridgeProcess;
  let rendered: Rendered[];

  const events = async (): Promise<CoreV1Event[]> => {
    const got = await cluster.kubectl.run(['get', 'events', '-n', 'default', '-o', 'json']);
    assert.equal(got.code, 0, got.stderr);
    return (JSON.parse(got.stdout) as { items: CoreV1Event[] }).items;
  };

  before(async () => {
    const kubectl = findKubectl();
    if (!kubectl) throw new Error('this suite needs the real kubectl on PATH');
    rendered = renderRunWithComponent(kubectl);
    const scenario = { ...spreadScenario(3), nodes: [{ name: 'node01' }, { name: 'node02' }, { name: 'node03' }] };
    cluster = await startTestCluster(scenario);
    // What the component adds to a cluster: the CRD and the forwarder role's rules for the group.
    for (const doc of rendered) {
      const wanted =
        (doc.kind === 'CustomResourceDefinition' && doc.metadata.name === KUBEVIRT_CRD) ||
        (doc.kind === 'ClusterRole' && doc.metadata.name === 'drainbridge-forwarder');
      if (wanted) cluster.sim.apply(stringify(doc), 'deploy/components/nodemaintenance-kubevirt');
    }
    const deployment = rendered.find((doc) => doc.kind === 'Deployment');
    const env = deployment?.spec?.template?.spec?.containers?.[0]?.env ?? [];
    const flag = env.find((e) => e.name === 'DRAINBRIDGE_NODE_MAINTENANCE_KUBEVIRT')?.value;
    assert.equal(flag, 'true', 'the component turns the handling on');
    run = await startRun(cluster, {
      identity: 'kubevirt-nm',
      env: { DRAINBRIDGE_NODE_MAINTENANCE_KUBEVIRT: flag ?? '' },
    });
  });
  after(async () => {
    run?.kill('SIGTERM');
    await run?.exited;
    await cluster?.stop();
  });

  it("the README's example: set maintenance on (Succeeded, totalPods), then off (kubectl delete -f)", async () => {
    assert.ok(rendered.some((doc) => doc.metadata.name === KUBEVIRT_CRD));
    const applied = await cluster.kubectl.run(['apply', '-f', '-'], { input: SEED_EXAMPLE });
    assert.equal(applied.code, 0, applied.stderr);
    const status = async () => {
      const got = await cluster.kubectl.run([
        'get',
        'nodemaintenances.nodemaintenance.kubevirt.io',
        'nodemaintenance-xyz',
        '-o',
        'json',
      ]);
      return got.code === 0 ? (JSON.parse(got.stdout).status as Record<string, unknown> | undefined) : undefined;
    };
    await waitUntil('nodemaintenance-xyz Succeeded', async () => (await status())?.phase === 'Succeeded', 60_000);
    const done = (await status()) ?? {};
    assert.equal(typeof done.totalPods, 'number', "this group's spelling");
    assert.ok((done.totalPods as number) >= (done.evictionPods as number));
    assert.equal(done.totalpods, undefined);
    assert.equal((await cluster.admin.getNode('node02')).spec?.unschedulable, true);
    const begin = (await events()).find(
      (e) => e.reason === 'BeginMaintenance' && e.involvedObject?.name === 'nodemaintenance-xyz',
    );
    assert.equal(begin?.involvedObject?.apiVersion, 'nodemaintenance.kubevirt.io/v1beta1');

    const deleted = await cluster.kubectl.run(['delete', '-f', '-', '--timeout=60s'], { input: SEED_EXAMPLE });
    assert.equal(deleted.code, 0, deleted.stderr);
    assert.notEqual((await cluster.admin.getNode('node02')).spec?.unschedulable, true, 'node02 uncordoned');
  });
});
