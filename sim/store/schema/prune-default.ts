/**
 * What the apiextensions apiserver does to a custom resource before validating it: pruning (fields
 * the structural schema does not specify are dropped, unless a node says
 * `x-kubernetes-preserve-unknown-fields` or has `additionalProperties`) and then defaulting (a missing
 * field with a `default` gets it; a null one too when the schema does not allow null). `apiVersion`,
 * `kind` and `metadata` of the object (and of embedded resources) are never pruned. In place.
 */
import { isPlainObject, type Schema } from './types.ts';

const ENVELOPE = new Set(['apiVersion', 'kind', 'metadata']);

const child = (path: string, key: string): string => (path ? `${path}.${key}` : key);

function pruneObject(schema: Schema, value: Record<string, unknown>, path: string, unknown: string[]): void {
  const keepAll = schema['x-kubernetes-preserve-unknown-fields'] === true;
  const extra = typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined;
  const envelope = path === '' || schema['x-kubernetes-embedded-resource'] === true;
  for (const key of Object.keys(value)) {
    if (envelope && ENVELOPE.has(key)) continue;
    const itemSchema = schema.properties?.[key] ?? extra;
    if (itemSchema) pruneValue(itemSchema, value[key], child(path, key), unknown);
    else if (!keepAll && schema.additionalProperties !== true) {
      unknown.push(child(path, key));
      delete value[key];
    }
  }
}

function pruneValue(schema: Schema, value: unknown, path: string, unknown: string[]): void {
  if (Array.isArray(value)) {
    const items = schema.items;
    if (items) for (const [index, item] of value.entries()) pruneValue(items, item, `${path}[${index}]`, unknown);
  } else if (isPlainObject(value)) {
    pruneObject(schema, value, path, unknown);
  }
}

/** Drops the fields `schema` does not know from `object`; returns their paths (`spec.foo`), in order. */
export function prune(schema: Schema, object: Record<string, unknown>): string[] {
  const unknown: string[] = [];
  pruneObject(schema, object, '', unknown);
  return unknown;
}

function defaultObject(schema: Schema, value: Record<string, unknown>): void {
  for (const [key, property] of Object.entries(schema.properties ?? {})) {
    const missing = value[key] === undefined || (value[key] === null && !property.nullable);
    if (missing && property.default !== undefined) value[key] = structuredClone(property.default);
    if (value[key] !== undefined) defaultValue(property, value[key]);
  }
  const extra = schema.additionalProperties;
  if (typeof extra === 'object') {
    for (const [key, item] of Object.entries(value)) if (!schema.properties?.[key]) defaultValue(extra, item);
  }
}

function defaultValue(schema: Schema, value: unknown): void {
  if (Array.isArray(value)) {
    const items = schema.items;
    if (items) for (const item of value) defaultValue(items, item);
  } else if (isPlainObject(value)) {
    defaultObject(schema, value);
  }
}

/** Fills the schema's defaults into `object`. */
export function applySchemaDefaults(schema: Schema, object: Record<string, unknown>): void {
  defaultValue(schema, object);
}
