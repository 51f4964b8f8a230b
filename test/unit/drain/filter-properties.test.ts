/** Properties of kubectl's filters over random pods and options. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { filterPod } from '../../../lib/branches/pods/filters.ts';
import { KUBECTL_DRAIN_DEFAULTS } from '../../../lib/model/request.ts';
import { NOW, type PodSpec, pod } from './fixtures.ts';

const pods = fc.record({
  owner: fc.constantFrom<PodSpec['owner']>(undefined, 'ReplicaSet', 'DaemonSet', 'StatefulSet', 'Job'),
  phase: fc.constantFrom<PodSpec['phase']>('Pending', 'Running', 'Succeeded', 'Failed'),
  emptyDir: fc.boolean(),
  mirror: fc.boolean(),
  deletedSecondsAgo: fc.option(fc.integer({ min: 0, max: 600 }), { nil: undefined }),
});
const options = fc.record({
  force: fc.boolean(),
  ignoreDaemonSets: fc.boolean(),
  deleteEmptyDirData: fc.boolean(),
  skipWaitForDeleteTimeoutSeconds: fc.constantFrom(0, 60),
});

test('filters: never a mirror pod or a live DaemonSet pod; bare running pods only with --force', () => {
  fc.assert(
    fc.property(pods, options, fc.boolean(), (spec, flags, daemonSetExists) => {
      const subject = pod({ name: 'p', ...spec });
      const status = filterPod(subject, {
        options: { ...KUBECTL_DRAIN_DEFAULTS, ...flags },
        now: NOW,
        daemonSetExists: () => daemonSetExists,
      });
      const finished = spec.phase === 'Succeeded' || spec.phase === 'Failed';
      if (spec.mirror) assert.equal(status.delete, false, 'mirror pods are never deleted');
      if (spec.owner === 'DaemonSet' && daemonSetExists && !finished) assert.equal(status.delete, false);
      if (spec.owner === undefined && !finished && !flags.force) assert.equal(status.delete, false);
      if (spec.emptyDir && !finished && !flags.deleteEmptyDirData) assert.equal(status.delete, false);
      if (status.verdict === 'Error') assert.ok(status.code, 'every refusal carries a blocker code');
    }),
    { numRuns: 500 },
  );
});
