import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  errorLine,
  type FilterContext,
  filterPod,
  isStuckTerminating,
  MESSAGES,
} from '../../../lib/branches/pods/filters.ts';
import { daemonSetsToCheck, selectPods } from '../../../lib/branches/pods/selection.ts';
import { type DrainOptions, KUBECTL_DRAIN_DEFAULTS } from '../../../lib/model/request.ts';
import { NOW, type PodSpec, pod } from './fixtures.ts';

function context(options: Partial<DrainOptions> = {}, missingDaemonSets: string[] = []): FilterContext {
  return {
    options: { ...KUBECTL_DRAIN_DEFAULTS, ...options },
    now: NOW,
    daemonSetExists: (namespace, name) => !missingDaemonSets.includes(`${namespace}/${name}`),
  };
}

describe('filterPod follows kubectl filters.go', () => {
  const cases: {
    title: string;
    pod: PodSpec;
    options?: Partial<DrainOptions>;
    missing?: string[];
    expect: { delete: boolean; verdict: string; message?: string; code?: string };
  }[] = [
    {
      title: 'replicated pod is evicted',
      pod: { name: 'web', owner: 'ReplicaSet' },
      expect: { delete: true, verdict: 'Okay' },
    },
    {
      title: 'bare pod refused without force',
      pod: { name: 'bare' },
      expect: { delete: false, verdict: 'Error', message: MESSAGES.unmanagedFatal, code: 'BarePod' },
    },
    {
      title: 'bare pod evicted with force and a warning',
      pod: { name: 'bare' },
      options: { force: true },
      expect: { delete: true, verdict: 'Warning', message: MESSAGES.unmanagedWarning },
    },
    {
      title: 'DaemonSet pod refused without ignore-daemonsets',
      pod: { name: 'ds', owner: 'DaemonSet' },
      expect: { delete: false, verdict: 'Error', message: MESSAGES.daemonSetFatal, code: 'DaemonSetPod' },
    },
    {
      title: 'DaemonSet pod skipped with ignore-daemonsets',
      pod: { name: 'ds', owner: 'DaemonSet' },
      options: { ignoreDaemonSets: true },
      expect: { delete: false, verdict: 'Warning', message: MESSAGES.daemonSetWarning },
    },
    {
      title: 'orphaned DaemonSet pod refused without force even with ignore-daemonsets',
      pod: { name: 'ods', owner: 'DaemonSet', ownerName: 'gone' },
      options: { ignoreDaemonSets: true },
      missing: ['default/gone'],
      expect: {
        delete: false,
        verdict: 'Error',
        message: 'daemonsets.apps "gone" not found',
        code: 'OrphanedDaemonSetPod',
      },
    },
    {
      title: 'orphaned DaemonSet pod evicted with force',
      pod: { name: 'ods', owner: 'DaemonSet', ownerName: 'gone' },
      options: { force: true },
      missing: ['default/gone'],
      expect: { delete: true, verdict: 'Okay' },
    },
    {
      title: 'finished DaemonSet pod is evicted',
      pod: { name: 'ds', owner: 'DaemonSet', phase: 'Succeeded' },
      expect: { delete: true, verdict: 'Okay' },
    },
    { title: 'mirror pod skipped', pod: { name: 'etcd', mirror: true }, expect: { delete: false, verdict: 'Skip' } },
    {
      title: 'emptyDir pod refused without delete-emptydir-data',
      pod: { name: 'cache', owner: 'ReplicaSet', emptyDir: true },
      expect: { delete: false, verdict: 'Error', message: MESSAGES.localStorageFatal, code: 'EmptyDirData' },
    },
    {
      title: 'emptyDir warning dropped by the later filter (as kubectl)',
      pod: { name: 'cache', owner: 'ReplicaSet', emptyDir: true },
      options: { deleteEmptyDirData: true },
      expect: { delete: true, verdict: 'Okay' },
    },
    {
      title: 'finished bare emptyDir pod is fine',
      pod: { name: 'done', emptyDir: true, phase: 'Failed' },
      expect: { delete: true, verdict: 'Okay' },
    },
    {
      title: 'pod terminating past skip-wait-for-delete-timeout is skipped',
      pod: { name: 'stuck', owner: 'ReplicaSet', deletedSecondsAgo: 120 },
      options: { skipWaitForDeleteTimeoutSeconds: 60 },
      expect: { delete: false, verdict: 'Skip' },
    },
    {
      title: 'pod terminating for less than the timeout is still evicted',
      pod: { name: 'recent', owner: 'ReplicaSet', deletedSecondsAgo: 30 },
      options: { skipWaitForDeleteTimeoutSeconds: 60 },
      expect: { delete: true, verdict: 'Okay' },
    },
  ];
  for (const c of cases) {
    test(c.title, () => {
      const status = filterPod(pod(c.pod), context(c.options, c.missing));
      assert.equal(status.delete, c.expect.delete);
      assert.equal(status.verdict, c.expect.verdict);
      if (c.expect.message !== undefined) assert.equal(status.message, c.expect.message);
      if (c.expect.code !== undefined) assert.equal(status.code, c.expect.code);
    });
  }
});

describe('kubectl wording', () => {
  test('errors get the "cannot delete" prefix once', () => {
    assert.equal(
      errorLine(MESSAGES.localStorageFatal, ['a/x', 'b/y']),
      'cannot delete Pods with local storage (use --delete-emptydir-data to override): a/x, b/y',
    );
    assert.equal(
      errorLine(MESSAGES.unmanagedFatal, ['a/x']),
      'cannot delete Pods that declare no controller (use --force to override): a/x',
    );
  });

  test('skip-wait-for-delete compares whole seconds, strictly greater', () => {
    const p = pod({ name: 'x', deletedSecondsAgo: 60 });
    assert.equal(isStuckTerminating(p, 60, NOW), false);
    assert.equal(isStuckTerminating(p, 59, NOW), true);
    assert.equal(isStuckTerminating(p, 0, NOW), false);
  });
});

describe('selectPods', () => {
  const pods = [
    pod({ name: 'web', owner: 'ReplicaSet' }),
    pod({ name: 'ds', owner: 'DaemonSet' }),
    pod({ name: 'etcd', mirror: true }),
    pod({ name: 'vm', owner: 'VirtualMachineInstance', labels: { 'kubevirt.io': 'virt-launcher' } }),
    pod({ name: 'nova', owner: 'StatefulSet', labels: { app: 'nova-compute' } }),
    pod({ name: 'bare' }),
  ];

  test('groups refusals like kubectl and keeps launcher and infra pods out of the pods branch', () => {
    const selection = selectPods(pods, { ...context(), branch: 'pods', infraPodSelector: 'app=nova-compute' });
    assert.deepEqual(
      selection.toEvict.map((p) => p.metadata?.name),
      ['web'],
    );
    assert.deepEqual(
      selection.refusals.map((r) => r.line),
      [
        'cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore): default/ds',
        'cannot delete Pods that declare no controller (use --force to override): default/bare',
      ],
    );
    assert.deepEqual(
      selection.launcherPods.map((p) => p.metadata?.name),
      ['vm'],
    );
    assert.deepEqual(
      selection.heldBack.map((p) => p.metadata?.name),
      ['nova'],
    );
    assert.deepEqual(
      selection.skipped.map((s) => s.pod.metadata?.name),
      ['etcd'],
    );
  });

  test('the infra-pods branch takes only infra pods', () => {
    const selection = selectPods(pods, {
      ...context({ force: true, ignoreDaemonSets: true }),
      branch: 'infra-pods',
      infraPodSelector: 'app=nova-compute',
    });
    assert.deepEqual(
      selection.toEvict.map((p) => p.metadata?.name),
      ['nova'],
    );
    assert.equal(selection.launcherPods.length, 0);
    assert.equal(selection.refusals.length, 0);
  });

  test('warnings are grouped by message', () => {
    const selection = selectPods(pods, {
      ...context({ force: true, ignoreDaemonSets: true }),
      branch: 'pods',
      infraPodSelector: '',
    });
    assert.deepEqual(selection.warnings, [
      'ignoring DaemonSet-managed Pods: default/ds',
      'deleting Pods that declare no controller: default/bare',
    ]);
    assert.deepEqual(
      selection.toEvict.map((p) => p.metadata?.name),
      ['web', 'nova', 'bare'],
    );
  });

  test('the pod selector restricts the pods considered', () => {
    const selection = selectPods(pods, {
      ...context({ podSelector: 'kubevirt.io!=virt-launcher,app=nova-compute' }),
      branch: 'pods',
      infraPodSelector: '',
    });
    assert.deepEqual(
      selection.toEvict.map((p) => p.metadata?.name),
      ['nova'],
    );
  });

  test('DaemonSet lookups: running DaemonSet pods only, once each', () => {
    const list = [
      pod({ name: 'a', owner: 'DaemonSet', ownerName: 'agent' }),
      pod({ name: 'b', owner: 'DaemonSet', ownerName: 'agent' }),
      pod({ name: 'c', owner: 'DaemonSet', ownerName: 'old', phase: 'Succeeded' }),
    ];
    assert.deepEqual(daemonSetsToCheck(list), [{ namespace: 'default', name: 'agent' }]);
  });
});
