import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  apiCodeOf,
  apiStatusOf,
  errorForStatus,
  KubeApiError,
  statusFromResponse,
} from '../../../lib/clients/kube/errors.ts';
import { evacuationName, evictionBody } from '../../../lib/clients/kube/paths.ts';
import { ConflictError, TransientError } from '../../../lib/errors/index.ts';

describe('error mapping', () => {
  const status = (code: number, message = 'm', causes: { reason: string }[] = []) =>
    statusFromResponse(code, JSON.stringify({ kind: 'Status', code, message, reason: 'R', details: { causes } }));

  test('409 → ConflictError keeping the status', () => {
    const error = errorForStatus('patch node a', status(409));
    assert.ok(error instanceof ConflictError);
    assert.equal(apiCodeOf(error), 409);
  });

  test('5xx, 429 without a budget cause, no response → TransientError', () => {
    assert.ok(errorForStatus('x', status(503)) instanceof TransientError);
    assert.ok(errorForStatus('x', status(429)) instanceof TransientError);
    assert.ok(
      errorForStatus('x', { code: 0, reason: 'NoResponse', message: 'ECONNRESET', causes: [] }) instanceof
        TransientError,
    );
  });

  test('definite answers stay KubeApiError: 404, 403, budget 429, multiple-PDB 500', () => {
    assert.ok(errorForStatus('x', status(404)) instanceof KubeApiError);
    assert.ok(errorForStatus('x', status(403)) instanceof KubeApiError);
    assert.ok(errorForStatus('x', status(429, 'budget', [{ reason: 'DisruptionBudget' }])) instanceof KubeApiError);
    const multiple = errorForStatus('x', status(500, 'This pod has more than one PodDisruptionBudget, which …'));
    assert.ok(multiple instanceof KubeApiError);
    assert.equal(apiStatusOf(multiple)?.code, 500);
  });

  test('a body that is not JSON is kept as the message', () => {
    assert.deepEqual(statusFromResponse(502, 'Bad Gateway'), {
      code: 502,
      reason: '',
      message: 'Bad Gateway',
      causes: [],
    });
  });
});

describe('builders', () => {
  test('eviction body carries the uid precondition and only a non-negative grace period', () => {
    const pod = { metadata: { name: 'p', namespace: 'n', uid: 'u' } };
    assert.deepEqual(evictionBody(pod, -1), {
      apiVersion: 'policy/v1',
      kind: 'Eviction',
      metadata: { name: 'p', namespace: 'n' },
      deleteOptions: { preconditions: { uid: 'u' } },
    });
    assert.deepEqual(evictionBody(pod, 0, true).deleteOptions, {
      preconditions: { uid: 'u' },
      gracePeriodSeconds: 0,
      dryRun: ['All'],
    });
  });

  test('evacuation names are DNS subdomains and distinct', () => {
    assert.equal(evacuationName('req-123'), 'req-123');
    const a = evacuationName('Req_1');
    const b = evacuationName('req-1');
    assert.match(a, /^[a-z0-9][a-z0-9.-]*[a-z0-9]$/);
    assert.notEqual(a, b);
  });
});
