/** Paths outside the resource tree: version, health, discovery, OpenAPI. */

import type { Reply, RequestContext } from './context.ts';
import {
  acceptsAggregated,
  aggregatedDiscovery,
  coreVersions,
  groupDocument,
  groupList,
  resourceList,
} from './discovery.ts';
import { openApiDocument } from './openapi.ts';
import { notServed } from './router.ts';

const HEALTH = new Set(['/healthz', '/livez', '/readyz']);

/** `/api` and `/apis`: aggregated (v2) when the client accepts it, else the legacy list. */
function discoveryRoot(ctx: RequestContext, core: boolean): Reply {
  const registry = ctx.parts.store.registry;
  const aggregated = acceptsAggregated(ctx.req.headers.accept);
  if (aggregated) return { code: 200, body: aggregatedDiscovery(registry, core), contentType: aggregated };
  return { code: 200, body: core ? coreVersions(ctx.req.headers.host ?? '') : groupList(registry) };
}

/** `/api/<v>`, `/apis/<g>`, `/apis/<g>/<v>`. */
function discoveryDocument(ctx: RequestContext, parts: string[]): object | undefined {
  const registry = ctx.parts.store.registry;
  const [prefix, a = '', b = ''] = parts;
  if (prefix === 'api') return parts.length === 2 ? resourceList(registry, '', a) : undefined;
  if (prefix !== 'apis') return undefined;
  if (parts.length === 2) return groupDocument(registry, a);
  return parts.length === 3 ? resourceList(registry, a, b) : undefined;
}

function discovery(ctx: RequestContext, parts: string[]): Reply | undefined {
  if (parts.length === 1 && (parts[0] === 'api' || parts[0] === 'apis')) return discoveryRoot(ctx, parts[0] === 'api');
  const document = discoveryDocument(ctx, parts);
  return document ? { code: 200, body: document } : undefined;
}

/** Answers a non-resource GET; 404 for anything unknown. */
export async function serveNonResource(ctx: RequestContext): Promise<Reply> {
  const path = ctx.info.path;
  if (ctx.req.method !== 'GET' && ctx.req.method !== 'HEAD') throw notServed();
  if (path === '/version' || path === '/version/') return { code: 200, body: ctx.parts.version };
  if (HEALTH.has(path)) return { code: 200, body: 'ok', contentType: 'text/plain; charset=utf-8' };
  const parts = path.split('/').filter((p) => p !== '');
  const found = discovery(ctx, parts) ?? openApiDocument(ctx, parts);
  if (!found) throw notServed();
  return found;
}
