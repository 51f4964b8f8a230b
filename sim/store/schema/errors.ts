/**
 * Field errors worded as apimachinery's `field.Error.ErrorBody()` words them, and the 422 the
 * apiserver builds from them (`errors.NewInvalid`): `Kind.group "name" is invalid: spec.x: Required value`.
 */
import { invalid, type StatusCause, type StatusError } from '../status.ts';
import type { FieldError, FieldErrorReason } from './types.ts';

/** field.ErrorType's String(): the words a cause's message starts with. */
const TYPE_WORDS: Record<FieldErrorReason, string> = {
  FieldValueRequired: 'Required value',
  FieldValueInvalid: 'Invalid value',
  FieldValueNotSupported: 'Unsupported value',
  FieldValueTypeInvalid: 'Invalid value',
  FieldValueTooLong: 'Too long',
  FieldValueTooMany: 'Too many',
  FieldValueForbidden: 'Forbidden',
  FieldValueDuplicate: 'Duplicate value',
};

/** Types whose body never shows the value. */
const VALUELESS: ReadonlySet<FieldErrorReason> = new Set([
  'FieldValueRequired',
  'FieldValueForbidden',
  'FieldValueTooLong',
]);

/** Go's `%v` for simple types, `%q` for strings, JSON for the rest; a nil value is the string "null". */
export function goValue(value: unknown): string {
  if (value === undefined || value === null) return '"null"';
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

/** `field.Error.ErrorBody()`: `Invalid value: "x": detail`, `Required value`, … */
export function errorBody(error: FieldError): string {
  let body = TYPE_WORDS[error.reason];
  if (!VALUELESS.has(error.reason)) body += `: ${goValue(error.value)}`;
  if (error.detail) body += `: ${error.detail}`;
  return body;
}

/** The 422 for `errors` on the object `name` of `kind`. */
export function invalidObject(
  kind: { group: string; kind: string },
  name: string,
  errors: readonly FieldError[],
): StatusError {
  const causes: StatusCause[] = errors.map((error) => ({
    reason: error.reason,
    message: errorBody(error),
    field: error.field,
  }));
  return invalid(kind, name, causes);
}
