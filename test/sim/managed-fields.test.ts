/** managedFields on HTTP writes: who owns `spec.unschedulable` after the real kubectl cordons a node. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Simulator, startSimulator } from '../../sim/index.ts';
import type { ManagedFieldsEntry } from '../../sim/server/managed-fields.ts';
import { changedPaths, managerFromUserAgent, nextManagedFields } from '../../sim/server/managed-fields.ts';
import type { KubeObject } from '../../sim/store/types.ts';
import { findKubectl, Kubectl } from '../fidelity/kubectl-runner.ts';
import { NODES } from './helpers.ts';

const node = (extra: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name: 'n1', labels: { a: '1' } },
  spec: { ...extra },
});

const owner = (entries: ManagedFieldsEntry[] | undefined, field: string): ManagedFieldsEntry | undefined =>
  entries?.find((entry) => JSON.stringify(entry.fieldsV1).includes(`"f:${field}"`));

describe('managedFields (pure)', () => {
  const write = {
    manager: 'kubectl',
    operation: 'Update' as const,
    apiVersion: 'v1',
    now: new Date('2026-01-02T03:04:05.678Z'),
  };

  it('the default manager is the User-Agent up to its first slash', () => {
    assert.equal(managerFromUserAgent('kubectl/v1.32.4 (linux/amd64) kubernetes/4cb5f07'), 'kubectl');
    assert.equal(managerFromUserAgent(undefined), 'unknown');
  });

  it('a write takes the fields it changed; others lose them; empty entries go', () => {
    const created = nextManagedFields(undefined, node(), { ...write, manager: 'creator' });
    assert.deepEqual(created[0]?.fieldsV1, { 'f:metadata': { 'f:labels': { 'f:a': {} } }, 'f:spec': {} });
    const before = { ...node(), metadata: { ...node().metadata, managedFields: created } };
    const cordoned = nextManagedFields(before, node({ unschedulable: true }), write);
    assert.equal(owner(cordoned, 'unschedulable')?.manager, 'kubectl');
    assert.equal(owner(cordoned, 'unschedulable')?.time, '2026-01-02T03:04:05Z');
    assert.equal(owner(cordoned, 'a')?.manager, 'creator');
    const relabelled = nextManagedFields(
      { ...node(), metadata: { ...node().metadata, managedFields: created } },
      { ...node(), metadata: { name: 'n1', labels: { a: '2' } } },
      { ...write, manager: 'other' },
    );
    assert.equal(owner(relabelled, 'a')?.manager, 'other', 'the label changed hands');
    assert.equal(owner(relabelled, 'a')?.fieldsV1['f:spec'], undefined);
  });

  it('an unchanged object keeps its entries', () => {
    assert.deepEqual(changedPaths(node(), node(), true), []);
  });
});

describe('managedFields through the API, with the real kubectl', { skip: findKubectl() ? false : 'no kubectl' }, () => {
  let sim: Simulator;
  let kubectl: Kubectl;
  before(async () => {
    sim = await startSimulator({ scenario: 'small' });
    kubectl = new Kubectl(findKubectl() as string, sim.kubeconfig());
  });
  after(async () => {
    kubectl?.close();
    await sim?.stop();
  });

  it('kubectl cordon makes "kubectl" the owner of spec.unschedulable; uncordon removes it', async () => {
    assert.equal((await kubectl.run(['cordon', 'node-1'])).code, 0);
    const cordoned = sim.store.mustGet(NODES, undefined, 'node-1');
    const entry = owner(cordoned.metadata.managedFields as ManagedFieldsEntry[], 'unschedulable');
    assert.equal(entry?.manager, 'kubectl');
    assert.equal(entry?.operation, 'Update');
    assert.match(entry?.time ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.equal((await kubectl.run(['uncordon', 'node-1'])).code, 0);
    const uncordoned = sim.store.mustGet(NODES, undefined, 'node-1');
    assert.equal(owner(uncordoned.metadata.managedFields as ManagedFieldsEntry[], 'unschedulable'), undefined);
  });

  it('the fieldManager query parameter names the manager', async () => {
    const patched = await kubectl.run([
      'patch',
      'node',
      'node-2',
      '--type=merge',
      '--field-manager=my-controller',
      '-p',
      '{"spec":{"unschedulable":true}}',
    ]);
    assert.equal(patched.code, 0, patched.stderr);
    const entries = sim.store.mustGet(NODES, undefined, 'node-2').metadata.managedFields as ManagedFieldsEntry[];
    assert.equal(owner(entries, 'unschedulable')?.manager, 'my-controller');
  });
});
