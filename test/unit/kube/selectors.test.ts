import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { formatSelector, matchesAll, parseSelector, selectorMatches } from '../../../lib/clients/kube/selectors.ts';

describe('label selectors', () => {
  const table: [string, Record<string, string>, boolean][] = [
    ['', { a: '1' }, true],
    ['app=web', { app: 'web' }, true],
    ['app==web', { app: 'web' }, true],
    ['app=web', { app: 'db' }, false],
    ['app!=web', { app: 'db' }, true],
    ['app!=web', {}, true],
    ['kubevirt.io!=virt-launcher', { 'kubevirt.io': 'virt-launcher' }, false],
    ['tier in (a,b)', { tier: 'b' }, true],
    ['tier notin (a,b)', { tier: 'c' }, true],
    ['tier notin (a,b)', {}, true],
    ['gpu', { gpu: '' }, true],
    ['!gpu', { gpu: 'x' }, false],
    ['app=web,tier in (a, b),!legacy', { app: 'web', tier: 'a' }, true],
  ];
  for (const [selector, labels, expected] of table) {
    it(`"${selector}" on ${JSON.stringify(labels)} → ${expected}`, () => {
      assert.equal(matchesAll(parseSelector(selector), labels), expected);
    });
  }

  it('refuses malformed selectors with the offending part named', () => {
    assert.throws(() => parseSelector('app in (a'), /invalid label key "app in \(a"/);
    assert.throws(() => parseSelector('a=b,,c'), /empty term/);
    assert.throws(() => parseSelector('app=we b'), /invalid label key|invalid label value/);
  });

  it('matches structured selectors as the apiserver does for PDBs: {} matches all, none matches nothing', () => {
    assert.equal(selectorMatches({}, { a: '1' }), true);
    assert.equal(selectorMatches(undefined, { a: '1' }), false);
    assert.equal(
      selectorMatches(
        { matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['a'] }] },
        { app: 'web', tier: 'a' },
      ),
      true,
    );
    assert.equal(
      selectorMatches({ matchExpressions: [{ key: 'tier', operator: 'DoesNotExist' }] }, { tier: 'a' }),
      false,
    );
  });

  it('round-trips through formatSelector', () => {
    const key = fc.stringMatching(/^[a-z][a-z0-9]{0,8}$/);
    const value = fc.stringMatching(/^[a-z0-9]{1,6}$/);
    fc.assert(
      fc.property(fc.array(fc.tuple(key, value, fc.boolean()), { minLength: 1, maxLength: 5 }), (terms) => {
        const text = terms.map(([k, v, eq]) => `${k}${eq ? '=' : '!='}${v}`).join(',');
        assert.deepEqual(parseSelector(formatSelector(parseSelector(text))), parseSelector(text));
      }),
    );
  });
});
