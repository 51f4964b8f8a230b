/**
 * A custom resource's write as the apiextensions apiserver handles it: prune unknown fields, apply
 * defaults, validate against the structural schema, and, when that found nothing that blocks them
 * (strategy.go's `hasBlockingErr`: a type, required, enum, maxLength or maxItems error), evaluate the
 * `x-kubernetes-validations` rules. Any error is one 422 Invalid naming every field.
 */
import type { KubeObject, ResourceType } from '../types.ts';
import { invalidObject } from './errors.ts';
import { applySchemaDefaults, prune } from './prune-default.ts';
import { hasRules, ruleErrors } from './rules.ts';
import type { FieldError, Schema } from './types.ts';
import { validateValue } from './validate.ts';

export { type SchemaProblem, schemaProblems } from './check.ts';
export type { Schema } from './types.ts';

const BLOCKING: ReadonlySet<string> = new Set([
  'FieldValueNotSupported',
  'FieldValueRequired',
  'FieldValueTooLong',
  'FieldValueTooMany',
  'FieldValueTypeInvalid',
]);

const NOT_CHECKED: FieldError = {
  reason: 'FieldValueInvalid',
  field: '<nil>',
  value: null,
  detail:
    'some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
};

/** The field errors of `object` (already pruned and defaulted) against `schema`; `old` on an update. */
export function schemaErrors(schema: Schema, object: KubeObject, old: KubeObject | undefined): FieldError[] {
  const errors = validateValue(schema, object, '');
  // Without rules the apiserver has no CEL validator, so nothing is reported as not checked.
  if (!hasRules(schema)) return errors;
  if (errors.some((error) => BLOCKING.has(error.reason))) return [...errors, NOT_CHECKED];
  return [...errors, ...ruleErrors(schema, object, old)];
}

/**
 * Prunes and defaults `object` in place and validates it against its CRD's schema (none: nothing to
 * do). Returns the pruned fields' paths (`spec.foo`); throws the 422 when the object is invalid.
 */
export function admitCustomResource(type: ResourceType, object: KubeObject, old?: KubeObject): string[] {
  const schema = type.schema;
  if (!schema) return [];
  const pruned = prune(schema, object);
  applySchemaDefaults(schema, object);
  const errors = schemaErrors(schema, object, old);
  if (errors.length > 0) throw invalidObject(type, object.metadata.name ?? '', errors);
  return pruned;
}

/** Drops the fields `type`'s schema does not know from `object`; returns their paths (`spec.foo`). */
export function pruneUnknownFields(type: ResourceType, object: KubeObject): string[] {
  return type.schema ? prune(type.schema, object) : [];
}
