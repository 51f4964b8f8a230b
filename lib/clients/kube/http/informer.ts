/**
 * An informer: a cache of one resource kept current by list + watch, on the lean HTTP client
 * (lib/clients/kube/http). What it guarantees, as client-go's reflector does:
 *
 *  - list (every page, `limit`/`continue`), then watch from the list's resourceVersion; a watch the
 *    server ends (its `timeoutSeconds`) resumes from the last resourceVersion seen;
 *  - `410 Expired` (an ERROR event or the watch's status) → re-list; the re-list reports as deletions the
 *    objects that went meanwhile, as updates those that changed;
 *  - bookmarks (`allowWatchBookmarks`) keep a quiet watch's resourceVersion fresh, so a resume after a
 *    long quiet time needs no re-list;
 *  - a watch silent for longer than `timeoutSeconds` + 30 s is a half-open connection: aborted (stalled);
 *  - any other failure (a 500, a refused connection, a timeout) → restart with exponential backoff and
 *    jitter; every restart counted by reason (closed, expired, error, stalled);
 *  - a `transform` keeps only what the caller reads of each object (most of the memory with 1,000 nodes);
 *  - `stop()` ends it at once, whatever it is doing — a list or a watch in flight is aborted, a backoff
 *    cut short — and resolves only when nothing of it is left running.
 *
 * It replaced client-node's ListWatch, which could not be stopped during a list or while a watch was
 * being opened (that watch then stayed open), needed the 45 MiB of client-node loaded, and lacked the
 * restarts, bookmarks, timeout and watchdog that had to be added around it.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import type { Logger } from '../../../log/logger.ts';
import { apiCodeOf } from '../errors.ts';
import type { KubeHttpClient, ListPage, WatchEvent } from './client.ts';
import { abortableSleep } from './signals.ts';

export type RestartReason = 'closed' | 'expired' | 'error' | 'stalled';

/** A consistent list: all items, and the resourceVersion the watch resumes from ('' when there is nothing to watch). */
export interface Listed<T> {
  readonly items: T[];
  readonly resourceVersion: string;
}

export interface InformerOptions<T extends KubernetesObject> {
  /** For logs and metrics, e.g. `nodes`. */
  readonly resource: string;
  /** The collection path, e.g. `/api/v1/nodes`. */
  readonly path: string;
  readonly client: KubeHttpClient;
  /** Wraps the paged list of `path` (e.g. to read a missing CRD as an empty list: nothing to watch, retried with backoff). */
  readonly list?: (paged: () => Promise<Listed<T>>) => Promise<Listed<T>>;
  /** Keeps what the caller reads of each object (applied to listed and watched objects alike). */
  readonly transform?: (object: T) => T;
  /** Every (re)start of the watch after the first, with why (metrics). */
  readonly onRestart?: (reason: RestartReason) => void;
  readonly logger: Logger;
  /** Server-side watch timeout (default 300 s); a watch silent for this plus 30 s is aborted. */
  readonly watchTimeoutSeconds?: number;
  readonly backoff?: { readonly baseMs: number; readonly maxMs: number };
  /** Objects per list page (default 500, as client-go). */
  readonly pageSize?: number;
}

/** The collection path of a cluster-scoped custom resource, e.g. NodeMaintenances or Evacuations. */
export function clusterObjectsPath(api: {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
}): string {
  return `/apis/${api.group}/${api.version}/${api.plural}`;
}

export interface InformerSubscriber<T> {
  onChange?(type: 'add' | 'update' | 'delete', object: T): void;
  /** After every successful list, when the cache holds the listed state. */
  onList?(): void;
}

/** A list succeeded but gave no resourceVersion: nothing can be watched (the resource is not served yet). */
class NothingToWatch extends Error {
  constructor(resource: string) {
    super(`${resource}: nothing to watch yet`);
    this.name = 'NothingToWatch';
  }
}

const keyOf = (object: KubernetesObject): string =>
  `${object.metadata?.namespace ?? ''}/${object.metadata?.name ?? ''}`;
const versionOf = (object: KubernetesObject): string | undefined => object.metadata?.resourceVersion;

/** How one watch ended (without an error). */
type WatchEnd = 'closed' | 'stalled' | 'stopped';

/** A watch that ends this fast without an event counts as a failure (no hot loop against a broken server). */
const QUICK_CLOSE_MS = 1000;

export class ResilientInformer<T extends KubernetesObject> {
  readonly #options: InformerOptions<T>;
  readonly #cache = new Map<string, T>();
  readonly #subscribers: InformerSubscriber<T>[] = [];
  #resourceVersion = '';
  #lastSeen: string | undefined;
  #synced = false;
  #attempt = 0;
  #controller: AbortController | undefined;
  #loop: Promise<void> | undefined;
  readonly #firstSync: { promise: Promise<void>; resolve: () => void };

  constructor(options: InformerOptions<T>) {
    this.#options = options;
    let resolve: () => void = () => undefined;
    const promise = new Promise<void>((r) => {
      resolve = r;
    });
    this.#firstSync = { promise, resolve };
  }

  get synced(): boolean {
    return this.#synced;
  }

  /** The resourceVersion of the last watch event or bookmark seen (tests wait on it instead of sleeping). */
  get lastSeenResourceVersion(): string | undefined {
    return this.#lastSeen;
  }

  get resource(): string {
    return this.#options.resource;
  }

  /** Adds a listener for changes and for completed (re-)lists (several sources share one informer). */
  subscribe(subscriber: InformerSubscriber<T>): void {
    this.#subscribers.push(subscriber);
  }

  /** Cached objects (transformed). */
  list(): T[] {
    return [...this.#cache.values()];
  }

  get(name: string, namespace?: string): T | undefined {
    return this.#cache.get(`${namespace ?? ''}/${name}`);
  }

  /** Starts list + watch (retrying until a list succeeds); see `whenSynced`. */
  start(): void {
    if (this.#loop) return;
    const controller = new AbortController();
    this.#controller = controller;
    this.#loop = this.#run(controller.signal);
  }

  /** Resolves after the first successful list. */
  whenSynced(): Promise<void> {
    return this.#firstSync.promise;
  }

  /** Aborts whatever is in flight and resolves once the informer has let go of everything. */
  async stop(): Promise<void> {
    this.#controller?.abort();
    await this.#loop;
    this.#loop = undefined;
    this.#controller = undefined;
  }

  async #run(signal: AbortSignal): Promise<void> {
    let restart: RestartReason | undefined;
    while (!signal.aborted) {
      if (restart) this.#options.onRestart?.(restart);
      const outcome = await this.#cycle(signal, restart === 'expired');
      if (outcome === 'stopped') break;
      restart = outcome;
    }
  }

  /** A list (when there is no resourceVersion to resume from) and a watch; how it ended. */
  async #cycle(signal: AbortSignal, expiredBefore: boolean): Promise<RestartReason | 'stopped'> {
    try {
      if (!this.#resourceVersion) await this.#relist(signal);
      return await this.#watch(signal);
    } catch (error) {
      if (signal.aborted) return 'stopped';
      const expired = apiCodeOf(error) === 410;
      if (expired) this.#resourceVersion = '';
      // A 410 re-lists at once (that is what it asks for); anything else, or a second 410 in a row, backs off.
      if (!expired || expiredBefore) await this.#backoff(error, expired ? 'expired' : 'error', signal);
      return expired ? 'expired' : 'error';
    }
  }

  async #backoff(error: unknown, reason: RestartReason, signal: AbortSignal): Promise<void> {
    const { baseMs, maxMs } = this.#options.backoff ?? { baseMs: 500, maxMs: 30_000 };
    const ceiling = Math.min(maxMs, baseMs * 2 ** this.#attempt);
    this.#attempt++;
    const delayMs = Math.round(ceiling / 2 + (Math.random() * ceiling) / 2);
    if (!(error instanceof NothingToWatch)) {
      this.#options.logger.warn('watch failed; restarting with backoff', {
        resource: this.#options.resource,
        reason,
        delayMs,
        error: error instanceof Error ? error.message : String(error),
      });
    }
    await abortableSleep(delayMs, signal).catch(() => undefined);
  }

  async #listAll(signal: AbortSignal): Promise<Listed<T>> {
    const paged = () => this.#pages(signal);
    return this.#options.list ? this.#options.list(paged) : paged();
  }

  /** Every page, transformed page by page so that whole objects do not pile up. */
  async #pages(signal: AbortSignal): Promise<Listed<T>> {
    const transform = this.#options.transform ?? ((object: T) => object);
    const items: T[] = [];
    let resourceVersion: string | undefined;
    let token: string | undefined;
    do {
      const page: ListPage<T> = await this.#options.client.listPage<T>(
        this.#options.path,
        { limit: this.#options.pageSize ?? 500, ...(token ? { continue: token } : {}) },
        signal,
      );
      for (const item of page.items) items.push(transform(item));
      resourceVersion ??= page.metadata?.resourceVersion;
      token = page.metadata?.continue || undefined;
    } while (token);
    return { items, resourceVersion: resourceVersion ?? '' };
  }

  /** Lists and brings the cache to the listed state, telling subscribers what changed since the last one. */
  async #relist(signal: AbortSignal): Promise<void> {
    const listed = await this.#listAll(signal);
    signal.throwIfAborted();
    const seen = new Set(listed.items.map(keyOf));
    for (const [key, object] of this.#cache) {
      if (seen.has(key)) continue;
      this.#cache.delete(key);
      this.#emit('delete', object);
    }
    for (const object of listed.items) this.#upsert(object);
    this.#resourceVersion = listed.resourceVersion;
    this.#attempt = 0;
    if (!this.#synced) {
      this.#synced = true;
      this.#firstSync.resolve();
    }
    for (const subscriber of this.#subscribers) subscriber.onList?.();
    if (!listed.resourceVersion) throw new NothingToWatch(this.#options.resource);
  }

  #upsert(object: T): void {
    const key = keyOf(object);
    const known = this.#cache.get(key);
    if (known && versionOf(known) === versionOf(object)) return;
    this.#cache.set(key, object);
    this.#emit(known ? 'update' : 'add', object);
  }

  #emit(type: 'add' | 'update' | 'delete', object: T): void {
    for (const subscriber of this.#subscribers) subscriber.onChange?.(type, object);
  }

  #apply(event: WatchEvent<T>): void {
    const transform = this.#options.transform;
    if (event.type === 'ADDED' || event.type === 'MODIFIED')
      this.#upsert(transform ? transform(event.object) : event.object);
    if (event.type === 'DELETED') {
      const key = keyOf(event.object);
      const known = this.#cache.get(key);
      this.#cache.delete(key);
      if (known) this.#emit('delete', transform ? transform(event.object) : event.object);
    }
    const version = versionOf(event.object);
    if (version) {
      this.#resourceVersion = version;
      this.#lastSeen = version;
    }
  }

  /** One watch from the current resourceVersion, with the stall watchdog. */
  async #watch(signal: AbortSignal): Promise<WatchEnd> {
    const timeoutSeconds = this.#options.watchTimeoutSeconds ?? 300;
    const watch = new AbortController();
    const stopWatch = (): void => watch.abort();
    signal.addEventListener('abort', stopWatch, { once: true });
    let stalled = false;
    let events = 0;
    let timer: NodeJS.Timeout | undefined;
    const arm = (): void => {
      clearTimeout(timer);
      timer = setTimeout(
        () => {
          stalled = true;
          watch.abort();
        },
        (timeoutSeconds + 30) * 1000,
      );
    };
    const started = Date.now();
    arm();
    try {
      await this.#options.client.watch<T>(
        this.#options.path,
        { resourceVersion: this.#resourceVersion, timeoutSeconds },
        (event) => {
          arm();
          events++;
          this.#attempt = 0;
          this.#apply(event);
        },
        watch.signal,
      );
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', stopWatch);
    }
    if (signal.aborted) return 'stopped';
    if (stalled) return 'stalled';
    if (events === 0 && Date.now() - started < QUICK_CLOSE_MS) throw new Error('the server ended the watch at once');
    return 'closed';
  }
}
