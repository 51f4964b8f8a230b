import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { compilePattern, escapeWildcard, matchesPattern } from '../../../lib/bus/event-pattern.ts';
import { InvalidInput } from '../../../lib/errors/index.ts';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Field names that are not operator names (so "$or" alternatives stay patterns). */
const fieldName = fc
  .string({ minLength: 1, maxLength: 6 })
  .filter(
    (key) =>
      ![
        'prefix',
        'suffix',
        'equals-ignore-case',
        'wildcard',
        'anything-but',
        'numeric',
        'cidr',
        'exists',
        '$or',
        '__proto__',
      ].includes(key),
  );
const scalar = fc.oneof(
  fc.string({ maxLength: 8 }),
  fc.integer({ min: -1_000_000, max: 1_000_000 }),
  fc.double({ min: -5e9, max: 5e9, noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant(null),
);
const { event } = fc.letrec((tie) => ({
  event: fc.dictionary(fieldName, tie('value'), { minKeys: 1, maxKeys: 5 }),
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    scalar,
    fc.array(scalar, { maxLength: 4 }),
    tie('event'),
  ),
})) as { event: fc.Arbitrary<{ [key: string]: Json }> };

function randomCase(text: string, g: fc.GeneratorValue): string {
  return [...text].map((c) => (g(fc.boolean) ? c.toUpperCase() : c.toLowerCase())).join('');
}

/** A value-list entry that the scalar `value` satisfies, chosen at random among the operators. */
function matcherFor(value: Json, g: fc.GeneratorValue): Json {
  const choice = g(fc.nat, { max: 7 });
  if (typeof value === 'string') {
    const cut = g(fc.nat, { max: value.length });
    const options: Json[] = [
      value,
      { prefix: value.slice(0, cut) },
      { suffix: value.slice(cut) },
      { 'equals-ignore-case': randomCase(value, g) },
      { prefix: { 'equals-ignore-case': randomCase(value.slice(0, cut), g) } },
      { wildcard: escapeWildcard(value) },
      { wildcard: `${escapeWildcard(value.slice(0, cut))}*` },
      { 'anything-but': `${value}x` },
    ];
    return options[choice] as Json;
  }
  if (typeof value === 'number') {
    const options: Json[] = [
      value,
      { numeric: ['=', value] },
      { numeric: ['>=', value] },
      { numeric: ['<=', value] },
      { 'anything-but': value + 1 },
      { exists: true },
    ];
    return options[choice % options.length] as Json;
  }
  return choice % 2 === 0 ? value : { exists: true };
}

/** A pattern that `source` matches: some of its fields, each with a matcher its value satisfies. */
function patternFrom(source: { [key: string]: Json }, g: fc.GeneratorValue): { [key: string]: Json } {
  const pattern: { [key: string]: Json } = {};
  for (const [key, value] of Object.entries(source)) {
    if (Object.keys(pattern).length > 0 && g(fc.boolean)) continue;
    if (Array.isArray(value)) {
      const leaves = value.filter((v) => !Array.isArray(v) && (v === null || typeof v !== 'object'));
      pattern[key] = leaves.length === 0 ? [{ exists: false }] : [matcherFor(g(fc.constantFrom, ...leaves), g)];
    } else if (value !== null && typeof value === 'object') {
      pattern[key] = patternFrom(value, g);
    } else {
      pattern[key] = [matcherFor(value, g)];
    }
  }
  return pattern;
}

describe('event patterns: properties', () => {
  it('a pattern built from an event’s own values always matches it', () => {
    fc.assert(
      fc.property(event, fc.gen(), (e, g) => compilePattern(patternFrom(e, g)).matches(e)),
      { numRuns: 400 },
    );
  });

  it('anything-but X never matches X (single value, list, prefix)', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.integer()), fc.array(fc.string()), (x, others) => {
        assert.equal(matchesPattern({ f: [{ 'anything-but': x }] }, { f: x }), false);
        if (typeof x === 'string') {
          assert.equal(matchesPattern({ f: [{ 'anything-but': [...others, x] }] }, { f: x }), false);
          if (x.length > 0)
            assert.equal(matchesPattern({ f: [{ 'anything-but': { prefix: x.slice(0, 1) } }] }, { f: x }), false);
          assert.equal(matchesPattern({ f: [{ 'anything-but': { wildcard: escapeWildcard(x) } }] }, { f: x }), false);
        }
      }),
    );
  });

  it('anything-but X is the negation of X on a present scalar', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 3 }), fc.string({ maxLength: 3 }), (x, value) => {
        const positive = matchesPattern({ f: [x] }, { f: value });
        const negative = matchesPattern({ f: [{ 'anything-but': x }] }, { f: value });
        assert.equal(negative, !positive);
      }),
    );
  });

  it('$or matches exactly when one alternative matches', () => {
    fc.assert(
      fc.property(event, event, event, fc.gen(), (a, b, target, g) => {
        const p = patternFrom(a, g);
        const q = patternFrom(b, g);
        const either = matchesPattern({ $or: [p, q] }, target);
        assert.equal(either, matchesPattern(p, target) || matchesPattern(q, target));
      }),
      { numRuns: 300 },
    );
  });

  it('an escaped wildcard matches exactly its own text', () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 6, unit: fc.constantFrom('a', '*', '\\', 'b') }),
        fc.string({ maxLength: 6, unit: fc.constantFrom('a', '*', '\\', 'b') }),
        (s, t) => {
          assert.equal(matchesPattern({ f: [{ wildcard: escapeWildcard(s) }] }, { f: t }), s === t);
        },
      ),
    );
  });

  it('IPv4 cidr matches exactly the addresses sharing the prefix', () => {
    const ip = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255));
    const toInt = (parts: number[]) => parts.reduce((acc, part) => acc * 256 + part, 0);
    fc.assert(
      fc.property(ip, ip, fc.integer({ min: 0, max: 32 }), (network, address, length) => {
        const pattern = { ip: [{ cidr: `${network.join('.')}/${length}` }] };
        const divisor = 2 ** (32 - length);
        const same = Math.floor(toInt(network) / divisor) === Math.floor(toInt(address) / divisor);
        assert.equal(matchesPattern(pattern, { ip: address.join('.') }), same);
      }),
    );
  });

  it('any JSON either compiles or is refused with InvalidInput (never another error)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.anything(), (pattern, e) => {
        try {
          compilePattern(pattern).matches(e);
        } catch (error) {
          assert.ok(error instanceof InvalidInput, String(error));
        }
      }),
      { numRuns: 500 },
    );
  });
});
