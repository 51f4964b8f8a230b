/** The three patch formats, as the apiserver applies them to the fields in use. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  JsonPatchApplyFailed,
  JsonPatchTestFailed,
  jsonPatch,
  mergePatch,
  strategicMergePatch,
} from '../../sim/store/patch.ts';
import { StatusError } from '../../sim/store/status.ts';

describe('JSON merge patch (RFC 7386)', () => {
  it('merges objects, deletes on null, replaces lists', () => {
    const target = { spec: { a: 1, b: 2, list: [1, 2] }, keep: true };
    assert.deepEqual(mergePatch(target, { spec: { b: null, c: 3, list: [3] } }), {
      spec: { a: 1, c: 3, list: [3] },
      keep: true,
    });
  });

  it('is idempotent for patches without null', () => {
    const json = fc.dictionary(fc.string({ maxLength: 3 }), fc.oneof(fc.integer(), fc.string({ maxLength: 3 })));
    fc.assert(
      fc.property(json, json, (target, patch) => {
        const once = mergePatch(target, patch);
        assert.deepEqual(mergePatch(once, patch), once);
      }),
    );
  });
});

describe('strategic merge patch', () => {
  it('merges taints by key and containers by name, keeps the rest', () => {
    const node = {
      spec: {
        taints: [
          { key: 'a', effect: 'NoSchedule' },
          { key: 'b', effect: 'NoSchedule' },
        ],
      },
    };
    assert.deepEqual(
      strategicMergePatch(node, {
        spec: {
          taints: [
            { key: 'b', effect: 'NoExecute' },
            { key: 'c', effect: 'NoSchedule' },
          ],
        },
      }),
      {
        spec: {
          taints: [
            { key: 'a', effect: 'NoSchedule' },
            { key: 'b', effect: 'NoExecute' },
            { key: 'c', effect: 'NoSchedule' },
          ],
        },
      },
    );
  });

  it('honours $patch: delete in a keyed list and $deleteFromPrimitiveList', () => {
    const pod = {
      metadata: { finalizers: ['x', 'y'] },
      status: { conditions: [{ type: 'Ready' }, { type: 'DisruptionTarget' }] },
    };
    assert.deepEqual(
      strategicMergePatch(pod, {
        metadata: { '$deleteFromPrimitiveList/finalizers': ['x'] },
        status: { conditions: [{ type: 'DisruptionTarget', $patch: 'delete' }] },
      }),
      { metadata: { finalizers: ['y'] }, status: { conditions: [{ type: 'Ready' }] } },
    );
  });

  it('cordons: sets spec.unschedulable, and null removes it', () => {
    const cordoned = strategicMergePatch({ spec: {} }, { spec: { unschedulable: true } });
    assert.deepEqual(cordoned, { spec: { unschedulable: true } });
    assert.deepEqual(strategicMergePatch(cordoned, { spec: { unschedulable: null } }), { spec: {} });
  });

  it('ignores $setElementOrder and $retainKeys directives', () => {
    const target = { spec: { containers: [{ name: 'a', image: '1' }] } };
    const patch = { spec: { $setElementOrder: [{ name: 'a' }], containers: [{ name: 'a', image: '2' }] } };
    assert.deepEqual(strategicMergePatch(target, patch), { spec: { containers: [{ name: 'a', image: '2' }] } });
  });
});

describe('JSON patch (RFC 6902)', () => {
  it('adds, replaces, removes, moves, copies and tests', () => {
    const target = { metadata: { labels: { a: '1' } }, list: [1, 2] };
    const result = jsonPatch(target, [
      { op: 'add', path: '/metadata/labels/b~1c', value: '2' },
      { op: 'replace', path: '/list/0', value: 9 },
      { op: 'add', path: '/list/-', value: 3 },
      { op: 'remove', path: '/metadata/labels/a' },
      { op: 'copy', from: '/list', path: '/copy' },
      { op: 'move', from: '/copy', path: '/moved' },
      { op: 'test', path: '/list/0', value: 9 },
    ]);
    assert.deepEqual(result, { metadata: { labels: { 'b/c': '2' } }, list: [9, 2, 3], moved: [9, 2, 3] });
    assert.deepEqual(target, { metadata: { labels: { a: '1' } }, list: [1, 2] }, 'the input is untouched');
  });

  it('fails a test operation or a missing path as not applicable, and refuses a body that is no patch with 400', () => {
    assert.throws(() => jsonPatch({ a: 1 }, [{ op: 'test', path: '/a', value: 2 }]), JsonPatchTestFailed);
    assert.throws(
      () => jsonPatch({ a: 1 }, [{ op: 'replace', path: '/missing/x', value: 2 }]),
      (error: unknown) =>
        error instanceof JsonPatchApplyFailed && /path "\/missing\/x" does not exist/.test(error.message),
    );
    assert.throws(() => jsonPatch({ a: 1 }, [{ op: 'remove', path: '/b' }]), JsonPatchApplyFailed);
    assert.throws(() => jsonPatch({ a: [] }, [{ op: 'add', path: '/a/5', value: 1 }]), JsonPatchApplyFailed);
    assert.throws(
      () => jsonPatch({ a: 1 }, { op: 'add' }),
      (error: unknown) => error instanceof StatusError && error.code === 400,
    );
  });
});
