/** namedExports: both shapes a dynamic import of a CommonJS package takes (Node's, and an ES-module bundle's). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { namedExports } from '../../../lib/util/named-exports.ts';

class PutEventsCommand {}

test("Node's shape (named exports) is returned as it is", () => {
  const imported = { PutEventsCommand, default: { PutEventsCommand } };
  assert.equal(namedExports(imported, 'PutEventsCommand'), imported);
});

test("an ES-module bundle's shape (the exports under default only) gives the exports object", () => {
  const exportsObject = { PutEventsCommand };
  const imported = { default: exportsObject } as unknown as { PutEventsCommand: typeof PutEventsCommand };
  assert.equal(namedExports(imported, 'PutEventsCommand'), exportsObject);
  assert.equal(new (namedExports(imported, 'PutEventsCommand').PutEventsCommand)() instanceof PutEventsCommand, true);
});

test('neither shape holds the export: an error naming it', () => {
  const imported = { default: { Other: 1 } } as unknown as { PutEventsCommand: unknown };
  assert.throws(() => namedExports(imported, 'PutEventsCommand'), /no export "PutEventsCommand"/);
});
