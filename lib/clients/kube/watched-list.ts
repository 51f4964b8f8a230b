/**
 * A list kept current by one watch from the list's resourceVersion: what a reconcile pass that waits for a
 * change reads instead of listing again (one list and one watch request for the whole wait, however many
 * times it wakes). A watch that ends or fails (410 Gone, its server-side timeout, the connection lost, an
 * ERROR event) ends the shared signal: the waiter is woken with `false` and must not read the views again —
 * the pass returns and the next one lists afresh.
 */
import { type KubeConfig, Watch } from '@kubernetes/client-node';

/**
 * How long a watch may take to open (its response headers). An apiserver answers a watch at once and
 * sends events later, so a watch not open by then hangs: it ends the signal and the pass returns.
 * (@kubernetes/client-node's Watch sets up a 30 s timeout of its own and then discards it, so without
 * this a hung open held the pass, and its Lambda, until the connection died.)
 */
export const WATCH_OPEN_TIMEOUT_MS = 5_000;

/**
 * The kubeconfig as the watch sees it: each request gives up when no answer arrived within `ms` (the
 * HTTP client's own timeout for the response, which also frees the socket).
 */
function withOpenTimeout(kubeConfig: KubeConfig, ms: number): KubeConfig {
  const bounded: KubeConfig = Object.create(kubeConfig);
  bounded.applyToFetchOptions = async (options) => ({
    ...(await kubeConfig.applyToFetchOptions(options)),
    timeout: ms,
  });
  return bounded;
}

/** `promise`'s value, or undefined when it has not settled within `ms` (a rejection reads as undefined too). */
async function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  try {
    return await Promise.race([promise.catch(() => undefined), late]);
  } finally {
    clearTimeout(timer);
  }
}

export interface WatchedObject {
  readonly metadata?: { readonly uid?: string; readonly namespace?: string; readonly name?: string };
}

export interface WatchedListSpec<T> {
  /** The collection's path, e.g. `/api/v1/pods`. */
  readonly path: string;
  /** Selectors of the list (the watch must see the same set). */
  readonly query: Readonly<Record<string, string>>;
  /** Whether an event is one the waiter waits for (other events only update the view). */
  readonly wakes: (type: string, object: T) => boolean;
  /**
   * Whether an event means the waiter must not wait on (the pass returns and the next one starts from
   * its checks): it ends the signal as a failed watch does.
   */
  readonly ends?: (type: string, object: T) => boolean;
}

const keyOf = (object: WatchedObject): string =>
  object.metadata?.uid ?? `${object.metadata?.namespace ?? ''}/${object.metadata?.name ?? ''}`;

/**
 * What waiters wait on: set by any waking event of the lists that share it, or by a list's watch ending
 * (then every later wait answers false at once — some view is stale).
 */
export class ChangeSignal {
  /** A waking event arrived that no `changed()` has reported yet. */
  #pending = false;
  #ended = false;
  #wake: (() => void) | undefined;

  notify(): void {
    this.#pending = true;
    this.#wake?.();
  }

  end(): void {
    this.#ended = true;
    this.#wake?.();
  }

  get ended(): boolean {
    return this.#ended;
  }

  /**
   * True as soon as a waking event arrives (or has arrived since the last call); false after `ms` or once
   * a watch ended. Never rejects; leaves no timer behind.
   */
  changed(ms: number): Promise<boolean> {
    if (this.#ended) return Promise.resolve(false);
    if (this.#pending) {
      this.#pending = false;
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const finish = (woke: boolean) => {
        clearTimeout(timer);
        this.#wake = undefined;
        if (woke) this.#pending = false;
        resolve(woke && !this.#ended);
      };
      const timer = setTimeout(() => finish(false), Math.max(0, ms));
      this.#wake = () => finish(true);
    });
  }
}

export class WatchedList<T extends WatchedObject> {
  readonly #items = new Map<string, T>();
  readonly #spec: WatchedListSpec<T>;
  readonly #resourceVersion: string;
  readonly #signal: ChangeSignal;
  #controller: AbortController | undefined;
  #ended = false;
  #closed = false;

  constructor(items: readonly T[], resourceVersion: string, spec: WatchedListSpec<T>, signal: ChangeSignal) {
    for (const item of items) this.#items.set(keyOf(item), item);
    this.#resourceVersion = resourceVersion;
    this.#spec = spec;
    this.#signal = signal;
  }

  /**
   * Opens the watch (the server ends it after `seconds` at the latest). Resolves within `openTimeoutMs`
   * (and a little): a watch that fails or does not open by then ends the signal.
   */
  async start(kubeConfig: KubeConfig, seconds: number, openTimeoutMs = WATCH_OPEN_TIMEOUT_MS): Promise<void> {
    const query = {
      ...this.#spec.query,
      resourceVersion: this.#resourceVersion,
      timeoutSeconds: String(Math.max(1, Math.ceil(seconds))),
      allowWatchBookmarks: 'false',
    };
    const opening = new Watch(withOpenTimeout(kubeConfig, openTimeoutMs)).watch(
      this.#spec.path,
      query,
      (type, object: T) => this.#apply(type, object),
      () => this.#end(),
    );
    // The HTTP client's timeout ends a hung open; the race bounds the wait even if it did not.
    const controller = await within(opening, openTimeoutMs + 100);
    if (!controller) {
      this.#end();
      opening.then((late) => late.abort()).catch(() => undefined);
      return;
    }
    this.#controller = controller;
    if (this.#closed) controller.abort();
  }

  /** The objects as of the last event; meaningful only while the signal has not ended. */
  items(): T[] {
    return [...this.#items.values()];
  }

  /** Ends the watch; idempotent. */
  close(): void {
    this.#closed = true;
    this.#ended = true;
    this.#controller?.abort();
  }

  #apply(type: string, object: T): void {
    if (this.#ended) return;
    if (type === 'ERROR' || !object?.metadata) {
      this.#end();
      return;
    }
    if (type === 'DELETED') this.#items.delete(keyOf(object));
    else if (type === 'ADDED' || type === 'MODIFIED') this.#items.set(keyOf(object), object);
    if (this.#spec.ends?.(type, object)) this.#end();
    else if (this.#spec.wakes(type, object)) this.#signal.notify();
  }

  #end(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#signal.end();
  }
}
