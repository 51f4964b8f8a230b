import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { budgetsCovering, classifyEvictionStatus } from '../../../lib/branches/pods/refusals.ts';
import {
  BACKOFF_MAX_SECONDS,
  backoffSeconds,
  countInFlight,
  INITIAL_DRAIN_STATE,
  isDue,
  recordedBlockers,
  recordOutcome,
  trackDepartures,
} from '../../../lib/branches/pods/tracking.ts';
import { type ApiStatus, statusFromResponse } from '../../../lib/clients/kube/errors.ts';
import { NOW, pdb, pod } from './fixtures.ts';

/** Status bodies worded as the apiserver and KubeVirt word them. */
const BODIES = {
  budget: {
    kind: 'Status',
    status: 'Failure',
    message: "Cannot evict pod as it would violate the pod's disruption budget.",
    reason: 'TooManyRequests',
    details: {
      causes: [
        {
          reason: 'DisruptionBudget',
          message: 'The disruption budget web-pdb needs 2 healthy pods and has 2 currently',
        },
      ],
    },
    code: 429,
  },
  multiple: {
    kind: 'Status',
    status: 'Failure',
    message: 'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.',
    code: 500,
  },
  kubevirt: {
    kind: 'Status',
    message:
      'admission webhook "virt-launcher-eviction-interceptor.kubevirt.io" denied the request: Eviction triggered evacuation of VMI "vms/vm1"',
    reason: 'TooManyRequests',
    code: 429,
  },
  terminating: {
    kind: 'Status',
    message: 'pods "x" is forbidden: unable to create new content in namespace gone because it is being terminated',
    reason: 'Forbidden',
    details: {
      causes: [
        { reason: 'NamespaceTerminating', message: 'namespace gone is being terminated', field: 'metadata.namespace' },
      ],
    },
    code: 403,
  },
  notFound: { kind: 'Status', message: 'pods "x" not found', reason: 'NotFound', code: 404 },
  rbac: {
    kind: 'Status',
    message: 'pods "x" is forbidden: User cannot create resource',
    reason: 'Forbidden',
    code: 403,
  },
};

function statusOf(body: { code: number }): ApiStatus {
  return statusFromResponse(body.code, JSON.stringify(body));
}

describe('classifyEvictionStatus', () => {
  const cases: [string, { code: number }, string, Record<string, string>?][] = [
    ['429 DisruptionBudget names the PDB', BODIES.budget, 'budget', { pdbName: 'web-pdb' }],
    ['500 multiple PDBs', BODIES.multiple, 'multiple-budgets'],
    ['429 KubeVirt evacuation is in progress', BODIES.kubevirt, 'evacuating'],
    ['403 namespace terminating waits', BODIES.terminating, 'namespace-terminating'],
    ['404 is gone', BODIES.notFound, 'gone'],
    ['403 RBAC is a refusal', BODIES.rbac, 'refused'],
  ];
  for (const [title, body, kind, fields] of cases) {
    test(title, () => {
      const outcome = classifyEvictionStatus(statusOf(body));
      assert.equal(outcome.kind, kind);
      for (const [key, value] of Object.entries(fields ?? {})) {
        assert.equal((outcome as unknown as Record<string, unknown>)[key], value);
      }
    });
  }
  test('429 without a cause and timeouts are retried', () => {
    assert.equal(
      classifyEvictionStatus({ code: 429, reason: 'TooManyRequests', message: 'slow down', causes: [] }).kind,
      'retry',
    );
    assert.equal(
      classifyEvictionStatus({ code: 0, reason: 'NoResponse', message: 'timeout', causes: [] }).kind,
      'retry',
    );
  });
});

describe('budgetsCovering', () => {
  test('matches by namespace and selector; empty selectors match nothing', () => {
    const web = pod({ name: 'web-1', labels: { app: 'web' } });
    const empty = { ...pdb('empty', {}, 1), spec: { selector: {} } };
    const budgets = [
      pdb('a', { app: 'web' }, 0),
      pdb('b', { app: 'web' }, 1, 'other'),
      pdb('c', { app: 'db' }, 1),
      empty,
    ];
    assert.deepEqual(
      budgetsCovering(web, budgets).map((b) => b.metadata?.name),
      ['a'],
    );
  });
});

describe('tracking', () => {
  const web = pod({ name: 'web-1', owner: 'ReplicaSet', uid: 'u1' });
  const db = pod({ name: 'db-0', owner: 'StatefulSet', uid: 'u2' });

  test('a refusal backs the pod off and blocks while it is listed', () => {
    const outcome = classifyEvictionStatus(statusOf(BODIES.budget));
    const state = recordOutcome(INITIAL_DRAIN_STATE, web, outcome, { now: NOW, budgets: ' (disruptionsAllowed=0)' });
    assert.equal(isDue(state, web, NOW), false);
    assert.equal(isDue(state, web, new Date(NOW.getTime() + 5_000)), true);
    const [blocker] = recordedBlockers(state, [web]);
    assert.equal(blocker?.code, 'DisruptionBudget');
    assert.match(blocker?.reason ?? '', /PodDisruptionBudget web-pdb \(disruptionsAllowed=0\)/);
    const twice = recordOutcome(state, web, outcome, { now: NOW });
    assert.equal(isDue(twice, web, new Date(NOW.getTime() + 4_999)), false, 'never a tight 429 loop');
    assert.equal(
      isDue(twice, web, new Date(NOW.getTime() + 5_000)),
      true,
      'a PDB refusal is asked again after 5 s, as kubectl',
    );
    const other = { kind: 'retry' as const, message: '429 Too Many Requests' };
    const refusedTwice = recordOutcome(recordOutcome(INITIAL_DRAIN_STATE, web, other, { now: NOW }), web, other, {
      now: NOW,
    });
    assert.equal(isDue(refusedTwice, web, new Date(NOW.getTime() + 5_000)), false, 'other refusals back off doubling');
    assert.equal(isDue(refusedTwice, web, new Date(NOW.getTime() + 10_000)), true);
  });

  test('backoff: PDB refusals every 5 s, others doubling and bounded', () => {
    const budget = { kind: 'budget' as const, pdbName: 'web-pdb', message: 'x' };
    assert.equal(backoffSeconds(7, budget), 5);
    assert.equal(backoffSeconds(1), 5);
    assert.equal(backoffSeconds(2), 10);
    assert.equal(backoffSeconds(50), BACKOFF_MAX_SECONDS);
  });

  test('evicted pods are in flight until gone or replaced (uid change)', () => {
    let state = recordOutcome(INITIAL_DRAIN_STATE, web, { kind: 'evicted' }, { now: NOW });
    state = recordOutcome(state, db, { kind: 'evicted' }, { now: NOW });
    assert.equal(isDue(state, web, NOW), false);
    assert.equal(countInFlight(state, [web, db]), 2);
    const replacement = pod({ name: 'db-0', owner: 'StatefulSet', uid: 'u3' });
    const tracked = trackDepartures(state, [web, replacement], NOW);
    assert.equal(tracked.movedNow, 1);
    assert.deepEqual(tracked.state.moved, { u2: 'default/db-0' });
    assert.equal(isDue(tracked.state, replacement, NOW), true);
  });

  test('pods refused and then gone are not counted as moved', () => {
    const state = recordOutcome(INITIAL_DRAIN_STATE, web, { kind: 'retry', message: '500' }, { now: NOW });
    assert.equal(trackDepartures(state, [], NOW).movedNow, 0);
  });
});
