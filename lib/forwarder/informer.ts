/**
 * Informers on @kubernetes/client-node's own `ListWatch` (what `makeInformer` returns): list, then watch
 * from the list's resourceVersion; a closed watch resumes from the last resourceVersion seen; a `410`
 * (an ERROR event or status) clears it, so the next start re-lists, and the re-list reports deletions
 * that happened meanwhile. What it lacks, this file adds around it rather than replacing it:
 *
 *  - it stops for good on any other error (a 500 on list or watch, a refused connection) and leaves the
 *    restart to the caller: restarted here with exponential backoff and jitter, counted by reason;
 *  - it asks for no bookmarks and sets no `timeoutSeconds`, and the library's 30 s request timeout is
 *    overwritten before use, so a half-open connection would hang for ever: the `Watch` below adds
 *    `allowWatchBookmarks=true` (resourceVersions stay fresh, fewer 410s after quiet periods) and
 *    `timeoutSeconds`, and aborts a watch silent for longer than that (stalled);
 *  - it caches whole objects: a `transform` keeps only the fields the forwarder reads (nodes' status
 *    and most managedFields go), which is most of the forwarder's memory with 1,000 nodes.
 */
import {
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
  ListWatch,
  Watch,
} from '@kubernetes/client-node';
import type { Logger } from '../log/logger.ts';

export type RestartReason = 'closed' | 'expired' | 'error' | 'stalled';

export interface InformerOptions<T extends KubernetesObject> {
  /** For logs and metrics, e.g. `nodes`. */
  readonly resource: string;
  /** The collection path, e.g. `/api/v1/nodes`. */
  readonly path: string;
  readonly kubeConfig: KubeConfig;
  /** One consistent list (all pages), with the list's resourceVersion. */
  readonly list: () => Promise<KubernetesListObject<T>>;
  /** Keeps what the caller reads of each object (applied to listed and watched objects alike). */
  readonly transform?: (object: T) => T;
  readonly onChange?: (type: 'add' | 'update' | 'delete', object: T) => void;
  /** Every (re)start of the watch after the first, with why (metrics). */
  readonly onRestart?: (reason: RestartReason) => void;
  /** After each successful list (the first makes the cache synced). */
  readonly onList?: () => void;
  readonly logger: Logger;
  /** Server-side watch timeout (default 300 s); a watch silent for this plus 30 s is aborted. */
  readonly watchTimeoutSeconds?: number;
  readonly backoff?: { readonly baseMs: number; readonly maxMs: number };
}

export interface InformerSubscriber<T> {
  onChange?(type: 'add' | 'update' | 'delete', object: T): void;
  /** After every successful list, when the cache holds the listed state. */
  onList?(): void;
}

type WatchCallback = (phase: string, apiObj: unknown, watchObj?: unknown) => void;
type DoneCallback = (err: unknown) => void;

/** client-node's Watch with bookmarks, a server-side timeout, a stall watchdog and the transform. */
class TunedWatch<T extends KubernetesObject> extends Watch {
  readonly #options: InformerOptions<T>;
  readonly #hooks: { onStall: () => void; onWatchStart: () => void };
  /** The resourceVersion of the last event or bookmark handed on (what a resume would start from). */
  lastSeenResourceVersion: string | undefined;

  constructor(options: InformerOptions<T>, hooks: { onStall: () => void; onWatchStart: () => void }) {
    super(options.kubeConfig);
    this.#options = options;
    this.#hooks = hooks;
  }

  override async watch(
    path: string,
    queryParams: Record<string, unknown>,
    callback: WatchCallback,
    done: DoneCallback,
  ): Promise<AbortController> {
    const timeoutSeconds = this.#options.watchTimeoutSeconds ?? 300;
    const params = { ...queryParams, allowWatchBookmarks: true, timeoutSeconds };
    let controller: AbortController | undefined;
    let timer: NodeJS.Timeout | undefined;
    const arm = (): void => {
      clearTimeout(timer);
      timer = setTimeout(
        () => {
          this.#hooks.onStall();
          controller?.abort();
        },
        (timeoutSeconds + 30) * 1000,
      );
      timer.unref();
    };
    const transform = this.#options.transform;
    const onEvent: WatchCallback = (phase, object, raw) => {
      arm();
      const shaped =
        transform && (phase === 'ADDED' || phase === 'MODIFIED' || phase === 'DELETED')
          ? transform(object as T)
          : object;
      callback(phase, shaped, raw);
      this.lastSeenResourceVersion =
        (object as KubernetesObject | undefined)?.metadata?.resourceVersion ?? this.lastSeenResourceVersion;
    };
    const onDone: DoneCallback = (err) => {
      clearTimeout(timer);
      done(err);
    };
    arm();
    this.#hooks.onWatchStart();
    controller = await super.watch(path, params, onEvent, onDone);
    return controller;
  }
}

function isExpired(error: unknown): boolean {
  const shape = error as { statusCode?: unknown; code?: unknown } | undefined;
  return shape?.statusCode === 410 || shape?.code === 410;
}

/** One resource's informer, restarted with backoff whenever client-node's ListWatch gives up. */
export class ResilientInformer<T extends KubernetesObject> {
  readonly #options: InformerOptions<T>;
  readonly #listWatch: ListWatch<T>;
  readonly #watch: TunedWatch<T>;
  #stopped = false;
  #synced = false;
  #attempt = 0;
  #restartTimer: NodeJS.Timeout | undefined;
  #pendingReason: RestartReason | undefined;
  #listed = false;
  readonly #subscribers: InformerSubscriber<T>[] = [];
  #firstSync: { promise: Promise<void>; resolve: () => void };

  constructor(options: InformerOptions<T>) {
    this.#options = options;
    let resolve: () => void = () => undefined;
    const promise = new Promise<void>((r) => {
      resolve = r;
    });
    this.#firstSync = { promise, resolve };
    const watch = new TunedWatch<T>(options, {
      onStall: () => {
        this.#pendingReason = 'stalled';
      },
      onWatchStart: () => this.#watching(),
    });
    this.#watch = watch;
    const list = async (): Promise<KubernetesListObject<T>> => {
      const listed = await options.list();
      const items = options.transform ? listed.items.map(options.transform) : listed.items;
      this.#attempt = 0;
      this.#listed = true;
      return { ...listed, items };
    };
    this.#listWatch = new ListWatch<T>(options.path, watch as unknown as Watch, list, false);
    this.#listWatch.on('add', (object) => this.#changed('add', object));
    this.#listWatch.on('update', (object) => this.#changed('update', object));
    this.#listWatch.on('delete', (object) => this.#changed('delete', object));
    this.#listWatch.on('connect', () => this.#connected());
    this.#listWatch.on('error', (error) => this.#failed(error));
  }

  get synced(): boolean {
    return this.#synced;
  }

  /** The resourceVersion of the last watch event or bookmark seen (tests wait on it instead of sleeping). */
  get lastSeenResourceVersion(): string | undefined {
    return this.#watch.lastSeenResourceVersion;
  }

  get resource(): string {
    return this.#options.resource;
  }

  /** Adds a listener for changes and for completed (re-)lists (several sources share one informer). */
  subscribe(subscriber: InformerSubscriber<T>): void {
    this.#subscribers.push(subscriber);
  }

  #changed(type: 'add' | 'update' | 'delete', object: T): void {
    this.#options.onChange?.(type, object);
    for (const subscriber of this.#subscribers) subscriber.onChange?.(type, object);
  }

  /** Cached objects (transformed). */
  list(): T[] {
    return [...this.#listWatch.list()];
  }

  get(name: string, namespace?: string): T | undefined {
    return this.#listWatch.get(name, namespace);
  }

  /** Starts list + watch (retrying until a list succeeds); see `whenSynced`. */
  start(): void {
    this.#stopped = false;
    void this.#listWatch.start();
  }

  /** Resolves after the first successful list. */
  whenSynced(): Promise<void> {
    return this.#firstSync.promise;
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#restartTimer);
    await this.#listWatch.stop();
  }

  /** `connect` fires before each (re)start: the first start is not a restart. */
  #connected(): void {
    if (!this.#synced && this.#pendingReason === undefined) return;
    const fresh = this.#listWatch.latestResourceVersion() === '';
    this.#options.onRestart?.(this.#pendingReason ?? (fresh ? 'expired' : 'closed'));
    this.#pendingReason = undefined;
  }

  /** A watch is starting: after a list, the cache holds the listed state (the first one: synced). */
  #watching(): void {
    if (!this.#listed) return;
    this.#listed = false;
    if (!this.#synced) {
      this.#synced = true;
      this.#firstSync.resolve();
    }
    this.#options.onList?.();
    for (const subscriber of this.#subscribers) subscriber.onList?.();
  }

  #failed(error: unknown): void {
    if (this.#stopped) return;
    const reason: RestartReason =
      this.#pendingReason === 'stalled' ? 'stalled' : isExpired(error) ? 'expired' : 'error';
    this.#pendingReason = reason;
    const { baseMs, maxMs } = this.#options.backoff ?? { baseMs: 500, maxMs: 30_000 };
    const ceiling = Math.min(maxMs, baseMs * 2 ** this.#attempt);
    this.#attempt++;
    const delay = Math.round(ceiling / 2 + (Math.random() * ceiling) / 2);
    this.#options.logger.warn('watch failed; restarting with backoff', {
      resource: this.#options.resource,
      reason,
      delayMs: delay,
      error: error instanceof Error ? error.message : String(error),
    });
    clearTimeout(this.#restartTimer);
    this.#restartTimer = setTimeout(() => {
      if (!this.#stopped) void this.#listWatch.start();
    }, delay);
  }
}
