/**
 * The comparison operators EventBridge allows inside a field's value list, each compiled to a
 * predicate on one scalar of the event. An operator is an object with exactly one key.
 */
import { compileCidr } from './cidr.ts';
import { compileNumeric, NUMERIC_LIMIT } from './numeric.ts';
import { atSegment, PatternProblem } from './problem.ts';
import { compileWildcard } from './wildcard.ts';

/** A JSON scalar: what a leaf of an event holds. */
export type Scalar = string | number | boolean | null;

/** One entry of a field's value list: a test on each scalar, or an `exists` check on the field. */
export type LeafMatcher =
  | { readonly kind: 'exists'; readonly exists: boolean }
  | { readonly kind: 'value'; readonly test: (value: Scalar) => boolean };

type StringTest = (text: string) => boolean;

const onStrings =
  (test: StringTest) =>
  (value: Scalar): boolean =>
    typeof value === 'string' && test(value);

function requireString(operand: unknown, what: string): string {
  if (typeof operand !== 'string') throw new PatternProblem(`${what} must be a string`);
  return operand;
}

function requireStrings(operand: unknown, what: string): string[] {
  const list = Array.isArray(operand) ? operand : [operand];
  if (list.length === 0 || !list.every((item) => typeof item === 'string')) {
    throw new PatternProblem(`${what} must be a string or a non-empty list of strings`);
  }
  return list as string[];
}

const IGNORE_CASE = 'equals-ignore-case';

/** `prefix` / `suffix`: a string, or `{ "equals-ignore-case": string }`. */
function compileAffix(operand: unknown, kind: 'prefix' | 'suffix'): StringTest {
  const has = kind === 'prefix' ? (s: string, a: string) => s.startsWith(a) : (s: string, a: string) => s.endsWith(a);
  if (typeof operand === 'string') return (text) => has(text, operand);
  if (isPlainObject(operand) && Object.keys(operand).length === 1 && IGNORE_CASE in operand) {
    const affix = atSegment(IGNORE_CASE, () => requireString(operand[IGNORE_CASE], IGNORE_CASE)).toLowerCase();
    return (text) => has(text.toLowerCase(), affix);
  }
  throw new PatternProblem(`must be a string or { "${IGNORE_CASE}": string }`);
}

function compileIgnoreCase(operand: unknown): StringTest {
  const wanted = new Set(requireStrings(operand, IGNORE_CASE).map((s) => s.toLowerCase()));
  return (text) => wanted.has(text.toLowerCase());
}

function compileWildcards(operand: unknown): StringTest {
  const tests = requireStrings(operand, 'wildcard').map((value, i) =>
    Array.isArray(operand) ? atSegment(`[${i}]`, () => compileWildcard(value)) : compileWildcard(value),
  );
  return (text) => tests.some((test) => test(text));
}

/** The string operators `anything-but` may negate: `{ "prefix": … }` and friends. */
const NEGATABLE: Record<string, (operand: unknown) => StringTest> = {
  prefix: (operand) => compileAffix(requireNonEmpty(operand), 'prefix'),
  suffix: (operand) => compileAffix(requireNonEmpty(operand), 'suffix'),
  [IGNORE_CASE]: compileIgnoreCase,
  wildcard: compileWildcards,
};

function requireNonEmpty(operand: unknown): string {
  const text = requireString(operand, 'the value');
  if (text === '') throw new PatternProblem('must not be empty');
  return text;
}

/** `anything-but`: a string, a number, a list of strings or of numbers, or a negated string operator. */
function compileAnythingBut(operand: unknown): (value: Scalar) => boolean {
  if (typeof operand === 'string' || typeof operand === 'number') return (value) => value !== operand;
  if (Array.isArray(operand)) {
    const allStrings = operand.every((item) => typeof item === 'string');
    const allNumbers = operand.every((item) => typeof item === 'number');
    if (operand.length === 0 || !(allStrings || allNumbers)) {
      throw new PatternProblem('a list must be non-empty and hold only strings or only numbers');
    }
    const excluded = new Set<unknown>(operand);
    return (value) => !excluded.has(value);
  }
  if (isPlainObject(operand)) {
    const [key, inner] = singleEntry(operand, Object.keys(NEGATABLE));
    const test = atSegment(key, () => (NEGATABLE[key] as (o: unknown) => StringTest)(inner));
    return (value) => !(typeof value === 'string' && test(value));
  }
  throw new PatternProblem(
    'must be a string, a number, a list of either, or { prefix | suffix | wildcard | equals-ignore-case }',
  );
}

function compileExists(operand: unknown): LeafMatcher {
  if (typeof operand !== 'boolean') throw new PatternProblem('must be true or false');
  return { kind: 'exists', exists: operand };
}

const value = (test: (value: Scalar) => boolean): LeafMatcher => ({ kind: 'value', test });

/** Every operator a value list may hold, by key. */
export const OPERATORS: Record<string, (operand: unknown) => LeafMatcher> = {
  prefix: (operand) => value(onStrings(compileAffix(operand, 'prefix'))),
  suffix: (operand) => value(onStrings(compileAffix(operand, 'suffix'))),
  [IGNORE_CASE]: (operand) => {
    const wanted = requireString(operand, IGNORE_CASE).toLowerCase();
    return value(onStrings((text) => text.toLowerCase() === wanted));
  },
  wildcard: (operand) => value(onStrings(compileWildcard(operand))),
  'anything-but': (operand) => value(compileAnythingBut(operand)),
  numeric: (operand) => {
    const test = compileNumeric(operand);
    // Numbers beyond EventBridge's numeric range are not comparable there, so they match no range.
    return value((v) => typeof v === 'number' && Math.abs(v) <= NUMERIC_LIMIT && test(v));
  },
  cidr: (operand) => value(onStrings(compileCidr(operand))),
  exists: compileExists,
};

/** True for `{…}` (not null, not an array). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The one key/value of an operator object, refusing none, several or unknown keys. */
export function singleEntry(operator: Record<string, unknown>, allowed: readonly string[]): [string, unknown] {
  const entries = Object.entries(operator);
  if (entries.length !== 1) {
    throw new PatternProblem(`an operator object must have exactly one key, one of ${allowed.join(', ')}`);
  }
  const [key, operand] = entries[0] as [string, unknown];
  if (!allowed.includes(key))
    throw new PatternProblem(`unknown operator "${key}" (expected one of ${allowed.join(', ')})`);
  return [key, operand];
}

/** Compiles one operator object of a value list. */
export function compileOperator(operator: Record<string, unknown>): LeafMatcher {
  const [key, operand] = singleEntry(operator, Object.keys(OPERATORS));
  return atSegment(key, () => (OPERATORS[key] as (o: unknown) => LeafMatcher)(operand));
}
