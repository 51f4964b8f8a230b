/** create, update, patch, delete and deletecollection on a resource or its status subresource. */
import { JsonPatchApplyFailed, jsonPatch, mergePatch, strategicMergePatch } from '../../store/patch.ts';
import { badRequest, StatusError } from '../../store/status.ts';
import type { KubeObject } from '../../store/types.ts';
import type { Reply, RequestContext } from '../context.ts';
import { checkFieldValidation } from '../field-validation.ts';
import { recordManagedFields } from '../managed-fields-write.ts';
import { deleteOptionsOf, listOptionsOf } from '../query.ts';
import { deletedStatus, listEnvelope, served } from '../serve.ts';
import { checkPod, checkTypeMeta } from '../validation.ts';
import { namespaceOf, refOf } from './read.ts';

/** Kinds whose create keeps the posted status (kubelets register nodes with status; namespaces default it). */
const KEEP_STATUS_ON_CREATE: ReadonlySet<string> = new Set(['/nodes', '/namespaces']);

function objectBody(ctx: RequestContext, body: unknown): KubeObject {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw badRequest('the body of the request must be a JSON object');
  }
  const object = body as KubeObject;
  object.metadata ??= {};
  if (typeof object.metadata !== 'object') throw badRequest('metadata: must be an object');
  const { type } = refOf(ctx);
  if (!ctx.info.subresource) checkTypeMeta(object, type, ctx.info.version);
  const namespace = namespaceOf(ctx);
  if (namespace !== undefined) {
    if (object.metadata.namespace && object.metadata.namespace !== namespace) {
      throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
    }
    object.metadata.namespace = namespace;
  }
  return object;
}

/** POST a collection. */
export async function createObject(ctx: RequestContext): Promise<Reply> {
  const { ref, type } = refOf(ctx);
  const object = objectBody(ctx, await ctx.body());
  if (type.group === '' && type.resource === 'pods') checkPod(object);
  if (type.subresources.includes('status') && !KEEP_STATUS_ON_CREATE.has(`${type.group}/${type.resource}`)) {
    delete object.status;
  }
  const headers = checkFieldValidation(ctx, object);
  recordManagedFields(ctx, undefined, object);
  const created = ctx.parts.store.create(ref, object, { dryRun: ctx.dryRun });
  return { code: 201, body: served(type, ctx.info.version, created), headers };
}

/** PUT an object or its status. */
export async function updateObject(ctx: RequestContext): Promise<Reply> {
  const { ref, type } = refOf(ctx);
  const object = objectBody(ctx, await ctx.body());
  if (object.metadata.name !== ctx.info.name) {
    throw badRequest(
      `the name of the object (${object.metadata.name ?? ''}) does not match the name on the URL (${ctx.info.name})`,
    );
  }
  const options = { dryRun: ctx.dryRun, subresource: ctx.info.subresource || undefined };
  const headers = checkFieldValidation(ctx, object);
  recordManagedFields(ctx, ctx.parts.store.get(ref, namespaceOf(ctx), ctx.info.name), object);
  const updated = ctx.parts.store.update(ref, object, options);
  return { code: 200, body: served(type, ctx.info.version, updated), headers };
}

const JSON_PATCH = 'application/json-patch+json';
const MERGE_PATCH = 'application/merge-patch+json';
const STRATEGIC_PATCH = 'application/strategic-merge-patch+json';
const APPLY_PATCH = 'application/apply-patch+yaml';

function unsupportedPatch(custom: boolean): StatusError {
  const accepted = custom
    ? `${JSON_PATCH}, ${MERGE_PATCH}, ${APPLY_PATCH}`
    : `${JSON_PATCH}, ${MERGE_PATCH}, ${STRATEGIC_PATCH}, ${APPLY_PATCH}`;
  return new StatusError(
    415,
    'UnsupportedMediaType',
    `the body of the request was in an unknown format - accepted media types include: ${accepted}`,
  );
}

function applyPatch(contentType: string, custom: boolean, target: KubeObject, patch: unknown): unknown {
  try {
    if (contentType === JSON_PATCH) return jsonPatch(target, patch);
    if (contentType === MERGE_PATCH || contentType === APPLY_PATCH) return mergePatch(target, patch);
    if (contentType === STRATEGIC_PATCH && !custom) return strategicMergePatch(target, patch);
  } catch (error) {
    if (error instanceof JsonPatchApplyFailed) {
      // The apiserver wraps a patch that fails to apply in NewGenericServerResponse(422): a fixed
      // message, empty details and no causes; the library's own error text is not sent.
      throw new StatusError(422, 'Invalid', 'the server rejected our request due to an error in our request', {});
    }
    throw error;
  }
  throw unsupportedPatch(custom);
}

/** PATCH an object or its status; server-side apply creates a missing object (and is applied as a merge patch). */
export async function patchObject(ctx: RequestContext): Promise<Reply> {
  const { ref, type } = refOf(ctx);
  const contentType = (ctx.req.headers['content-type'] ?? '').split(';')[0]?.trim() ?? '';
  const patch = await ctx.body();
  const store = ctx.parts.store;
  const existing = store.get(ref, namespaceOf(ctx), ctx.info.name);
  if (!existing && contentType === APPLY_PATCH && !ctx.info.subresource) {
    const object = objectBody(ctx, patch);
    object.metadata.name ??= ctx.info.name;
    const headers = checkFieldValidation(ctx, object);
    recordManagedFields(ctx, undefined, object);
    const created = store.create(ref, object, { dryRun: ctx.dryRun });
    return { code: 201, body: served(type, ctx.info.version, created), headers };
  }
  const target = existing ?? store.mustGet(ref, namespaceOf(ctx), ctx.info.name);
  const patched = applyPatch(contentType, type.definedBy !== undefined, target, patch) as KubeObject;
  if (patched?.metadata?.name !== ctx.info.name) throw badRequest('metadata.name: the patch may not change the name');
  const options = { dryRun: ctx.dryRun, subresource: ctx.info.subresource || undefined };
  const headers = checkFieldValidation(ctx, patched);
  recordManagedFields(ctx, target, patched);
  return { code: 200, body: served(type, ctx.info.version, store.update(ref, patched, options)), headers };
}

/** DELETE one object: pods answer with the object, other kinds with a Success Status once gone. */
export async function deleteObject(ctx: RequestContext): Promise<Reply> {
  const { ref, type } = refOf(ctx);
  const options = deleteOptionsOf(ctx.url.searchParams, await ctx.body(), ctx.dryRun);
  const key: { namespace?: string; name: string } = { name: ctx.info.name };
  const namespace = namespaceOf(ctx);
  if (namespace) key.namespace = namespace;
  const result = ctx.parts.store.delete(ref, key, options);
  const returnsObject = ref.group === '' && ref.resource === 'pods';
  if (result.removed && !returnsObject) return { code: 200, body: deletedStatus(ref, result.object) };
  return { code: 200, body: served(type, ctx.info.version, result.object) };
}

/** DELETE a collection: every object matching the selectors; answers with the list of what was deleted. */
export async function deleteCollection(ctx: RequestContext): Promise<Reply> {
  const { ref, type } = refOf(ctx);
  const options = deleteOptionsOf(ctx.url.searchParams, await ctx.body(), ctx.dryRun);
  const listed = ctx.parts.store.list(ref, listOptionsOf(ctx.url.searchParams, namespaceOf(ctx) ?? ''));
  const deleted: KubeObject[] = [];
  for (const item of listed.items) {
    const key: { namespace?: string; name: string } = { name: item.metadata.name ?? '' };
    if (item.metadata.namespace) key.namespace = item.metadata.namespace;
    deleted.push(ctx.parts.store.delete(ref, key, options).object);
  }
  return {
    code: 200,
    body: listEnvelope(type, ctx.info.version, { items: deleted, resourceVersion: listed.resourceVersion }),
  };
}
