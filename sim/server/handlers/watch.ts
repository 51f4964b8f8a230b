/**
 * Watch streams: one JSON object per line (`{"type":…,"object":…}`), objects as Tables when kubectl
 * asks (`kubectl get -w`). A too-old resourceVersion is an ERROR event carrying a 410 Status, as the
 * apiserver sends it. The stream ends at `timeoutSeconds` or when the client goes.
 */
import { isStatusError } from '../../store/status.ts';
import type { WatchEvent, WatchOptions } from '../../store/types.ts';
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

/** The store watch's options from the query; `initialEvents` for a watch-list (`sendInitialEvents=true`). */
function watchOptionsOf(ctx: RequestContext): { options: WatchOptions; initialEvents: boolean } {
  const query = ctx.url.searchParams;
  const options: WatchOptions = { allowBookmarks: query.get('allowWatchBookmarks') === 'true' };
  const namespace = namespaceOf(ctx);
  if (namespace) options.namespace = namespace;
  for (const key of ['labelSelector', 'fieldSelector', 'resourceVersion'] as const) {
    const value = query.get(key);
    if (value) options[key] = value;
  }
  if (ctx.info.name)
    options.fieldSelector = [options.fieldSelector, `metadata.name=${ctx.info.name}`].filter(Boolean).join(',');
  // Watch-list: the current objects, then a bookmark marking their end.
  const initialEvents = query.get('sendInitialEvents') === 'true';
  if (initialEvents) delete options.resourceVersion;
  return { options, initialEvents };
}

/**
 * One watch response with one way out: the store watch and the end timer stop before the response
 * ends, and every write checks that the response is still open — a write to an ended response is an
 * uncaught ERR_STREAM_WRITE_AFTER_END in the server process (over TLS a response ends a turn of the
 * event loop after `end()`, so a change or bookmark due in the same turn used to be written after it).
 */
class WatchStream {
  readonly #ctx: RequestContext;
  readonly #encode: (event: WatchEvent) => string;
  #watch: { stop(): void } | undefined;
  #timer: { cancel(): void } | undefined;
  #open = true;
  readonly #onStoreStopped = (): void => this.close();

  constructor(ctx: RequestContext, encode: (event: WatchEvent) => string) {
    this.#ctx = ctx;
    this.#encode = encode;
    ctx.res.on('close', () => this.#stop());
    ctx.req.on('close', () => this.#stop());
    ctx.parts.store.clock.stopped.addEventListener('abort', this.#onStoreStopped, { once: true });
  }

  /** Watches the store and ends at `timeoutSeconds`; a store that has stopped ends the response at once. */
  start(options: WatchOptions, initialEvents: boolean, timeoutSeconds: number): void {
    const { store } = this.#ctx.parts;
    // A stopped store sends nothing and fires no timer: the watch would stay open for ever.
    if (store.clock.stopped.aborted) {
      this.close();
      return;
    }
    try {
      this.#watch = store.watch(refOf(this.#ctx).ref, options, (event) => this.send(event));
    } catch (error) {
      if (!isStatusError(error)) throw error;
      this.close(this.#encode({ type: 'ERROR', object: error.toStatus() as never }));
      return;
    }
    if (initialEvents) queueMicrotask(() => this.send(initialEventsEnd(this.#ctx)));
    this.#timer = store.clock.setTimeout(() => this.close(), timeoutSeconds * 1000);
  }

  send(event: WatchEvent): void {
    const res = this.#ctx.res;
    if (!this.#open || res.writableEnded || res.destroyed) {
      this.#stop();
      return;
    }
    res.write(this.#encode(event));
  }

  close(last?: string): void {
    this.#stop();
    const res = this.#ctx.res;
    if (!res.writableEnded && !res.destroyed) res.end(last);
  }

  #stop(): void {
    if (!this.#open) return;
    this.#open = false;
    this.#watch?.stop();
    this.#timer?.cancel();
    this.#ctx.parts.store.clock.stopped.removeEventListener('abort', this.#onStoreStopped);
  }
}

/** GET with `watch=true`. */
export async function watchObjects(ctx: RequestContext): Promise<Reply> {
  const res = ctx.res;
  res.writeHead(200, {
    'content-type': wantsTable(ctx.req.headers.accept)
      ? 'application/json;as=Table;v=v1;g=meta.k8s.io'
      : 'application/json',
    'transfer-encoding': 'chunked',
    'cache-control': 'no-cache, private',
  });
  res.flushHeaders();
  const { options, initialEvents } = watchOptionsOf(ctx);
  const timeoutSeconds = Number(ctx.url.searchParams.get('timeoutSeconds') ?? 1800);
  new WatchStream(ctx, encoder(ctx)).start(options, initialEvents, timeoutSeconds);
  return undefined;
}
