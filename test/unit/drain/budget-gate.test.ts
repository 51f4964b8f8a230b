import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Pod, V1PodDisruptionBudget } from '@kubernetes/client-node';
import fc from 'fast-check';
import { gateByBudgets } from '../../../lib/branches/pods/budget-gate.ts';

function pod(name: string, labels: Record<string, string>, ready = true, phase = 'Running'): V1Pod {
  return {
    metadata: { name, namespace: 'shop', uid: `uid-${name}`, labels },
    status: { phase, conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
  };
}

function pdb(name: string, app: string, allowed: number, observed = true): V1PodDisruptionBudget {
  return {
    metadata: { name, namespace: 'shop', generation: 2 },
    spec: { selector: { matchLabels: { app } } },
    status: {
      disruptionsAllowed: allowed,
      currentHealthy: 5,
      desiredHealthy: 5,
      expectedPods: 6,
      observedGeneration: observed ? 2 : 1,
    },
  };
}

const names = (pods: readonly V1Pod[]) => pods.map((p) => p.metadata?.name);

describe('gateByBudgets', () => {
  it('asks as many pods as the budget allows and holds the rest with the apiserver wording', () => {
    const pods = ['a', 'b', 'c'].map((n) => pod(n, { app: 'web' }));
    const gate = gateByBudgets(pods, [pdb('web', 'web', 1)]);
    assert.deepEqual(names(gate.attempt), ['a']);
    assert.deepEqual(
      gate.held.map((h) => [h.pod.metadata?.name, h.pdbName]),
      [
        ['b', 'web'],
        ['c', 'web'],
      ],
    );
    assert.equal(gate.held[0]?.message, 'The disruption budget web needs 5 healthy pods and has 5 currently');
  });

  it('leaves to the API what the status cannot decide', () => {
    const budgets = [pdb('web', 'web', 0), pdb('front', 'front', 0), pdb('late', 'late', 0, false)];
    const gate = gateByBudgets(
      [
        pod('no-pdb', { app: 'db' }),
        pod('two-pdbs', { app: 'web', tier: 'x' }),
        pod('unready', { app: 'web' }, false),
        pod('pending', { app: 'web' }, false, 'Pending'),
        pod('not-observed', { app: 'late' }),
      ],
      [...budgets, { ...pdb('tier', 'unused', 0), spec: { selector: { matchLabels: { tier: 'x' } } } }],
    );
    assert.deepEqual(names(gate.attempt), ['no-pdb', 'two-pdbs', 'unready', 'pending', 'not-observed']);
    assert.deepEqual(gate.held, []);
  });

  it('never asks more healthy pods of one PDB than it allows, and holds none it could grant', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 5 }), fc.integer({ min: 0, max: 8 }), (allowed, count) => {
        const pods = Array.from({ length: count }, (_, i) => pod(`p${i}`, { app: 'web' }));
        const gate = gateByBudgets(pods, [pdb('web', 'web', allowed)]);
        assert.equal(gate.attempt.length, Math.min(allowed, count));
        assert.equal(gate.attempt.length + gate.held.length, count);
      }),
    );
  });
});
