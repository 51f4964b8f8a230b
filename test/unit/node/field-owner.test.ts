/**
 * lib/node/field-owner.ts over the shapes managedFields take: who owns `spec.unschedulable` (a cordon),
 * and whether a cordon is someone else's — the answer Restore uses to keep a person's cordon. Shapes as
 * the apiserver writes them (kubectl's Update, server-side Apply, the status subresource's own entry),
 * and as a cluster that strips managedFields leaves them (none: the API cannot say).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1ManagedFieldsEntry, V1Node } from '@kubernetes/client-node';
import { cordonOwner, FIELD_MANAGER, isCordonedBySomeoneElse } from '../../../lib/node/field-owner.ts';

const UNSCHEDULABLE = { 'f:spec': { 'f:unschedulable': {} } };
const LABELS_ONLY = { 'f:metadata': { 'f:labels': { 'f:team': {} } } };
const TAINTS_ONLY = { 'f:spec': { 'f:taints': {} } };
const AT = '2026-11-27T07:00:00Z';

function entry(manager: string | undefined, fieldsV1: object | undefined, extra: Partial<V1ManagedFieldsEntry> = {}) {
  return {
    ...(manager !== undefined ? { manager } : {}),
    operation: 'Update',
    apiVersion: 'v1',
    fieldsType: 'FieldsV1',
    ...(fieldsV1 !== undefined ? { fieldsV1 } : {}),
    ...extra,
  } as V1ManagedFieldsEntry;
}

function node(unschedulable: boolean | undefined, managedFields?: V1ManagedFieldsEntry[]): V1Node {
  return {
    metadata: { name: 'node-1', ...(managedFields ? { managedFields } : {}) },
    spec: unschedulable === undefined ? {} : { unschedulable },
  };
}

describe('cordonOwner: the field manager that owns spec.unschedulable', () => {
  it('no managedFields (a cluster that strips them): not known', () => {
    assert.deepEqual(cordonOwner(node(true)), { known: false });
    assert.deepEqual(cordonOwner(node(true, [])), { known: false });
  });

  it('entries that own other fields only (labels, taints), or carry no fieldsV1: not known', () => {
    const fields = [entry('kubectl-label', LABELS_ONLY), entry('kubelet', TAINTS_ONLY), entry('someone', undefined)];
    assert.deepEqual(cordonOwner(node(true, fields)), { known: false });
  });

  it("drainbridge's cordon (Update, with a time): drainbridge, its operation and the time as ISO 8601", () => {
    const owner = cordonOwner(node(true, [entry(FIELD_MANAGER, UNSCHEDULABLE, { time: new Date(AT) })]));
    assert.deepEqual(owner, {
      known: true,
      manager: 'drainbridge',
      operation: 'Update',
      time: '2026-11-27T07:00:00.000Z',
    });
  });

  it("a person's cordon written after drainbridge's: the owner is kubectl's field manager", () => {
    // The apiserver moves ownership of a field to its last writer: drainbridge's entry keeps its others.
    const fields = [
      entry(FIELD_MANAGER, { 'f:metadata': { 'f:annotations': { 'f:drainbridge.io/ledger': {} } } }),
      entry('kubectl-cordon', UNSCHEDULABLE),
    ];
    assert.deepEqual(cordonOwner(node(true, fields)), { known: true, manager: 'kubectl-cordon', operation: 'Update' });
  });

  it('a server-side apply owns it: the applier, operation Apply', () => {
    const fields = [entry('node-operator', UNSCHEDULABLE, { operation: 'Apply' })];
    assert.deepEqual(cordonOwner(node(true, fields)), { known: true, manager: 'node-operator', operation: 'Apply' });
  });

  it("a subresource's entry (status) is not the cordon's owner", () => {
    const fields = [entry('kubelet', UNSCHEDULABLE, { subresource: 'status' })];
    assert.deepEqual(cordonOwner(node(true, fields)), { known: false });
    const both = [...fields, entry('kubectl-cordon', UNSCHEDULABLE)];
    assert.equal((cordonOwner(node(true, both)) as { manager?: string }).manager, 'kubectl-cordon');
  });

  it('an entry that owns the field but names no manager: not known', () => {
    assert.deepEqual(cordonOwner(node(true, [entry(undefined, UNSCHEDULABLE)])), { known: false });
    assert.deepEqual(cordonOwner(node(true, [entry('', UNSCHEDULABLE)])), { known: false });
  });

  it('an uncordon is owned too (spec.unschedulable written false): the owner is still reported', () => {
    const owner = cordonOwner(node(false, [entry('kubectl-cordon', UNSCHEDULABLE)]));
    assert.deepEqual(owner, { known: true, manager: 'kubectl-cordon', operation: 'Update' });
  });
});

describe("isCordonedBySomeoneElse: a cordon that is not drainbridge's", () => {
  const cases: [string, V1Node, string | undefined][] = [
    ['cordoned by kubectl after drainbridge', node(true, [entry('kubectl-cordon', UNSCHEDULABLE)]), 'kubectl-cordon'],
    [
      'cordoned by a controller (Apply)',
      node(true, [entry('maintenance-operator', UNSCHEDULABLE, { operation: 'Apply' })]),
      'maintenance-operator',
    ],
    ["drainbridge's own cordon", node(true, [entry(FIELD_MANAGER, UNSCHEDULABLE)]), undefined],
    ['cordoned, no managedFields (cannot be told: the ledger decides)', node(true), undefined],
    ['cordoned, nobody owns the field', node(true, [entry('kubelet', TAINTS_ONLY)]), undefined],
    [
      'not cordoned, the field last written by someone else (an uncordon)',
      node(false, [entry('kubectl-cordon', UNSCHEDULABLE)]),
      undefined,
    ],
    ['no spec.unschedulable at all', node(undefined, [entry('kubectl-cordon', UNSCHEDULABLE)]), undefined],
  ];
  for (const [name, given, manager] of cases) {
    it(`${name}: ${manager ?? 'no'}`, () => {
      const owner = isCordonedBySomeoneElse(given);
      assert.equal(owner?.manager, manager);
      if (manager) assert.equal(owner?.known, true);
    });
  }
});
