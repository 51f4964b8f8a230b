/**
 * OpenAPI v3 validation of a custom resource against its CRD's structural schema, as kube-openapi's
 * validator does it for the apiextensions apiserver, with its errors converted as
 * `kubeOpenAPIResultToFieldErrors` converts them: required → Required, enum → NotSupported, maxLength →
 * TooLong ("may not be longer than N"), maxItems → TooMany, type → TypeInvalid (the value is the
 * JSON type found), everything else Invalid with the validator's own sentence
 * (`spec.x in body should match '^a$'`). Paths: `spec.x`, `spec.list[0]`, `spec.map.key`. Pure.
 */
import { type FieldError, isPlainObject, type Schema } from './types.ts';

/** The JSON type name the validator reports for a value. */
function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function typeMatches(schema: Schema, value: unknown): boolean {
  if (schema['x-kubernetes-int-or-string']) return typeof value === 'string' || Number.isInteger(value);
  switch (schema.type) {
    case undefined:
      return true;
    case 'object':
      return isPlainObject(value);
    case 'array':
      return Array.isArray(value);
    case 'integer':
      return Number.isInteger(value);
    case 'number':
      return typeof value === 'number';
    default:
      return typeof value === schema.type;
  }
}

/** RFC 3339 date-time, as strfmt's `date-time` (and Go's time parsing) accepts it. */
const DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

const sameJson = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

const invalidValue = (field: string, value: unknown, sentence: string): FieldError => ({
  reason: 'FieldValueInvalid',
  field,
  value,
  detail: `${field} in body ${sentence}`,
});

function stringErrors(schema: Schema, value: string, field: string): FieldError[] {
  const errors: FieldError[] = [];
  const length = [...value].length;
  if (schema.maxLength !== undefined && length > schema.maxLength) {
    errors.push({ reason: 'FieldValueTooLong', field, value, detail: `may not be longer than ${schema.maxLength}` });
  }
  if (schema.minLength !== undefined && length < schema.minLength) {
    errors.push(invalidValue(field, value, `should be at least ${schema.minLength} chars long`));
  }
  if (schema.pattern !== undefined && !new RegExp(schema.pattern, 'u').test(value)) {
    errors.push(invalidValue(field, value, `should match '${schema.pattern}'`));
  }
  if (schema.format === 'date-time' && !(DATE_TIME.test(value) && !Number.isNaN(Date.parse(value)))) {
    errors.push(invalidValue(field, value, `must be of type date-time: ${JSON.stringify(value)}`));
  }
  return errors;
}

function numberErrors(schema: Schema, value: number, field: string): FieldError[] {
  const errors: FieldError[] = [];
  if (schema.minimum !== undefined) {
    const below = schema.exclusiveMinimum ? value <= schema.minimum : value < schema.minimum;
    const words = schema.exclusiveMinimum ? 'greater than' : 'greater than or equal to';
    if (below) errors.push(invalidValue(field, value, `should be ${words} ${schema.minimum}`));
  }
  if (schema.maximum !== undefined) {
    const above = schema.exclusiveMaximum ? value >= schema.maximum : value > schema.maximum;
    const words = schema.exclusiveMaximum ? 'less than' : 'less than or equal to';
    if (above) errors.push(invalidValue(field, value, `should be ${words} ${schema.maximum}`));
  }
  return errors;
}

const child = (path: string, key: string): string => (path ? `${path}.${key}` : key);

function objectErrors(schema: Schema, value: Record<string, unknown>, path: string): FieldError[] {
  const errors: FieldError[] = [];
  for (const name of schema.required ?? []) {
    if (value[name] === undefined) errors.push({ reason: 'FieldValueRequired', field: child(path, name) });
  }
  for (const [key, item] of Object.entries(value)) {
    const property = schema.properties?.[key];
    const extra = typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined;
    const itemSchema = property ?? extra;
    if (itemSchema) errors.push(...validateValue(itemSchema, item, child(path, key)));
  }
  return errors;
}

function arrayErrors(schema: Schema, value: unknown[], path: string): FieldError[] {
  const errors: FieldError[] = [];
  if (schema.maxItems !== undefined && value.length > schema.maxItems) {
    errors.push({
      reason: 'FieldValueTooMany',
      field: path,
      value: value.length,
      detail: `must have at most ${schema.maxItems} items`,
    });
  }
  if (schema.minItems !== undefined && value.length < schema.minItems) {
    errors.push(invalidValue(path, value, `should have at least ${schema.minItems} items`));
  }
  const items = schema.items;
  if (items)
    for (const [index, item] of value.entries()) errors.push(...validateValue(items, item, `${path}[${index}]`));
  return errors;
}

/** Every violation of `schema` by `value` at `path` (`''` for the object itself). */
export function validateValue(schema: Schema, value: unknown, path: string): FieldError[] {
  if (value === undefined) return [];
  if (value === null) {
    if (schema.nullable || schema.type === undefined) return [];
    const detail = `${path} in body must be of type ${schema.type}: "null"`;
    return [{ reason: 'FieldValueTypeInvalid', field: path, value: 'null', detail }];
  }
  if (!typeMatches(schema, value)) {
    const found = jsonType(value);
    const wanted = schema['x-kubernetes-int-or-string'] ? 'integer,string' : schema.type;
    const detail = `${path} in body must be of type ${wanted}: "${found}"`;
    return [{ reason: 'FieldValueTypeInvalid', field: path, value: found, detail }];
  }
  const errors: FieldError[] = [];
  if (schema.enum && !schema.enum.some((allowed) => sameJson(allowed, value))) {
    const supported = schema.enum.map((allowed) =>
      JSON.stringify(typeof allowed === 'string' ? allowed : JSON.stringify(allowed)),
    );
    errors.push({
      reason: 'FieldValueNotSupported',
      field: path,
      value,
      detail: `supported values: ${supported.join(', ')}`,
    });
  }
  if (typeof value === 'string') errors.push(...stringErrors(schema, value, path));
  if (typeof value === 'number') errors.push(...numberErrors(schema, value, path));
  if (Array.isArray(value)) errors.push(...arrayErrors(schema, value, path));
  else if (isPlainObject(value)) errors.push(...objectErrors(schema, value, path));
  return errors;
}
