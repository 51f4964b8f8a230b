/** Node → Nova host mapping and its config-rule schema. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { InvalidInput } from '../../../lib/errors/index.ts';
import {
  NOVA_HOST_KEY,
  novaHostOf,
  novaHostRulesSchema,
  novaHostRuleTextSchema,
} from '../../../lib/model/nova-host.ts';

const rules = novaHostRulesSchema.parse([
  { nodeNamePattern: '^(?<short>[^.]+)\\.k8s\\.example$', novaHost: '$<short>' },
  { nodeNamePattern: '^worker-(\\d+)$', novaHost: 'compute-$1' },
]);

describe('novaHostOf', () => {
  const table: [string, Parameters<typeof novaHostOf>[0], string, string][] = [
    ['node name by default', { name: 'compute-7' }, 'compute-7', 'node-name'],
    [
      'annotation wins',
      { name: 'worker-1', annotations: { [NOVA_HOST_KEY]: 'cmp-a' }, labels: { [NOVA_HOST_KEY]: 'cmp-b' } },
      'cmp-a',
      'annotation',
    ],
    ['label before rules', { name: 'worker-1', labels: { [NOVA_HOST_KEY]: 'cmp-b' } }, 'cmp-b', 'label'],
    ['first matching rule, named group', { name: 'node-3.k8s.example' }, 'node-3', 'rule'],
    ['first matching rule, numbered group', { name: 'worker-12' }, 'compute-12', 'rule'],
    ['no rule matches', { name: 'gpu-1' }, 'gpu-1', 'node-name'],
  ];
  for (const [name, node, host, source] of table) {
    test(name, () => assert.deepEqual(novaHostOf(node, rules), { host, source }));
  }

  test('an empty override is bad input naming the annotation', () => {
    assert.throws(
      () => novaHostOf({ name: 'n', annotations: { [NOVA_HOST_KEY]: ' ' } }),
      (e: unknown) =>
        e instanceof InvalidInput &&
        /metadata\.annotations\["drainbridge\.io\/nova-host"\]: must not be empty/.test(e.message),
    );
  });
});

describe('novaHostRulesSchema', () => {
  test('rejects a bad regular expression and unknown keys, naming the field', () => {
    const result = novaHostRulesSchema.safeParse([{ nodeNamePattern: '([', novaHost: 'x', extra: 1 }]);
    assert.equal(result.success, false);
    const paths = result.error?.issues.map((i) => i.path.join('.')) ?? [];
    assert.ok(paths.includes('0.nodeNamePattern'), paths.join());
    assert.ok(result.error?.issues.some((i) => i.code === 'unrecognized_keys'));
  });
});

describe('novaHostRuleTextSchema (the environment variable form)', () => {
  test('node-name, regex: and JSON forms', () => {
    assert.deepEqual(novaHostRuleTextSchema.parse('node-name'), []);
    const [rule] = novaHostRuleTextSchema.parse('regex:^(.*)\\.k8s$=>$1');
    assert.deepEqual(novaHostOf({ name: 'n1.k8s' }, rule ? [rule] : []), { host: 'n1', source: 'rule' });
    assert.equal(novaHostRuleTextSchema.parse('[{"nodeNamePattern":"^a$","novaHost":"b"}]').length, 1);
  });

  test('bad text is refused with a reason', () => {
    assert.equal(novaHostRuleTextSchema.safeParse('label:foo').success, false);
    const bad = novaHostRuleTextSchema.safeParse('regex:([=>x');
    assert.match(bad.error?.issues[0]?.message ?? '', /nodeNamePattern: is not a valid regular expression/);
  });
});
