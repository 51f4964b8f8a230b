/** fitGrace (lib/branches/pods/grace-fit.ts): a cloud notice's deadline cuts grace periods that would outlast it. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { fitGrace, GRACE_MARGIN_SECONDS, graceCutMessage } from '../../../lib/branches/pods/grace-fit.ts';
import { KUBECTL_DRAIN_DEFAULTS, type Origin, type ResolvedRequest } from '../../../lib/model/request.ts';

const NOW = new Date('2030-01-10T12:00:00.000Z');
const in30s = '2030-01-10T12:00:30.000Z';

function request(origin: Origin, deadline: string | undefined, gracePeriodSeconds = -1): ResolvedRequest {
  return {
    requestId: 'gcp:node-1:preempted:preempted-2030-01-10T12:00:00.000Z',
    requester: 'drainbridge-node-agent/node-1',
    origin,
    target: { nodeName: 'node-1' },
    reason: 'GCE preempted',
    ...(deadline ? { deadline } : {}),
    drain: { ...KUBECTL_DRAIN_DEFAULTS, gracePeriodSeconds },
    nodeName: 'node-1',
  };
}

const pod = (grace?: number): V1Pod => ({
  metadata: { name: 'web-1', namespace: 'shop' },
  spec: { containers: [], ...(grace === undefined ? {} : { terminationGracePeriodSeconds: grace }) },
});

describe('fitGrace', () => {
  it('a cloud notice 30 s ahead: a pod asking 60 s gets what is left less the margin, and the cut is told', () => {
    assert.deepEqual(fitGrace(pod(60), request('gcp', in30s), NOW), {
      seconds: 30 - GRACE_MARGIN_SECONDS,
      cutFrom: 60,
    });
    // Kubernetes' default 30 s does not fit either; a pod asking 10 s keeps its own (-1).
    assert.deepEqual(fitGrace(pod(), request('gcp', in30s), NOW), { seconds: 30 - GRACE_MARGIN_SECONDS, cutFrom: 30 });
    assert.deepEqual(fitGrace(pod(10), request('gcp', in30s), NOW), { seconds: -1 });
  });

  it("the request's own --grace-period is what is cut, not the pod's", () => {
    assert.deepEqual(fitGrace(pod(5), request('aws', in30s, 120), NOW), { seconds: 27, cutFrom: 120 });
    assert.deepEqual(fitGrace(pod(500), request('aws', in30s, 20), NOW), { seconds: 20 });
  });

  it('at or past the deadline: one second, never an immediate kill', () => {
    assert.deepEqual(fitGrace(pod(60), request('azure', '2030-01-10T11:59:00.000Z'), NOW), { seconds: 1, cutFrom: 60 });
  });

  it('no deadline, or a request that is no cloud notice (its deadline is when drainbridge gives up): unchanged', () => {
    assert.deepEqual(fitGrace(pod(60), request('gcp', undefined), NOW), { seconds: -1 });
    for (const origin of ['manual', 'cordon', 'schedule', 'node-maintenance'] as const) {
      assert.deepEqual(fitGrace(pod(60), request(origin, in30s), NOW), { seconds: -1 }, origin);
    }
  });

  it('the report names each pod and both periods', () => {
    const message = graceCutMessage(request('gcp', in30s), [{ pod: 'shop/web-1', from: 60, to: 27 }]);
    assert.equal(
      message,
      `grace periods cut to fit the instance's deadline ${in30s} (GCE preempted): shop/web-1 60→27 s`,
    );
  });
});
