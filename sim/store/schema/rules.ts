/**
 * `x-kubernetes-validations`: each rule is evaluated with `self` bound to the value at its schema node
 * (skipped where the value is absent); a transition rule (one that refers to `oldSelf`) only on an
 * update whose old object has a value there. Map entries (additionalProperties) correlate by key; list
 * items have no `oldSelf` (only listType map/set lists correlate upstream). A rule that is not true is a
 * field error at its node, as apiextensions words it: `spec: Invalid value: "object": <message>`, the
 * message being `message`, `messageExpression`'s string, or `failed rule: <rule>`; the root's path is
 * `<nil>`.
 */

import { CelCompileError, CelEvalError, celRootSchema, compileCel, evaluateCompiled, toCelValue } from './cel.ts';
import { type FieldError, type FieldErrorReason, isPlainObject, type Schema, type ValidationRule } from './types.ts';

/**
 * A rule's `rule` or `messageExpression` that does not compile for `schema`'s node (for the root, pass
 * `celRootSchema(schema)`): its field and why.
 */
export function ruleSourceProblems(
  rule: ValidationRule,
  schema: Schema,
  path: string,
): { field: string; value: string; detail: string }[] {
  const problems: { field: string; value: string; detail: string }[] = [];
  const sources = [
    ['rule', rule.rule, 'bool'] as const,
    ['messageExpression', rule.messageExpression, 'string'] as const,
  ];
  for (const [key, source, resultType] of sources) {
    if (source === undefined) continue;
    try {
      compileCel(source, schema, resultType);
    } catch (error) {
      if (!(error instanceof CelCompileError)) throw error;
      problems.push({ field: `${path}.${key}`, value: source, detail: `compilation failed: ${error.message}` });
    }
  }
  return problems;
}

const withRules = new WeakMap<Schema, boolean>();

/** Whether any node of `schema` carries x-kubernetes-validations (remembered per schema object). */
export function hasRules(schema: Schema): boolean {
  let found = withRules.get(schema);
  if (found === undefined) {
    const children = [...Object.values(schema.properties ?? {}), schema.items];
    if (typeof schema.additionalProperties === 'object') children.push(schema.additionalProperties);
    found =
      (schema['x-kubernetes-validations'] ?? []).length > 0 ||
      children.some((each) => each !== undefined && hasRules(each));
    withRules.set(schema, found);
  }
  return found;
}

const child = (path: string, key: string): string => (path ? `${path}.${key}` : key);
const ROOT = '<nil>';

function messageOf(rule: ValidationRule, schema: Schema, scope: Record<string, unknown>): string {
  if (rule.messageExpression) {
    try {
      const text = evaluateCompiled(compileCel(rule.messageExpression, schema, 'string'), scope);
      if (typeof text === 'string' && text.trim() !== '') return text;
    } catch (error) {
      if (!(error instanceof CelEvalError)) throw error;
    }
  }
  return rule.message?.trim() || `failed rule: ${rule.rule.trim()}`;
}

function checkRule(
  rule: ValidationRule,
  schema: Schema,
  scope: Record<string, unknown>,
  path: string,
): FieldError | undefined {
  const field = rule.fieldPath ? child(path, rule.fieldPath.replace(/^\./, '')) : path || ROOT;
  const value = schema.type ?? 'object';
  try {
    if (evaluateCompiled(compileCel(rule.rule, schema, 'bool'), scope) === true) return undefined;
  } catch (error) {
    if (!(error instanceof CelEvalError)) throw error;
    return {
      reason: 'FieldValueInvalid',
      field,
      value,
      detail: `${error.message} evaluating rule: ${rule.rule.trim()}`,
    };
  }
  const reason = (rule.reason ?? 'FieldValueInvalid') as FieldErrorReason;
  return { reason, field, value, detail: messageOf(rule, schema, scope) };
}

function nodeErrors(node: Schema, self: unknown, oldSelf: unknown, path: string): FieldError[] {
  const errors: FieldError[] = [];
  const rules = node['x-kubernetes-validations'] ?? [];
  if (rules.length === 0) return errors;
  const schema = path === '' ? celRootSchema(node) : node;
  const celSelf = toCelValue(schema, self);
  const celOld = oldSelf === undefined ? undefined : toCelValue(schema, oldSelf);
  for (const rule of rules) {
    if (compileCel(rule.rule, schema, 'bool').transition && celOld === undefined) continue;
    const scope: Record<string, unknown> =
      celOld === undefined ? { self: celSelf } : { self: celSelf, oldSelf: celOld };
    const error = checkRule(rule, schema, scope, path);
    if (error) errors.push(error);
  }
  return errors;
}

function childErrors(schema: Schema, self: unknown, oldSelf: unknown, path: string): FieldError[] {
  const errors: FieldError[] = [];
  const items = schema.items;
  if (Array.isArray(self)) {
    if (items)
      for (const [index, item] of self.entries())
        errors.push(...ruleErrors(items, item, undefined, `${path}[${index}]`));
    return errors;
  }
  if (!isPlainObject(self)) return errors;
  const old = isPlainObject(oldSelf) ? oldSelf : {};
  const extra = typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined;
  for (const [key, value] of Object.entries(self)) {
    const property = schema.properties?.[key] ?? extra;
    if (property) errors.push(...ruleErrors(property, value, old[key], child(path, key)));
  }
  return errors;
}

/** The field errors of every rule in `schema` over `self` (and `oldSelf` on an update). */
export function ruleErrors(schema: Schema, self: unknown, oldSelf: unknown, path = ''): FieldError[] {
  if (self === undefined || self === null) return [];
  return [...nodeErrors(schema, self, oldSelf, path), ...childErrors(schema, self, oldSelf, path)];
}
