/**
 * CEL for `x-kubernetes-validations`, evaluated by @marcbachmann/cel-js (a CEL implementation; we only
 * declare the variables and convert values). As the apiextensions apiserver does, `self` and `oldSelf`
 * are declared with the CEL type of the rule's schema node, so a rule is type-checked when the CRD is
 * registered (`self.name == 1` on a string field does not compile), and a JSON value is converted by
 * its schema type: `integer` → int (BigInt), `number` → double, objects → object types or maps,
 * arrays → lists.
 * An object with `properties` is an object type with those fields (a class per schema node, so an
 * undeclared field does not compile and `==` compares field by field); string formats (date-time,
 * duration, byte) stay strings.
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

type Fields = Record<string, unknown>;
type ObjectClass = new (fields: Fields) => Fields;

/** One class per object schema node with `properties`: cel-js types a value by its constructor. */
const classes = new WeakMap<Schema, ObjectClass>();

function classOf(schema: Schema): ObjectClass {
  let found = classes.get(schema);
  if (!found) {
    found = class CrdObject {
      constructor(fields: Fields) {
        Object.assign(this, fields);
      }
    } as unknown as ObjectClass;
    classes.set(schema, found);
  }
  return found;
}

/** An object type to declare: its name in the environment and its fields' CEL types. */
interface ObjectDeclaration {
  readonly name: string;
  readonly fields: Record<string, string>;
}

const hasFields = (schema: Schema): boolean => schema.type === 'object' && schema.properties !== undefined;

/**
 * The CEL type the apiserver gives a schema node; the object types it needs are added to `objects`
 * (parents before children). An object with `properties` is an object type with those fields, one with
 * `additionalProperties` a `map<string, T>`, int-or-string and untyped nodes `dyn`.
 */
function describeType(schema: Schema | undefined, objects: Map<Schema, ObjectDeclaration>): string {
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
      return `list<${describeType(schema.items, objects)}>`;
    case 'object':
      return hasFields(schema) ? describeObject(schema, objects) : `map<string, ${mapValues(schema, objects)}>`;
    default:
      return 'dyn';
  }
}

function mapValues(schema: Schema, objects: Map<Schema, ObjectDeclaration>): string {
  return typeof schema.additionalProperties === 'object' ? describeType(schema.additionalProperties, objects) : 'dyn';
}

function describeObject(schema: Schema, objects: Map<Schema, ObjectDeclaration>): string {
  const known = objects.get(schema);
  if (known) return known.name;
  const declaration: ObjectDeclaration = { name: `object${objects.size}`, fields: {} };
  objects.set(schema, declaration);
  for (const [key, property] of Object.entries(schema.properties ?? {})) {
    declaration.fields[key] = describeType(property, objects);
  }
  return declaration.name;
}

/** CEL equality of two values of one object type: field by field, order and int/double kept apart. */
function celEquals(left: unknown, right: unknown): boolean {
  if (typeof left !== 'object' || left === null || typeof right !== 'object' || right === null) return left === right;
  if (Array.isArray(left) || Array.isArray(right)) {
    if (!Array.isArray(left) || !Array.isArray(right) || left.length !== right.length) return false;
    return left.every((each, index) => celEquals(each, right[index]));
  }
  const [a, b] = [left as Fields, right as Fields];
  const keys = Object.keys(a).filter((key) => a[key] !== undefined);
  if (keys.length !== Object.keys(b).filter((key) => b[key] !== undefined).length) return false;
  return keys.every((key) => Object.hasOwn(b, key) && celEquals(a[key], b[key]));
}

const environments = new WeakMap<Schema, Environment>();

/** The environment of the rules at one schema node (building one is the expensive part). */
function environmentFor(schema: Schema): Environment {
  let found = environments.get(schema);
  if (!found) {
    const objects = new Map<Schema, ObjectDeclaration>();
    const selfType = describeType(schema, objects);
    // Optional types are part of the apiserver's CEL environment (`self.?x`, `optional.of`).
    const env = new Environment({ enableOptionalTypes: true });
    // Children first: a type's fields may name the types declared after it.
    for (const [node, { name, fields }] of [...objects].reverse()) {
      env.registerType(name, { ctor: classOf(node), fields });
      env.registerOperator(`${name} == ${name}`, celEquals);
    }
    env.registerVariable('self', selfType).registerVariable('oldSelf', selfType);
    found = env;
    environments.set(schema, found);
  }
  return found;
}

const ROOT_FIELDS: Record<string, Schema> = {
  apiVersion: { type: 'string' },
  kind: { type: 'string' },
  // The apiserver gives root rules only these of metadata.
  metadata: { type: 'object', properties: { name: { type: 'string' }, generateName: { type: 'string' } } },
};
const roots = new WeakMap<Schema, Schema>();

/** The schema CEL sees at the root of a custom resource: apiVersion, kind and metadata.name/generateName added. */
export function celRootSchema(schema: Schema): Schema {
  if (schema.type !== 'object') return schema;
  let root = roots.get(schema);
  if (!root) {
    root = { ...schema, properties: { ...schema.properties, ...ROOT_FIELDS } };
    roots.set(schema, root);
  }
  return root;
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
const compiled = new WeakMap<Schema, Map<string, CompiledCel>>();

/**
 * Parses and type-checks `source` with `self` of `schema`'s type; `resultType` is what the expression
 * must evaluate to (`bool` for a rule, `string` for a messageExpression). Cached; throws CelCompileError.
 */
export function compileCel(source: string, schema: Schema, resultType: 'bool' | 'string'): CompiledCel {
  let bySource = compiled.get(schema);
  if (!bySource) {
    bySource = new Map();
    compiled.set(schema, bySource);
  }
  const key = `${resultType}\u0000${source}`;
  const cached = bySource.get(key);
  if (cached) return cached;
  const env = environmentFor(schema);
  let program: ParseResult;
  try {
    program = env.parse(source);
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
  bySource.set(key, result);
  return result;
}

function toCelObject(schema: Schema, value: Fields): Fields {
  const properties = schema.properties ?? {};
  const fields: Fields = {};
  for (const [key, property] of Object.entries(properties)) {
    if (value[key] !== undefined) fields[key] = toCelValue(property, value[key]);
  }
  return new (classOf(schema))(fields);
}

/** A JSON value as CEL sees it under `schema`: integers as BigInt, objects with fields as their type. */
export function toCelValue(schema: Schema | undefined, value: unknown): unknown {
  if (value === null || value === undefined) return value;
  if (typeof value === 'number') {
    const integral = schema?.type === 'integer' || (schema?.type !== 'number' && Number.isInteger(value));
    return integral ? BigInt(value) : value;
  }
  if (Array.isArray(value)) return value.map((item) => toCelValue(schema?.items, item));
  if (!isPlainObject(value)) return value;
  if (schema && hasFields(schema)) return toCelObject(schema, value);
  const extra = typeof schema?.additionalProperties === 'object' ? schema.additionalProperties : undefined;
  return Object.fromEntries(Object.entries(value).map(([key, each]) => [key, toCelValue(extra, each)]));
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
