/**
 * Fans store changes out to watchers, keeps a bounded history so a watch can resume from a recent
 * resourceVersion (older ones get 410 Gone, as after etcd compaction), and sends bookmarks.
 */
import { matchesAll, parseSelector, type Requirement, SelectorParseError } from '../../lib/clients/kube/selectors.ts';
import { matchesFields, parseFieldSelector } from './fields.ts';
import { badRequest, gone } from './status.ts';
import type { Clock, FieldRequirement, KubeObject, Watch, WatchEvent, WatchEventType, WatchOptions } from './types.ts';

/** One recorded change. `previous` is the object before a MODIFIED/DELETED, for selector transitions. */
export interface Change {
  rv: number;
  storeKey: string;
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  object: KubeObject;
  previous?: KubeObject;
}

/** Compiled filters of one watch or list. */
export interface Filter {
  namespace?: string;
  labels: Requirement[];
  fields: FieldRequirement[];
}

/** Parses the selectors of a list or watch; 400 BadRequest when one is malformed. */
export function compileFilter(options: { namespace?: string; labelSelector?: string; fieldSelector?: string }): Filter {
  let labels: Requirement[];
  try {
    labels = parseSelector(options.labelSelector ?? '');
  } catch (error) {
    if (error instanceof SelectorParseError) throw badRequest(`unable to parse requirement: ${error.message}`);
    throw error;
  }
  const filter: Filter = { labels, fields: parseFieldSelector(options.fieldSelector) };
  if (options.namespace) filter.namespace = options.namespace;
  return filter;
}

/** Whether an object passes a filter. */
export function passes(filter: Filter, object: KubeObject | undefined): boolean {
  if (!object) return false;
  if (filter.namespace && object.metadata.namespace !== filter.namespace) return false;
  return matchesAll(filter.labels, object.metadata.labels) && matchesFields(filter.fields, object);
}

interface Watcher {
  storeKey: string;
  filter: Filter;
  deliver: (event: WatchEvent) => void;
  stop: () => void;
}

/** How a change looks to one watcher: selector transitions turn MODIFIED into ADDED or DELETED. */
function eventFor(filter: Filter, change: Change): WatchEvent | undefined {
  const now = passes(filter, change.object);
  const before = change.type !== 'ADDED' && passes(filter, change.previous);
  if (change.type === 'DELETED') return before || now ? { type: 'DELETED', object: change.object } : undefined;
  if (change.type === 'ADDED') return now ? { type: 'ADDED', object: change.object } : undefined;
  let type: WatchEventType | undefined;
  if (now) type = before ? 'MODIFIED' : 'ADDED';
  else if (before) type = 'DELETED';
  return type ? { type, object: change.object } : undefined;
}

export interface WatchHubOptions {
  clock: Clock;
  /** Changes kept for resuming watches. */
  historySize: number;
}

/** Delivery is queued and flushed in a microtask, so listeners never run inside a store write. */
function queuedListener(listener: (event: WatchEvent) => void): {
  deliver: (event: WatchEvent) => void;
  stop: () => void;
} {
  let queue: WatchEvent[] = [];
  let stopped = false;
  const flush = (): void => {
    const batch = queue;
    queue = [];
    for (const event of batch) if (!stopped) listener(event);
  };
  return {
    deliver: (event) => {
      if (stopped) return;
      if (queue.length === 0) queueMicrotask(flush);
      queue.push(event);
    },
    stop: () => {
      stopped = true;
    },
  };
}

/** The hub; the store calls `record` for every committed change. */
export class WatchHub {
  readonly #options: WatchHubOptions;
  readonly #history: Change[] = [];
  readonly #watchers = new Set<Watcher>();
  /** The newest resourceVersion that has fallen out of the history. */
  #compactedRv = 0;

  constructor(options: WatchHubOptions) {
    this.#options = options;
  }

  record(change: Change): void {
    this.#history.push(change);
    if (this.#history.length > this.#options.historySize) {
      const dropped = this.#history.shift();
      if (dropped) this.#compactedRv = dropped.rv;
    }
    for (const watcher of this.#watchers) {
      if (watcher.storeKey !== change.storeKey) continue;
      const event = eventFor(watcher.filter, change);
      if (event) watcher.deliver({ type: event.type, object: structuredClone(event.object) });
    }
  }

  /**
   * Subscribes. `initial` supplies the current objects for a watch without a resourceVersion;
   * `bookmark` builds a bookmark object for the current resourceVersion.
   */
  subscribe(
    storeKey: string,
    options: WatchOptions,
    hooks: { initial: () => KubeObject[]; bookmark: () => KubeObject },
    listener: (event: WatchEvent) => void,
  ): Watch {
    const filter = compileFilter(options);
    const queued = queuedListener(listener);
    const replay = this.#replayFor(storeKey, filter, options.resourceVersion, hooks.initial);
    for (const event of replay) queued.deliver(event);
    const timer = options.allowBookmarks
      ? this.#options.clock.setInterval(
          () => queued.deliver({ type: 'BOOKMARK', object: hooks.bookmark() }),
          options.bookmarkIntervalMs ?? 10_000,
        )
      : undefined;
    const watcher: Watcher = {
      storeKey,
      filter,
      deliver: queued.deliver,
      stop: () => {
        this.#watchers.delete(watcher);
        timer?.cancel();
        queued.stop();
      },
    };
    this.#watchers.add(watcher);
    return { stop: watcher.stop };
  }

  #replayFor(storeKey: string, filter: Filter, fromRv: string | undefined, initial: () => KubeObject[]): WatchEvent[] {
    if (fromRv === undefined || fromRv === '' || fromRv === '0') {
      return initial()
        .filter((object) => passes(filter, object))
        .map((object) => ({ type: 'ADDED', object }));
    }
    const since = Number(fromRv);
    if (!Number.isInteger(since) || since < 0) throw badRequest(`invalid resourceVersion: "${fromRv}"`);
    if (since < this.#compactedRv) throw gone(`too old resource version: ${since} (${this.#compactedRv + 1})`);
    const events: WatchEvent[] = [];
    for (const change of this.#history) {
      if (change.rv <= since || change.storeKey !== storeKey) continue;
      const event = eventFor(filter, change);
      if (event) events.push({ type: event.type, object: structuredClone(event.object) });
    }
    return events;
  }

  /** Subscribed watchers. */
  get size(): number {
    return this.#watchers.size;
  }

  /** Stops every watcher (simulator shutdown). */
  closeAll(): void {
    for (const watcher of [...this.#watchers]) watcher.stop();
  }
}
