/**
 * Watch streams: one JSON object per line (`{"type":…,"object":…}`), objects as Tables when kubectl
 * asks (`kubectl get -w`). A too-old resourceVersion is an ERROR event carrying a 410 Status, as the
 * apiserver sends it. The stream ends at `timeoutSeconds` or when the client goes.
 */
import { isStatusError } from '../../store/status.ts';
import type { WatchEvent } from '../../store/types.ts';
import type { Reply, RequestContext } from '../context.ts';
import { served } from '../serve.ts';
import { includeObjectOf, toTable, wantsTable } from '../table.ts';
import { namespaceOf, refOf } from './read.ts';

function encoder(ctx: RequestContext): (event: WatchEvent) => string {
  const { type } = refOf(ctx);
  const table = wantsTable(ctx.req.headers.accept);
  const include = includeObjectOf(ctx.url.searchParams);
  return (event) => {
    if (event.type === 'ERROR' || event.type === 'BOOKMARK' || !table) {
      const object = event.type === 'ERROR' ? event.object : served(type, ctx.info.version, event.object);
      return `${JSON.stringify({ type: event.type, object })}\n`;
    }
    const row = served(type, ctx.info.version, event.object);
    const object = toTable(type, [row], {
      include,
      nowMs: ctx.parts.store.clock.now(),
      listMetadata: { resourceVersion: row.metadata.resourceVersion },
    });
    return `${JSON.stringify({ type: event.type, object })}\n`;
  };
}

/** The bookmark that ends the initial events of a watch-list, at the current resourceVersion. */
function initialEventsEnd(ctx: RequestContext): WatchEvent {
  const { type } = refOf(ctx);
  return {
    type: 'BOOKMARK',
    object: {
      apiVersion: type.group ? `${type.group}/${ctx.info.version}` : ctx.info.version,
      kind: type.kind,
      metadata: {
        resourceVersion: ctx.parts.store.currentResourceVersion(),
        annotations: { 'k8s.io/initial-events-end': 'true' },
      },
    },
  };
}

/** GET with `watch=true`. */
export async function watchObjects(ctx: RequestContext): Promise<Reply> {
  const { ref } = refOf(ctx);
  const query = ctx.url.searchParams;
  const encode = encoder(ctx);
  const res = ctx.res;
  res.writeHead(200, {
    'content-type': wantsTable(ctx.req.headers.accept)
      ? 'application/json;as=Table;v=v1;g=meta.k8s.io'
      : 'application/json',
    'transfer-encoding': 'chunked',
    'cache-control': 'no-cache, private',
  });
  res.flushHeaders();
  const options: Parameters<typeof ctx.parts.store.watch>[1] = {
    allowBookmarks: query.get('allowWatchBookmarks') === 'true',
  };
  const namespace = namespaceOf(ctx);
  if (namespace) options.namespace = namespace;
  for (const key of ['labelSelector', 'fieldSelector', 'resourceVersion'] as const) {
    const value = query.get(key);
    if (value) options[key] = value;
  }
  if (ctx.info.name)
    options.fieldSelector = [options.fieldSelector, `metadata.name=${ctx.info.name}`].filter(Boolean).join(',');
  // Watch-list (`sendInitialEvents=true`): the current objects, then a bookmark marking their end.
  const initialEvents = query.get('sendInitialEvents') === 'true';
  if (initialEvents) delete options.resourceVersion;
  let watch: { stop(): void } | undefined;
  try {
    watch = ctx.parts.store.watch(ref, options, (event) => res.write(encode(event)));
  } catch (error) {
    if (!isStatusError(error)) throw error;
    res.end(encode({ type: 'ERROR', object: error.toStatus() as never }));
    return undefined;
  }
  if (initialEvents) queueMicrotask(() => res.write(encode(initialEventsEnd(ctx))));
  const timeoutSeconds = Number(query.get('timeoutSeconds') ?? 1800);
  const timer = ctx.parts.store.clock.setTimeout(() => res.end(), timeoutSeconds * 1000);
  const finish = (): void => {
    watch?.stop();
    timer.cancel();
  };
  res.on('close', finish);
  ctx.req.on('close', finish);
  return undefined;
}
