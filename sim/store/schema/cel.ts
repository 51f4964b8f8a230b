/**
 * CEL for `x-kubernetes-validations`, evaluated by @marcbachmann/cel-js (a CEL implementation; we only
 * declare the variables and convert values). As the apiextensions apiserver does, `self` and `oldSelf`
 * are declared with the CEL type of the rule's schema node, so a rule is type-checked when the CRD is
 * registered (`self.name == 1` on a string field does not compile), and a JSON value is converted by
 * its schema type: `integer` → int (BigInt), `number` → double, objects → maps, arrays → lists.
 * Upstream types an object with `properties` as an object type with declared fields; here it is a
 * `map<string, dyn>`, so a selection of an undeclared field is found at evaluation ("no such key"), not
 * at registration. String formats (date-time, duration, byte) stay strings.
 */
import {
  type ASTNode,
  TypeError as CelTypeError,
  Environment,
  EvaluationError,
  ParseError,
  type ParseResult,
} from '@marcbachmann/cel-js';
import { isPlainObject, type Schema } from './types.ts';

/** A rule that did not compile (syntax or type error), with the library's one-line reason. */
export class CelCompileError extends Error {
  override name = 'CelCompileError';
}

/** A rule whose evaluation failed (a missing key, no overload, division by zero …). */
export class CelEvalError extends Error {
  override name = 'CelEvalError';
}

/** The CEL type the apiserver gives a schema node (objects with fields simplified to maps, see above). */
export function celTypeOf(schema: Schema | undefined): string {
  if (!schema || schema['x-kubernetes-int-or-string']) return 'dyn';
  switch (schema.type) {
    case 'string':
      return 'string';
    case 'integer':
      return 'int';
    case 'number':
      return 'double';
    case 'boolean':
      return 'bool';
    case 'array':
      return `list<${celTypeOf(schema.items)}>`;
    case 'object': {
      const values = typeof schema.additionalProperties === 'object' ? celTypeOf(schema.additionalProperties) : 'dyn';
      return `map<string, ${values}>`;
    }
    default:
      return 'dyn';
  }
}

const environments = new Map<string, Environment>();

/** One environment per type of `self` (building one is the expensive part), with `oldSelf` alike. */
function environmentFor(selfType: string): Environment {
  let env = environments.get(selfType);
  if (!env) {
    // Optional types are part of the apiserver's CEL environment (`self.?x`, `optional.of`).
    env = new Environment({ enableOptionalTypes: true })
      .registerVariable('self', selfType)
      .registerVariable('oldSelf', selfType);
    environments.set(selfType, env);
  }
  return env;
}

/** A compiled rule: callable with `{ self, oldSelf? }`, and whether it is a transition rule. */
export interface CompiledCel {
  readonly program: ParseResult;
  /** The expression names `oldSelf`: the apiserver runs it only on an update with an old value. */
  readonly transition: boolean;
}

function refersTo(node: unknown, name: string): boolean {
  if (Array.isArray(node)) return node.some((each) => refersTo(each, name));
  if (typeof node !== 'object' || node === null || !('op' in node)) return false;
  const ast = node as ASTNode;
  if (ast.op === 'id') return ast.args === name;
  return refersTo(ast.args, name);
}

const summaryOf = (error: Error): string => ('summary' in error ? String(error.summary) : error.message);
const compiled = new Map<string, CompiledCel>();

/**
 * Parses and type-checks `source` with `self` of `schema`'s type; `resultType` is what the expression
 * must evaluate to (`bool` for a rule, `string` for a messageExpression). Cached; throws CelCompileError.
 */
export function compileCel(source: string, schema: Schema | undefined, resultType: 'bool' | 'string'): CompiledCel {
  const selfType = celTypeOf(schema);
  const key = `${selfType}\u0000${resultType}\u0000${source}`;
  const cached = compiled.get(key);
  if (cached) return cached;
  let program: ParseResult;
  try {
    program = environmentFor(selfType).parse(source);
  } catch (error) {
    if (error instanceof ParseError) throw new CelCompileError(summaryOf(error));
    throw error;
  }
  const checked = program.check();
  if (!checked.valid) throw new CelCompileError(checked.error ? summaryOf(checked.error) : 'type check failed');
  if (checked.type !== resultType && checked.type !== 'dyn') {
    throw new CelCompileError(`must evaluate to ${resultType}, not ${checked.type}`);
  }
  const result = { program, transition: refersTo(program.ast, 'oldSelf') };
  compiled.set(key, result);
  return result;
}

/** A JSON value as CEL sees it under `schema`: integers as BigInt, the rest by structure. */
export function toCelValue(schema: Schema | undefined, value: unknown): unknown {
  if (value === null || value === undefined) return value;
  if (typeof value === 'number') {
    const integral = schema?.type === 'integer' || (schema?.type !== 'number' && Number.isInteger(value));
    return integral ? BigInt(value) : value;
  }
  if (Array.isArray(value)) return value.map((item) => toCelValue(schema?.items, item));
  if (!isPlainObject(value)) return value;
  const extra = typeof schema?.additionalProperties === 'object' ? schema.additionalProperties : undefined;
  return Object.fromEntries(
    Object.entries(value).map(([key, each]) => [key, toCelValue(schema?.properties?.[key] ?? extra, each)]),
  );
}

/**
 * Runs a compiled expression. Errors the expression raises (a missing key, no overload …) become
 * CelEvalError worded as cel-go words them (lower-case first letter: `no such key: x`).
 */
export function evaluateCompiled(compiledCel: CompiledCel, scope: Record<string, unknown>): unknown {
  try {
    return compiledCel.program(scope);
  } catch (error) {
    if (error instanceof EvaluationError || error instanceof CelTypeError) {
      const summary = summaryOf(error);
      throw new CelEvalError(summary.charAt(0).toLowerCase() + summary.slice(1));
    }
    throw error;
  }
}
