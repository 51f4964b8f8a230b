/** get and list, as JSON or as a Table. */
import type { KubeObject, ResourceRef, ResourceType } from '../../store/types.ts';
import type { Reply, RequestContext } from '../context.ts';
import { listOptionsOf } from '../query.ts';
import { listEnvelope, served } from '../serve.ts';
import { includeObjectOf, toTable, wantsTable } from '../table.ts';

/** The ref of the context's type (set by the router for resource requests). */
export function refOf(ctx: RequestContext): { ref: ResourceRef; type: ResourceType } {
  const type = ctx.type;
  if (!type) throw new Error('router bug: resource handler without a type');
  return { ref: { group: type.group, resource: type.resource }, type };
}

/** Namespace from the path for namespaced types; undefined for cluster-scoped ones. */
export function namespaceOf(ctx: RequestContext): string | undefined {
  return ctx.type?.namespaced ? ctx.info.namespace : undefined;
}

function tableOrObjects(
  ctx: RequestContext,
  objects: KubeObject[],
  listMetadata: Record<string, unknown>,
): Reply | undefined {
  if (!wantsTable(ctx.req.headers.accept)) return undefined;
  const { type } = refOf(ctx);
  const body = toTable(type, objects, {
    include: includeObjectOf(ctx.url.searchParams),
    nowMs: ctx.parts.store.clock.now(),
    listMetadata,
  });
  return { code: 200, body, contentType: 'application/json;as=Table;v=v1;g=meta.k8s.io' };
}

/** GET one object. */
export async function getObject(ctx: RequestContext): Promise<Reply> {
  const { ref, type } = refOf(ctx);
  const object = served(type, ctx.info.version, ctx.parts.store.mustGet(ref, namespaceOf(ctx), ctx.info.name));
  return (
    tableOrObjects(ctx, [object], { resourceVersion: object.metadata.resourceVersion }) ?? { code: 200, body: object }
  );
}

/** GET a collection. */
export async function listObjects(ctx: RequestContext): Promise<Reply> {
  const { ref, type } = refOf(ctx);
  const result = ctx.parts.store.list(ref, listOptionsOf(ctx.url.searchParams, namespaceOf(ctx) ?? ''));
  const envelope = listEnvelope(type, ctx.info.version, result) as {
    metadata: Record<string, unknown>;
    items: KubeObject[];
  };
  return tableOrObjects(ctx, envelope.items, envelope.metadata) ?? { code: 200, body: envelope };
}
