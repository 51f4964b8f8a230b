import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { parsePlanArgs } from '../../../cli/commands/plan.ts';
import { drainOptionsFromFlags, parseDurationSeconds } from '../../../lib/branches/pods/flags.ts';
import { type DrainPlanInput, planDrain } from '../../../lib/branches/pods/plan.ts';
import { quorumBlocker } from '../../../lib/branches/pods/quorum.ts';
import { unplaceableReplacements } from '../../../lib/branches/pods/replacements.ts';
import { renderPlanText } from '../../../lib/branches/render.ts';
import { InvalidInput } from '../../../lib/errors/index.ts';
import { isBlocked } from '../../../lib/model/plan.ts';
import { type DrainOptions, KUBECTL_DRAIN_DEFAULTS } from '../../../lib/model/request.ts';
import { NOW, pdb, pod } from './fixtures.ts';

function schedNode(
  name: string,
  extra: { labels?: Record<string, string>; pods?: number; ready?: boolean; unschedulable?: boolean } = {},
): V1Node {
  return {
    metadata: { name, labels: extra.labels ?? {} },
    spec: { unschedulable: extra.unschedulable },
    status: {
      allocatable: { pods: String(extra.pods ?? 110) },
      conditions: [{ type: 'Ready', status: extra.ready === false ? 'False' : 'True' }],
    },
  };
}

function on(p: V1Pod, nodeName: string): V1Pod {
  return { ...p, spec: { ...p.spec, containers: p.spec?.containers ?? [], nodeName } };
}

function input(
  pods: V1Pod[],
  extra: Partial<DrainPlanInput> = {},
  options: Partial<DrainOptions> = {},
): DrainPlanInput {
  const nodes = [schedNode('node-a'), schedNode('node-b')];
  return {
    node: nodes[0] as V1Node,
    nodes,
    podsOnNode: pods,
    allPods: pods,
    budgets: [],
    options: { ...KUBECTL_DRAIN_DEFAULTS, ...options },
    now: NOW,
    daemonSetExists: () => true,
    infraPodSelector: '',
    ...extra,
  };
}

describe('planDrain', () => {
  test('PDBs at 0 and pods under two PDBs are blockers; disableEviction ignores PDBs', () => {
    const web = pod({ name: 'web-1', owner: 'ReplicaSet', labels: { app: 'web', tier: 'front' } });
    const db = pod({ name: 'db-0', owner: 'StatefulSet', labels: { app: 'db' } });
    const budgets = [pdb('web-a', { app: 'web' }, 1), pdb('web-b', { tier: 'front' }, 1), pdb('db', { app: 'db' }, 0)];
    const plan = planDrain(input([web, db], { budgets }));
    const codes = plan.branches[0]?.blockers.map((b) => `${b.code} ${b.item?.name}`);
    assert.deepEqual(codes, ['MultiplePodDisruptionBudgets default/web-1', 'DisruptionBudget default/db-0']);
    const deleting = planDrain(input([web, db], { budgets }, { disableEviction: true }));
    assert.equal(deleting.branches[0]?.blockers.length, 0);
  });

  test('bare, DaemonSet and emptyDir pods and launcher pods are blockers; mirror pods are skipped', () => {
    const pods = [
      pod({ name: 'bare' }),
      pod({ name: 'ds', owner: 'DaemonSet' }),
      pod({ name: 'cache', owner: 'ReplicaSet', emptyDir: true }),
      pod({ name: 'vm', owner: 'VirtualMachineInstance', labels: { 'kubevirt.io': 'virt-launcher' } }),
      pod({ name: 'kube-apiserver', mirror: true }),
    ];
    const plan = planDrain(input(pods));
    const branch = plan.branches[0];
    assert.deepEqual(branch?.blockers.map((b) => b.code).sort(), [
      'BarePod',
      'DaemonSetPod',
      'EmptyDirData',
      'LauncherPod',
    ]);
    assert.deepEqual(
      branch?.skipped.map((s) => s.item.name),
      ['default/kube-apiserver'],
    );
    assert.ok(isBlocked({ nodeName: 'node-a', branches: plan.branches }));
  });

  test('a replacement that fits nowhere else is a warning with the scheduler message, not a blocker', () => {
    const pinned = pod({ name: 'pinned', owner: 'ReplicaSet' });
    const withSelector = {
      ...pinned,
      spec: { ...pinned.spec, containers: [{ name: 'c' }], nodeSelector: { disk: 'ssd' } },
    };
    const plan = planDrain(input([on(withSelector, 'node-a')]));
    assert.deepEqual(plan.branches[0]?.blockers, [], 'an evacuation evicts it: plan does not block on it');
    const warning = plan.warnings.find((line) => line.startsWith('[Unschedulable] replacement of pod '));
    assert.match(warning ?? '', /0\/1 nodes are available: 1 node\(s\) didn't match Pod's node affinity\/selector/);
  });
});

describe('unplaceableReplacements', () => {
  test('capacity taken by one replacement is not offered to the next', () => {
    const nodes = [schedNode('node-a'), schedNode('node-b', { pods: 1 })];
    const a = on(pod({ name: 'a', owner: 'ReplicaSet' }), 'node-a');
    const b = on(pod({ name: 'b', owner: 'ReplicaSet' }), 'node-a');
    const bare = on(pod({ name: 'bare' }), 'node-a');
    const result = unplaceableReplacements([a, b, bare], 'node-a', nodes, [a, b, bare]);
    assert.deepEqual(
      result.map((r) => r.pod.metadata?.name),
      ['b'],
    );
  });
});

describe('quorumBlocker', () => {
  const cp = (name: string, ready = true) =>
    schedNode(name, { labels: { 'node-role.kubernetes.io/control-plane': '' }, ready });
  test('three control-plane nodes, one already down: draining a healthy one loses quorum', () => {
    const nodes = [cp('cp-1'), cp('cp-2'), cp('cp-3', false)];
    assert.equal(quorumBlocker(nodes[0] as V1Node, nodes, [])?.code, 'ControlPlaneQuorum');
  });
  test('three healthy control-plane nodes: one may go', () => {
    const nodes = [cp('cp-1'), cp('cp-2'), cp('cp-3')];
    assert.equal(quorumBlocker(nodes[0] as V1Node, nodes, []), undefined);
  });
  test('a worker is never refused', () => {
    const nodes = [schedNode('w'), cp('cp-1', false)];
    assert.equal(quorumBlocker(nodes[0] as V1Node, nodes, []), undefined);
  });
  test('a member on a node another request holds counts as lost (issue 25)', () => {
    const held = schedNode('cp-2', {
      labels: { 'node-role.kubernetes.io/control-plane': '', 'drainbridge.io/held': 'true' },
    });
    const nodes = [cp('cp-1'), held, cp('cp-3')];
    const blocker = quorumBlocker(nodes[0] as V1Node, nodes, []);
    assert.equal(blocker?.code, 'ControlPlaneQuorum');
    assert.match(
      blocker?.reason ?? '',
      /leave 1 of 3 etcd members healthy; quorum needs 2 \(members on nodes in maintenance count as lost: cp-2\)/,
    );
  });
  test('an etcd member on a cordoned node counts as lost; the node being drained is judged whatever its cordon', () => {
    const nodes = [
      schedNode('cp-1', { labels: { 'node-role.kubernetes.io/control-plane': '' }, unschedulable: true }),
      schedNode('cp-2', { labels: { 'node-role.kubernetes.io/control-plane': '' }, unschedulable: true }),
      cp('cp-3'),
    ];
    const etcd = (nodeName: string): V1Pod => ({
      metadata: { name: `etcd-${nodeName}`, namespace: 'kube-system', labels: { component: 'etcd' } },
      spec: { nodeName, containers: [] },
      status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
    });
    const pods = ['cp-1', 'cp-2', 'cp-3'].map(etcd);
    assert.equal(quorumBlocker(nodes[0] as V1Node, nodes, pods)?.code, 'ControlPlaneQuorum');
    // Nothing else in maintenance: cp-1 (cordoned by the person who asked) may go.
    const alone = [nodes[0] as V1Node, cp('cp-2'), cp('cp-3')];
    assert.equal(quorumBlocker(nodes[0] as V1Node, alone, pods), undefined);
  });
});

describe('flags and arguments', () => {
  test('kubectl drain flags map to DrainOptions with kubectl defaults', () => {
    const options = drainOptionsFromFlags([
      ['force', undefined],
      ['ignore-daemonsets', 'true'],
      ['delete-local-data', undefined],
      ['grace-period', '30'],
      ['timeout', '2m30s'],
      ['pod-selector', 'kubevirt.io!=virt-launcher'],
    ]);
    assert.deepEqual(options, {
      ...KUBECTL_DRAIN_DEFAULTS,
      force: true,
      ignoreDaemonSets: true,
      deleteEmptyDirData: true,
      gracePeriodSeconds: 30,
      timeoutSeconds: 150,
      podSelector: 'kubevirt.io!=virt-launcher',
    });
  });

  test('bad flags name every bad field', () => {
    assert.throws(
      () =>
        drainOptionsFromFlags([
          ['grace-period', 'soon'],
          ['timeout', '5 minutes'],
          ['evict-everything', undefined],
        ]),
      (error: unknown) =>
        error instanceof InvalidInput &&
        error.problems.map((p) => p.path).join(' ') === '--grace-period --timeout --evict-everything',
    );
  });

  test('durations', () => {
    assert.equal(parseDurationSeconds('0'), 0);
    assert.equal(parseDurationSeconds('90s'), 90);
    assert.equal(parseDurationSeconds('1h1m'), 3660);
    assert.equal(parseDurationSeconds('10'), undefined);
  });

  test('plan arguments: node, drain flags, own flags, separated values', () => {
    const args = parsePlanArgs(['node-a', '--force', '--grace-period', '10', '--json', '--kubeconfig=/tmp/k']);
    assert.equal(args.nodeName, 'node-a');
    assert.equal(args.options.force, true);
    assert.equal(args.options.gracePeriodSeconds, 10);
    assert.equal(args.format, 'json');
    assert.equal(args.kubeconfig, '/tmp/k');
    assert.throws(() => parsePlanArgs([]), /missing NODE/);
    assert.equal(parsePlanArgs(['node-a', '-o', 'yaml']).format, 'yaml');
    assert.equal(parsePlanArgs(['node-a', '-o=json']).format, 'json');
    assert.equal(parsePlanArgs(['node-a']).format, 'text');
    assert.throws(() => parsePlanArgs(['node-a', '--json', '-o', 'yaml']), /--json and --output yaml contradict/);
    assert.throws(() => parsePlanArgs(['node-a', '-o', 'wide']), /--output: must be one of json, yaml, not "wide"/);
  });
});

describe('renderPlanText', () => {
  test('lists each branch and says whether it is blocked', () => {
    const plan = planDrain(input([pod({ name: 'web-1', owner: 'ReplicaSet' })]));
    const text = renderPlanText({
      plan: { nodeName: 'node-a', branches: plan.branches },
      warnings: [],
      serverDryRun: false,
    });
    assert.match(text, /Branch pods:\n {2}to evict \(1\):\n {4}default\/web-1/);
    assert.match(text, /Not blocked\.$/);
  });
});
