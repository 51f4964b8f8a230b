/**
 * Custom resources against their CRD's structural schema: pruning, defaulting, OpenAPI validation and
 * x-kubernetes-validations rules, with the apiextensions apiserver's 422 wording. Store-level (the HTTP
 * front and kubectl are covered by test/fidelity/kubectl-crd-schema.test.ts).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { parse } from 'yaml';
import { type ClosableStore, createStore } from '../../sim/store/memory-store.ts';
import { CelCompileError, compileCel, evaluateCompiled, toCelValue } from '../../sim/store/schema/cel.ts';
import type { Schema } from '../../sim/store/schema/index.ts';
import { StatusError } from '../../sim/store/status.ts';
import type { KubeObject } from '../../sim/store/types.ts';

const CRDS = { group: 'apiextensions.k8s.io', resource: 'customresourcedefinitions' };
const NMS = { group: 'nodemaintenance.medik8s.io', resource: 'nodemaintenances' };
const WIDGETS = { group: 'example.io', resource: 'widgets' };

function refusal(write: () => unknown): StatusError {
  try {
    write();
  } catch (error) {
    assert.ok(error instanceof StatusError, `expected a StatusError, got ${String(error)}`);
    return error;
  }
  assert.fail('the write was accepted');
}

const nm = (
  name: string,
  spec: Record<string, unknown> | undefined,
  extra: Record<string, unknown> = {},
): KubeObject => ({
  apiVersion: 'nodemaintenance.medik8s.io/v1beta1',
  kind: 'NodeMaintenance',
  metadata: { name },
  ...(spec ? { spec } : {}),
  ...extra,
});

/** A CRD exercising every keyword the simulator enforces, with immutability and non-empty rules. */
const WIDGET_CRD: KubeObject = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.example.io' },
  spec: {
    group: 'example.io',
    scope: 'Namespaced',
    names: { plural: 'widgets', kind: 'Widget' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: {
          openAPIV3Schema: {
            type: 'object',
            'x-kubernetes-validations': [
              { rule: "self.metadata.name.startsWith('w-')", message: 'names start with w-' },
            ],
            properties: {
              spec: {
                type: 'object',
                required: ['nodeName'],
                'x-kubernetes-validations': [
                  { rule: 'self.nodeName == oldSelf.nodeName', message: 'nodeName is immutable' },
                  {
                    rule: 'size(self.nodeName) > 0',
                    messageExpression: "'nodeName must not be empty, got ' + string(size(self.nodeName))",
                  },
                  { rule: '!has(self.replicas) || self.replicas % 2 == 1' },
                ],
                properties: {
                  nodeName: { type: 'string', maxLength: 12 },
                  mode: { type: 'string', enum: ['Drain', 'Cordon'], default: 'Drain' },
                  replicas: { type: 'integer', minimum: 1, maximum: 9 },
                  label: { type: 'string', minLength: 2 },
                  at: { type: 'string', format: 'date-time' },
                  timeout: { type: 'string', pattern: '^[0-9]+(ms|s|m|h)$' },
                  free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
                  tags: { type: 'object', additionalProperties: { type: 'string' } },
                  items: {
                    type: 'array',
                    maxItems: 2,
                    items: { type: 'object', properties: { n: { type: 'integer' } } },
                  },
                },
              },
              status: {
                type: 'object',
                properties: { phase: { type: 'string' }, since: { type: 'string', format: 'date-time' } },
              },
            },
          },
        },
      },
    ],
  },
};

const widget = (name: string, spec: Record<string, unknown>): KubeObject => ({
  apiVersion: 'example.io/v1',
  kind: 'Widget',
  metadata: { name, namespace: 'default' },
  spec,
});

describe('custom resources against their CRD schema', () => {
  let store: ClosableStore;
  beforeEach(() => {
    store = createStore();
    store.create(CRDS, parse(readFileSync('deploy/base/crds/nodemaintenances.yaml', 'utf8')) as KubeObject);
    store.create(CRDS, WIDGET_CRD);
  });
  afterEach(() => store.close());

  // deploy/base/crds/nodemaintenances.yaml is NMO's schema (its rules may change): only what NMO's CRD has for
  // good is asserted on it — spec.nodeName required, a string. The other keywords use the Widget CRD.
  it('a missing required field: 422 Invalid worded as the API server, with the cause; nothing stored', () => {
    const error = refusal(() => store.create(NMS, nm('x', { reason: 'kernel' })));
    assert.equal(error.code, 422);
    assert.equal(error.reason, 'Invalid');
    assert.match(
      error.message,
      /^NodeMaintenance\.nodemaintenance\.medik8s\.io "x" is invalid: \[?spec\.nodeName: Required value/,
    );
    const details = error.toStatus().details;
    assert.equal(details?.name, 'x');
    assert.equal(details?.group, 'nodemaintenance.medik8s.io');
    assert.equal(details?.kind, 'NodeMaintenance');
    assert.deepEqual(details?.causes?.[0], {
      reason: 'FieldValueRequired',
      message: 'Required value',
      field: 'spec.nodeName',
    });
    assert.equal(store.list(NMS).items.length, 0, 'nothing stored');

    const blocked = refusal(() => store.create(WIDGETS, widget('w-0', {})));
    assert.equal(
      blocked.message,
      'Widget.example.io "w-0" is invalid: [spec.nodeName: Required value, <nil>: Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]',
      'with rules in the schema, a blocking error says the rules were not checked',
    );
  });

  it('defaults a missing field and prunes unknown ones, metadata kept', () => {
    const input = widget('w-1', { nodeName: 'node-1', surprise: true });
    input.extra = 1;
    input.metadata.labels = { a: 'b' };
    const created = store.create(WIDGETS, input);
    assert.deepEqual(created.spec, { nodeName: 'node-1', mode: 'Drain' });
    assert.equal(Object.hasOwn(created, 'extra'), false);
    assert.deepEqual(created.metadata.labels, { a: 'b' });
    const pruned = store.create(NMS, nm('nm-1', { nodeName: 'node-1', surprise: true }));
    assert.equal(Object.hasOwn(pruned.spec as object, 'surprise'), false);
  });

  it('a wrong type, a pattern and a date-time: the validator sentence after the value', () => {
    const typed = refusal(() => store.create(NMS, nm('t', { nodeName: 5 })));
    assert.match(
      typed.message,
      /^NodeMaintenance\.nodemaintenance\.medik8s\.io "t" is invalid: \[?spec\.nodeName: Invalid value: "integer": spec\.nodeName in body must be of type string: "integer"/,
    );
    assert.equal(typed.toStatus().details?.causes?.[0]?.reason, 'FieldValueTypeInvalid');
    const pattern = refusal(() => store.create(WIDGETS, widget('w-p', { nodeName: 'n', timeout: 'soon' })));
    assert.equal(
      pattern.message,
      `Widget.example.io "w-p" is invalid: spec.timeout: Invalid value: "soon": spec.timeout in body should match '^[0-9]+(ms|s|m|h)$'`,
    );
    const created = store.create(WIDGETS, widget('w-d', { nodeName: 'n' }));
    const date = refusal(() =>
      store.update(WIDGETS, { ...created, status: { since: 'yesterday' } }, { subresource: 'status' }),
    );
    assert.equal(
      date.message,
      'Widget.example.io "w-d" is invalid: status.since: Invalid value: "yesterday": status.since in body must be of type date-time: "yesterday"',
    );
    store.update(WIDGETS, { ...created, status: { since: '2026-01-02T03:04:05Z' } }, { subresource: 'status' });
  });

  it('enum, minimum/maximum, minLength/maxLength, maxItems; several errors in one message', () => {
    const error = refusal(() =>
      store.create(
        WIDGETS,
        widget('w-1', {
          nodeName: 'a-very-long-node-name',
          mode: 'Reboot',
          replicas: 11,
          label: 'x',
          items: [{}, {}, {}],
        }),
      ),
    );
    const causes = error.toStatus().details?.causes ?? [];
    assert.deepEqual(
      causes.map((c) => `${c.field}: ${c.message}`),
      [
        'spec.nodeName: Too long: may not be longer than 12',
        'spec.mode: Unsupported value: "Reboot": supported values: "Drain", "Cordon"',
        'spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 9',
        'spec.label: Invalid value: "x": spec.label in body should be at least 2 chars long',
        'spec.items: Too many: 3: must have at most 2 items',
        '<nil>: Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
      ],
    );
    assert.match(error.message, /^Widget\.example\.io "w-1" is invalid: \[spec\.nodeName: Too long/);
  });

  it('additionalProperties and preserve-unknown-fields keep what they allow; list items are checked and pruned', () => {
    const created = store.create(
      WIDGETS,
      widget('w-2', { nodeName: 'n', free: { any: { thing: 1 } }, tags: { a: 'b' }, items: [{ n: 1, gone: true }] }),
    );
    assert.deepEqual(created.spec, {
      nodeName: 'n',
      mode: 'Drain',
      free: { any: { thing: 1 } },
      tags: { a: 'b' },
      items: [{ n: 1 }],
    });
    const error = refusal(() =>
      store.create(WIDGETS, widget('w-3', { nodeName: 'n', tags: { a: 1 }, items: [{ n: 'one' }] })),
    );
    assert.deepEqual(
      (error.toStatus().details?.causes ?? []).map((c) => c.field),
      ['spec.tags.a', 'spec.items[0].n', '<nil>'],
    );
  });

  it('x-kubernetes-validations: a failed rule names its node and the schema type; transition rules only on update', () => {
    const empty = refusal(() => store.create(WIDGETS, widget('w-4', { nodeName: '' })));
    assert.equal(
      empty.message,
      'Widget.example.io "w-4" is invalid: spec: Invalid value: "object": nodeName must not be empty, got 0',
    );
    const even = refusal(() => store.create(WIDGETS, widget('w-4', { nodeName: 'n', replicas: 2 })));
    assert.equal(
      even.message,
      'Widget.example.io "w-4" is invalid: spec: Invalid value: "object": failed rule: !has(self.replicas) || self.replicas % 2 == 1',
    );
    const root = refusal(() => store.create(WIDGETS, widget('x-4', { nodeName: 'n' })));
    assert.equal(
      root.message,
      'Widget.example.io "x-4" is invalid: <nil>: Invalid value: "object": names start with w-',
    );

    const created = store.create(WIDGETS, widget('w-4', { nodeName: 'node-1' }));
    const moved = refusal(() => store.update(WIDGETS, { ...created, spec: { nodeName: 'node-2' } }));
    assert.equal(
      moved.message,
      'Widget.example.io "w-4" is invalid: spec: Invalid value: "object": nodeName is immutable',
    );
    assert.equal((store.mustGet(WIDGETS, 'default', 'w-4').spec as { nodeName: string }).nodeName, 'node-1');
    const relabelled = store.update(WIDGETS, { ...created, spec: { nodeName: 'node-1', label: 'ok' } });
    assert.equal((relabelled.spec as { label: string }).label, 'ok');
    const viaMutate = refusal(() =>
      store.mutate(WIDGETS, { namespace: 'default', name: 'w-4' }, (copy) => {
        (copy.spec as Record<string, unknown>).nodeName = 'node-3';
        return copy;
      }),
    );
    assert.equal(viaMutate.code, 422);
  });

  it('a CRD whose rule is outside the supported CEL subset, or whose pattern is no regular expression, is refused', () => {
    const crd = structuredClone(WIDGET_CRD);
    crd.metadata.name = 'gadgets.example.io';
    const spec = crd.spec as {
      names: Record<string, string>;
      versions: { schema: { openAPIV3Schema: Record<string, unknown> } }[];
    };
    spec.names = { plural: 'gadgets', kind: 'Gadget' };
    const schema = spec.versions[0]?.schema.openAPIV3Schema;
    if (schema) schema['x-kubernetes-validations'] = [{ rule: 'self.metadata.name @ 1' }];
    const error = refusal(() => store.create(CRDS, crd));
    assert.equal(error.code, 422);
    assert.match(
      error.message,
      /spec\.versions\[0\]\.schema\.openAPIV3Schema\.x-kubernetes-validations\[0\]\.rule: Invalid value: "self\.metadata\.name @ 1": compilation failed/,
    );
    assert.equal(store.registry.get({ group: 'example.io', resource: 'gadgets' }), undefined);
    if (schema) {
      schema['x-kubernetes-validations'] = [];
      (schema.properties as Record<string, Record<string, unknown>>).spec = {
        type: 'object',
        properties: { x: { type: 'string', pattern: '(' } },
      };
    }
    const pattern = refusal(() => store.create(CRDS, crd));
    assert.match(
      pattern.message,
      /openAPIV3Schema\.properties\[spec\]\.properties\[x\]\.pattern: Invalid value: "\(": must be a valid regular expression/,
    );
  });
});

describe('CEL as the CRDs use it (evaluated by @marcbachmann/cel-js, values typed by the schema)', () => {
  const object = (properties: Record<string, Schema>): Schema => ({ type: 'object', properties });
  const NODE = object({
    nodeName: { type: 'string' },
    replicas: { type: 'integer' },
    ratio: { type: 'number' },
    list: { type: 'array', items: { type: 'integer' } },
    names: { type: 'array', items: { type: 'string' } },
    map: { type: 'object', additionalProperties: { type: 'integer' } },
    nested: object({ a: { type: 'array', items: {} } }),
  });
  const run = (source: string, self: unknown, oldSelf?: unknown): unknown => {
    const scope: Record<string, unknown> = { self: toCelValue(NODE, self) };
    if (oldSelf !== undefined) scope.oldSelf = toCelValue(NODE, oldSelf);
    return evaluateCompiled(compileCel(source, NODE, 'bool'), scope);
  };
  const cases: [string, unknown, unknown, boolean][] = [
    ['self.nodeName == oldSelf.nodeName', { nodeName: 'x' }, { nodeName: 'x' }, true],
    ['self == oldSelf', { nested: { a: [1, { b: 2 }] } }, { nested: { a: [1, { b: 2 }] } }, true],
    ['self == oldSelf', { replicas: 1 }, { replicas: 2 }, false],
    ["self.nodeName != ''", { nodeName: '' }, undefined, false],
    ['size(self.nodeName) > 0 && self.nodeName.size() == 3', { nodeName: 'abc' }, undefined, true],
    ['size(self.list) >= 2 && self.list.all(x, x > 0)', { list: [1, 2] }, undefined, true],
    ["self.names.exists(x, x == 'b')", { names: ['a', 'b'] }, undefined, true],
    ["'k' in self.map && !('z' in self.map) && self.map['k'] == 1", { map: { k: 1 } }, undefined, true],
    ['!has(self.replicas) || self.replicas % 2 == 1', { replicas: 3 }, undefined, true],
    ['!has(self.replicas) || self.replicas % 2 == 1', {}, undefined, true],
    [
      "self.nodeName.matches('^[a-z-]+$') && self.nodeName.startsWith('no') && self.nodeName.endsWith('-1')",
      { nodeName: 'no-de-1' },
      undefined,
      false,
    ],
    ["self.nodeName.contains('de') && self.nodeName.lowerAscii() == 'node'", { nodeName: 'NoDe' }, undefined, false],
    // `integer` is int and `number` is double: an int field divides as an int, a number field as a double.
    ['self.replicas / 2 == 1 && self.ratio / 2.0 == 1.5', { replicas: 3, ratio: 3 }, undefined, true],
    // An absent field is an error at evaluation, absorbed when the other side of && / || decides.
    ['false && self.replicas == 1', {}, undefined, false],
    ['self.replicas == 1 || true', {}, undefined, true],
    // Objects compare field by field whatever the key order; int and double fields stay apart.
    ['self == oldSelf', { nodeName: 'n', replicas: 1 }, { replicas: 1, nodeName: 'n' }, true],
    ['self.nested == oldSelf.nested', { nested: { a: [1] } }, { nested: { a: [2] } }, false],
  ];
  for (const [source, self, oldSelf, expected] of cases) {
    it(`${source} over ${JSON.stringify(self)} → ${expected}`, () => {
      assert.equal(run(source, self, oldSelf), expected);
    });
  }

  it('transition rules are recognised by naming oldSelf', () => {
    assert.equal(compileCel('self == oldSelf', NODE, 'bool').transition, true);
    assert.equal(compileCel("self.nodeName != ''", NODE, 'bool').transition, false);
  });

  it('an absent field is an evaluation error worded as cel-go; undeclared fields, syntax and type errors do not compile', () => {
    assert.throws(() => run('self.replicas == 1', {}), /^CelEvalError: no such key: replicas$/);
    assert.throws(() => compileCel('self.missing == 1', NODE, 'bool'), CelCompileError);
    assert.throws(() => compileCel('self.a ===', NODE, 'bool'), CelCompileError);
    assert.throws(() => compileCel("self.a == 'open", NODE, 'bool'), /nterminated string/);
    const stringSelf: Schema = { type: 'string' };
    assert.throws(() => compileCel('self == 1', stringSelf, 'bool'), /no such overload: string == int/);
    assert.throws(() => compileCel('size(self)', stringSelf, 'bool'), /must evaluate to bool, not int/);
    assert.equal(compileCel("'got ' + self", stringSelf, 'string').transition, false);
  });
});
