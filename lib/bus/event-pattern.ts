/**
 * EventBridge event patterns: compile once (validating like PutRule does), then match events.
 * Semantics follow the EventBridge user guide ("Event patterns", "Content filtering") and its open
 * matcher aws/event-ruler; lib/bus/README.md lists what matches and what does not.
 */
import { InvalidInput } from '../errors/index.ts';
import { type CompiledField, type CompiledPattern, compileTree } from './pattern/compile.ts';
import { isPlainObject, type LeafMatcher, type Scalar } from './pattern/operators.ts';
import { joinSegments, PatternProblem } from './pattern/problem.ts';

export { escapeWildcard } from './pattern/wildcard.ts';

/** A validated pattern, ready to test events against. */
export interface EventPattern {
  /** The pattern as given (object form). */
  readonly source: unknown;
  /** Whether `event` (a whole EventBridge event, or any JSON object) matches. */
  matches(event: unknown): boolean;
}

/**
 * Validates and compiles `pattern` (an object, or JSON text). A malformed pattern is an
 * `InvalidInput` whose problem path names the offending part, e.g. `detail.state[0].numeric`.
 */
export function compilePattern(pattern: unknown, what = 'event pattern'): EventPattern {
  let tree: CompiledPattern;
  try {
    tree = compileTree(pattern);
  } catch (error) {
    if (!(error instanceof PatternProblem)) throw error;
    throw new InvalidInput(`invalid ${what}`, [{ path: joinSegments(error.segments), message: error.message }]);
  }
  return { source: pattern, matches: (event) => matchObject(tree, isPlainObject(event) ? event : undefined) };
}

/** One-off convenience: compiles `pattern` and tests `event`. */
export function matchesPattern(pattern: unknown, event: unknown): boolean {
  return compilePattern(pattern).matches(event);
}

function isScalar(value: unknown): value is Scalar {
  return value === null || ['string', 'number', 'boolean'].includes(typeof value);
}

/** The scalars a field holds: itself, or the scalars of an array (arrays flatten; objects are not leaves). */
function leavesOf(value: unknown): Scalar[] {
  if (isScalar(value)) return [value];
  if (Array.isArray(value)) return value.flatMap(leavesOf);
  return [];
}

/** The objects a field holds: itself, or the objects inside an array, each matched on its own. */
function objectsOf(value: unknown): Record<string, unknown>[] {
  if (isPlainObject(value)) return [value];
  if (Array.isArray(value)) return value.flatMap(objectsOf);
  return [];
}

function matchLeaf(matchers: readonly LeafMatcher[], value: unknown): boolean {
  const leaves = leavesOf(value);
  if (leaves.length === 0) return matchers.some((m) => m.kind === 'exists' && !m.exists);
  return matchers.some((m) => (m.kind === 'exists' ? m.exists : leaves.some(m.test)));
}

function matchField(field: CompiledField, event: Record<string, unknown> | undefined): boolean {
  const value = event && Object.hasOwn(event, field.key) ? event[field.key] : undefined;
  if (field.kind === 'leaf') return matchLeaf(field.matchers, value);
  const candidates = objectsOf(value);
  // No object here: its sub-fields are all absent, which only `exists: false` can match.
  if (candidates.length === 0) return matchObject(field.pattern, undefined);
  return candidates.some((candidate) => matchObject(field.pattern, candidate));
}

function matchObject(pattern: CompiledPattern, event: Record<string, unknown> | undefined): boolean {
  return (
    pattern.fields.every((field) => matchField(field, event)) &&
    pattern.anyOf.every((alternatives) => alternatives.some((alternative) => matchObject(alternative, event)))
  );
}
