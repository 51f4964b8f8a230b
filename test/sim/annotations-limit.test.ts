/** The apiserver's 256 KiB limit on an object's annotations (ValidateAnnotationsSize), as the simulator enforces it. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createStore } from '../../sim/store/index.ts';
import { isStatusError } from '../../sim/store/status.ts';

const NODES = { group: '', resource: 'nodes' };
const LIMIT = 256 * 1024;

function node(annotations: Record<string, string>) {
  return { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1', annotations } };
}

describe('annotations size limit', () => {
  it('accepts exactly 256 KiB of keys and values, refuses one byte more with 422 on create and update', () => {
    const store = createStore();
    try {
      const fits = 'x'.repeat(LIMIT - 1);
      store.create(NODES, node({ a: fits }));
      const error = (() => {
        try {
          store.mutate(NODES, { name: 'n1' }, (copy) => {
            copy.metadata.annotations = { a: fits, b: '' };
            copy.metadata.annotations.bb = 'y';
            return copy;
          });
        } catch (caught) {
          return caught;
        }
        return undefined;
      })();
      assert.ok(isStatusError(error));
      assert.equal(error.code, 422);
      assert.equal(
        error.message,
        'Node "n1" is invalid: metadata.annotations: Too long: must have at most 262144 bytes',
      );
      assert.throws(
        () =>
          store.create(NODES, {
            ...node({ a: `${fits}zz` }),
            metadata: { name: 'n2', annotations: { a: `${fits}zz` } },
          }),
        {
          code: 422,
        },
      );
    } finally {
      store.close();
    }
  });
});
