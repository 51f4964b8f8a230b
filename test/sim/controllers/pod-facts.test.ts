/** Which pod changes re-sync the workload and disruption controllers. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PodFacts } from '../../../sim/controllers/pod-facts.ts';
import type { KubeObject } from '../../../sim/store/types.ts';

function pod(change: {
  annotations?: Record<string, string>;
  labels?: Record<string, string>;
  ready?: string;
}): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'web-1',
      namespace: 'default',
      labels: change.labels ?? { app: 'web' },
      ...(change.annotations ? { annotations: change.annotations } : {}),
    },
    spec: { nodeName: 'n1', containers: [] },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: change.ready ?? 'True' }] },
  };
}

describe('pod facts', () => {
  it('skips a change no controller reads (an annotation) and passes labels, readiness and deletion', () => {
    const facts = new PodFacts();
    assert.equal(facts.matters({ type: 'ADDED', object: pod({}) }), true);
    assert.equal(facts.matters({ type: 'MODIFIED', object: pod({ annotations: { churn: '1' } }) }), false);
    assert.equal(facts.matters({ type: 'MODIFIED', object: pod({ labels: { app: 'web', tier: 'x' } }) }), true);
    assert.equal(
      facts.matters({ type: 'MODIFIED', object: pod({ labels: { app: 'web', tier: 'x' }, ready: 'False' }) }),
      true,
    );
    assert.equal(
      facts.matters({ type: 'MODIFIED', object: pod({ labels: { app: 'web', tier: 'x' }, ready: 'False' }) }),
      false,
    );
    assert.equal(facts.matters({ type: 'DELETED', object: pod({}) }), true);
    // Forgotten once deleted: the same name created again is news.
    assert.equal(facts.matters({ type: 'MODIFIED', object: pod({}) }), true);
  });
});
