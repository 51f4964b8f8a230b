/**
 * `drainbridge plan` against the simulator, as drainbridge's ServiceAccount: it reports what an
 * evacuation would do, uses server dry-run evictions, and changes nothing (zero writes in the log).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { planNode } from '../../lib/branches/pods/plan-node.ts';
import { renderPlanText } from '../../lib/branches/render.ts';
import type { BranchPlan } from '../../lib/model/plan.ts';
import { KUBECTL_DRAIN_DEFAULTS } from '../../lib/model/request.ts';
import { type DrainSim, SA_USER, startDrainSim } from './harness.ts';

const CONTAINERS = [{ name: 'app', image: 'busybox:1.37' }];

const SCENARIO = {
  name: 'plan',
  podStartupDelaySeconds: 1,
  nodes: [
    {
      name: 'node-1',
      staticPods: [
        { name: 'etcd', namespace: 'kube-system', labels: { component: 'etcd' }, spec: { containers: CONTAINERS } },
      ],
    },
    { name: 'node-2', unschedulable: true },
  ],
  namespaces: ['shop', 'infra'],
  workloads: [
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: 'shop' },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'web' } },
        template: { metadata: { labels: { app: 'web', tier: 'front' } }, spec: { containers: CONTAINERS } },
      },
    },
    {
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name: 'nova-compute', namespace: 'infra' },
      spec: {
        replicas: 1,
        serviceName: 'nova-compute',
        selector: { matchLabels: { app: 'nova-compute' } },
        template: { metadata: { labels: { app: 'nova-compute' } }, spec: { containers: CONTAINERS } },
      },
    },
  ],
  pdbs: [
    {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: 'web', namespace: 'shop' },
      spec: { minAvailable: 2, selector: { matchLabels: { app: 'web' } } },
    },
  ],
  pods: [
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'debug', namespace: 'default' },
      spec: { nodeName: 'node-1', containers: CONTAINERS },
    },
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'virt-launcher-vm1', namespace: 'default', labels: { 'kubevirt.io': 'virt-launcher' } },
      spec: { nodeName: 'node-1', containers: CONTAINERS },
    },
  ],
};

const codes = (branch: BranchPlan | undefined) =>
  branch?.blockers.map((b) => `${b.code} ${b.item?.name ?? ''}`.trim()).sort();

describe('drainbridge plan in the simulator', () => {
  let env: DrainSim;
  before(async () => {
    env = await startDrainSim(SCENARIO);
  });
  after(async () => {
    await env.stop();
  });

  test('reports evictions, skips and blockers, and writes nothing', async () => {
    const mark = env.sim.requestLog.mark();
    const nodePlan = await planNode(env.client, 'node-1', {
      options: { ...KUBECTL_DRAIN_DEFAULTS, ignoreDaemonSets: true },
      infraPodSelector: 'app=nova-compute',
    });
    const [pods, infra] = nodePlan.plan.branches;
    assert.equal(nodePlan.serverDryRun, true);
    assert.deepEqual(
      pods?.toMove.map((i) => i.name.replace(/-[a-z0-9]+-[a-z0-9]{5}$/, '')),
      ['shop/web', 'shop/web'],
    );
    assert.deepEqual(
      pods?.skipped.map((s) => s.item.name),
      ['kube-system/etcd-node-1'],
    );
    const blockers = codes(pods) ?? [];
    assert.ok(blockers.includes('BarePod default/debug'));
    assert.ok(blockers.includes('LauncherPod default/virt-launcher-vm1'));
    assert.equal(blockers.filter((b) => b.startsWith('DisruptionBudget shop/web')).length, 2);
    // node-2 is cordoned, so no replacement can schedule anywhere: a warning (the evacuation evicts them).
    assert.equal(blockers.filter((b) => b.startsWith('Unschedulable')).length, 0);
    assert.equal(
      nodePlan.warnings.filter((w) => w.startsWith('[Unschedulable] replacement of pod shop/web')).length,
      2,
    );
    assert.deepEqual(
      infra?.toMove.map((i) => i.name),
      ['infra/nova-compute-0'],
    );
    const dryRuns = env.sim.requestLog.all({ since: mark, user: SA_USER }).filter((r) => r.subresource === 'eviction');
    assert.ok(dryRuns.length >= 3 && dryRuns.every((r) => r.dryRun), 'server dry-run evictions were made');
    assert.deepEqual(env.sim.requestLog.writes({ since: mark, user: SA_USER }), [], 'plan changes nothing');
    assert.match(renderPlanText(nodePlan), /BLOCKED: \d+ blocker\(s\)/);
  });
});
