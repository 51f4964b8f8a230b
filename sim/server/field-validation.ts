/**
 * The `fieldValidation` query parameter for custom resources: fields the CRD's schema does not know are
 * pruned by the store (sim/store/schema); before that, `Strict` refuses the write with the apiserver's
 * 400 (`Widget in version "v1" cannot be handled as a Widget: strict decoding error: unknown field
 * "spec.foo"`), `Warn` (the default when the parameter is absent) answers with a `Warning: 299` header per
 * field, which kubectl prints as `Warning: unknown field "spec.foo"`; `Ignore` says nothing.
 */
import { pruneUnknownFields } from '../store/schema/index.ts';
import { badRequest } from '../store/status.ts';
import type { KubeObject } from '../store/types.ts';
import type { RequestContext } from './context.ts';

/**
 * Prunes `object` as the apiserver's decoder does (so managedFields never name a pruned field) and
 * returns headers for the reply (the warnings), or throws the 400 under `Strict`. Built-in kinds: nothing.
 */
export function checkFieldValidation(ctx: RequestContext, object: KubeObject): Record<string, string> {
  const type = ctx.type;
  if (!type?.schema) return {};
  const directive = ctx.url.searchParams.get('fieldValidation') || 'Warn';
  if (directive === 'Ignore') return {};
  const unknown = pruneUnknownFields(type, object).map((path) => `unknown field "${path}"`);
  if (unknown.length === 0) return {};
  if (directive === 'Strict') {
    throw badRequest(
      `${type.kind} in version "${ctx.info.version}" cannot be handled as a ${type.kind}: strict decoding error: ${unknown.join(', ')}`,
    );
  }
  return { warning: unknown.map((text) => `299 - ${JSON.stringify(text)}`).join(', ') };
}
