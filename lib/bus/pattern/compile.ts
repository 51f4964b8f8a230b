/**
 * Compiles an EventBridge event pattern into a tree of matchers, refusing anything EventBridge
 * would refuse with the path of the offending part. Matching lives in ../event-pattern.ts.
 */
import { compileOperator, isPlainObject, type LeafMatcher, OPERATORS, type Scalar } from './operators.ts';
import { atSegment, PatternProblem } from './problem.ts';

/** A compiled object level: every field must match, and one alternative of every `$or` group. */
export interface CompiledPattern {
  readonly fields: readonly CompiledField[];
  readonly anyOf: readonly (readonly CompiledPattern[])[];
}

/** A field whose pattern is a value list (a leaf) or a nested object. */
export type CompiledField =
  | { readonly key: string; readonly kind: 'leaf'; readonly matchers: readonly LeafMatcher[] }
  | { readonly key: string; readonly kind: 'object'; readonly pattern: CompiledPattern };

const OR = '$or';
const OPERATOR_KEYS = new Set(Object.keys(OPERATORS));

function exact(expected: Scalar): LeafMatcher {
  return { kind: 'value', test: (value) => value === expected };
}

function compileValueList(values: readonly unknown[]): LeafMatcher[] {
  if (values.length === 0) throw new PatternProblem('empty arrays are not allowed; list at least one value');
  return values.map((entry, i) =>
    atSegment(`[${i}]`, () => {
      if (entry === null || ['string', 'number', 'boolean'].includes(typeof entry)) return exact(entry as Scalar);
      if (isPlainObject(entry)) return compileOperator(entry);
      throw new PatternProblem('must be a string, number, boolean, null or an operator object (arrays do not nest)');
    }),
  );
}

/**
 * Whether `"$or": value` is the OR primitive. As in EventBridge's matcher (aws/event-ruler), it is one
 * only when it holds objects that are patterns rather than operators; otherwise `$or` is an ordinary
 * field name.
 */
function isOrPrimitive(value: unknown): value is Record<string, unknown>[] {
  return (
    Array.isArray(value) &&
    value.length > 0 &&
    value.every((entry) => isPlainObject(entry) && !Object.keys(entry).some((key) => OPERATOR_KEYS.has(key)))
  );
}

function compileOr(alternatives: Record<string, unknown>[]): CompiledPattern[] {
  if (alternatives.length < 2) throw new PatternProblem('"$or" needs at least two alternatives');
  return alternatives.map((alternative, i) => atSegment(`[${i}]`, () => compileObject(alternative)));
}

function compileField(key: string, value: unknown): CompiledField {
  if (Array.isArray(value)) return { key, kind: 'leaf', matchers: compileValueList(value) };
  if (isPlainObject(value)) return { key, kind: 'object', pattern: compileObject(value) };
  throw new PatternProblem(
    `must be an array of values (e.g. [${JSON.stringify(value)}]) or a nested object, not ${value === null ? 'null' : typeof value}`,
  );
}

function compileObject(pattern: Record<string, unknown>): CompiledPattern {
  const entries = Object.entries(pattern);
  if (entries.length === 0) throw new PatternProblem('an empty object matches nothing useful; name at least one field');
  const fields: CompiledField[] = [];
  const anyOf: CompiledPattern[][] = [];
  for (const [key, value] of entries) {
    atSegment(key, () => {
      if (key === OR && isOrPrimitive(value)) anyOf.push(compileOr(value));
      else fields.push(compileField(key, value));
    });
  }
  return { fields, anyOf };
}

/** Compiles a whole pattern: a JSON object, or its text as PutRule takes it. */
export function compileTree(pattern: unknown): CompiledPattern {
  let parsed = pattern;
  if (typeof pattern === 'string') {
    try {
      parsed = JSON.parse(pattern);
    } catch (error) {
      throw new PatternProblem(`is not valid JSON (${(error as Error).message})`);
    }
  }
  if (!isPlainObject(parsed)) throw new PatternProblem('must be a JSON object');
  return compileObject(parsed);
}
