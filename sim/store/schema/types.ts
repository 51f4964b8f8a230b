/**
 * A CRD's structural schema (`openAPIV3Schema`), as far as the simulator enforces it, and the field
 * errors the apiextensions apiserver turns into a 422's causes.
 */

/** One `x-kubernetes-validations` rule. */
export interface ValidationRule {
  rule: string;
  message?: string;
  messageExpression?: string;
  /** `FieldValueInvalid` (default), `FieldValueForbidden`, `FieldValueRequired`, `FieldValueDuplicate`. */
  reason?: string;
  /** A relative JSON path (`.spec.x`) the error names instead of the rule's own location. */
  fieldPath?: string;
}

/** The JSONSchemaProps fields the simulator reads; others (description, …) are ignored. */
export interface Schema {
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  properties?: Record<string, Schema>;
  additionalProperties?: Schema | boolean;
  items?: Schema;
  required?: string[];
  enum?: unknown[];
  pattern?: string;
  format?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: boolean;
  exclusiveMaximum?: boolean;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  nullable?: boolean;
  default?: unknown;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  'x-kubernetes-validations'?: ValidationRule[];
}

/** apimachinery's field.ErrorType, under the name a StatusCause carries (`reason`). */
export type FieldErrorReason =
  | 'FieldValueRequired'
  | 'FieldValueInvalid'
  | 'FieldValueNotSupported'
  | 'FieldValueTypeInvalid'
  | 'FieldValueTooLong'
  | 'FieldValueTooMany'
  | 'FieldValueForbidden'
  | 'FieldValueDuplicate';

/** A field.Error: where, what kind, the bad value and the detail. */
export interface FieldError {
  readonly reason: FieldErrorReason;
  readonly field: string;
  readonly value?: unknown;
  readonly detail?: string;
}

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
