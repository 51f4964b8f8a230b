/**
 * The lean Kubernetes client: plain JSON over HTTPS for exactly the calls the forwarder and the node
 * agent make — list pages and watches, Leases, Events, NodeMaintenance patches, the Evacuation record and
 * node reads. Same contract as `KubeClient` (lib/clients/kube/client.ts) for those calls: a timeout per attempt,
 * retries of transient answers with backoff (lib/util/retry.ts), errors mapped to the named errors
 * (lib/clients/kube/errors.ts), and the same method signatures, so code written against `KubeClient` takes this
 * one. What it adds: every call can be cancelled, and `close()` cancels them all and closes the sockets.
 *
 * Why not client-node here: importing it costs ~45 MiB of resident memory (its generated APIs and model
 * serializer cannot be tree-shaken, and `KubeConfig` imports them), more than half of the forwarder's
 * 80 MiB budget. Its types are used (type-only imports cost nothing at run time).
 */
import type {
  CoreV1Event,
  KubernetesObject,
  V1CustomResourceDefinition,
  V1Lease,
  V1Node,
  V1Pod,
} from '@kubernetes/client-node';
import { DrainbridgeError } from '../../../errors/index.ts';
import { DEFAULT_RETRY, type RetryOptions, withRetry } from '../../../util/retry.ts';
import { apiStatusOf, errorForStatus, isTransientStatus, statusFromResponse } from '../errors.ts';
import { EVACUATION_API, type EvacuationObject, type MergePatch } from '../paths.ts';
import { type KubeAccessInput, type KubeConfigLike, type KubeEndpoint, loadKubeEndpoint } from './endpoint.ts';
import { abortableSleep, deadline } from './signals.ts';
import { KubeTransport } from './transport.ts';

export interface KubeHttpClientOptions {
  /** Per-attempt timeout in ms (a watch: until its headers arrive). Default 10 s. */
  readonly timeoutMs?: number;
  readonly retry?: Partial<Omit<RetryOptions, 'isRetryable'>>;
}

export interface CallSettings {
  /** false: one attempt. */
  readonly retry?: boolean;
  readonly signal?: AbortSignal;
}

interface Call extends CallSettings {
  readonly method: string;
  readonly path: string;
  readonly body?: unknown;
  readonly contentType?: string;
}

/** One page of a list (`limit` / `continue`), with the list's resourceVersion. */
export interface ListPage<T> {
  readonly items: T[];
  readonly metadata?: { readonly resourceVersion?: string; readonly continue?: string };
}

/** One event of a watch stream. */
export interface WatchEvent<T = KubernetesObject> {
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  readonly object: T;
}

/** The calls' coordinates of a cluster-scoped custom resource. */
export interface ClusterResource {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
}

const DEFAULT_TIMEOUT_MS = 10_000;
const MERGE_PATCH = 'application/merge-patch+json';
/** MicroTime fields (RFC 3339 with exactly six fractional digits, or the API server refuses them). */
const MICRO_TIME_FIELDS = new Set(['acquireTime', 'renewTime', 'eventTime']);

/** JSON with Kubernetes' time formats: `metav1.MicroTime` to the microsecond, `metav1.Time` to the second. */
export function kubeJson(body: unknown): string {
  return JSON.stringify(body, function (this: Record<string, unknown>, key: string, value: unknown) {
    const raw = this[key];
    if (!(raw instanceof Date)) return value;
    const iso = raw.toISOString();
    return MICRO_TIME_FIELDS.has(key) ? `${iso.slice(0, 23)}000Z` : `${iso.slice(0, 19)}Z`;
  });
}

const segment = encodeURIComponent;

function query(params: Readonly<Record<string, string | number | boolean | undefined>>): string {
  const pairs = Object.entries(params).filter(
    (pair): pair is [string, string | number | boolean] => pair[1] !== undefined,
  );
  return pairs.length === 0
    ? ''
    : `?${new URLSearchParams(pairs.map(([k, v]): [string, string] => [k, String(v)])).toString()}`;
}

function customPath(api: ClusterResource, name?: string): string {
  return `/apis/${api.group}/${api.version}/${api.plural}${name === undefined ? '' : `/${segment(name)}`}`;
}

const leasePath = (namespace: string, name?: string): string =>
  `/apis/coordination.k8s.io/v1/namespaces/${segment(namespace)}/leases${name === undefined ? '' : `/${segment(name)}`}`;

function isRetryableError(error: unknown): boolean {
  const status = apiStatusOf(error);
  return status !== undefined && isTransientStatus(status);
}

export class KubeHttpClient {
  readonly #transport: KubeTransport;
  readonly #timeoutMs: number;
  readonly #retry: Omit<RetryOptions, 'isRetryable'>;
  /** Aborted by close(): every call in flight ends, later calls fail at once. */
  readonly #closed = new AbortController();

  constructor(endpoint: KubeEndpoint, options: KubeHttpClientOptions = {}) {
    this.#transport = new KubeTransport(endpoint);
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#retry = { ...DEFAULT_RETRY, ...options.retry };
  }

  /** A client for a configured access (lib/config's `KubeAccess`); see `loadKubeEndpoint`. */
  static async connect(
    access: KubeAccessInput,
    loadKubeConfig: () => Promise<KubeConfigLike>,
    options: KubeHttpClientOptions = {},
  ): Promise<KubeHttpClient> {
    return new KubeHttpClient(await loadKubeEndpoint(access, loadKubeConfig), options);
  }

  get server(): URL {
    return this.#transport.server;
  }

  /** Cancels every call in flight, closes the sockets; later calls fail at once. */
  close(): void {
    this.#closed.abort(new DrainbridgeError('the Kubernetes client was closed'));
    this.#transport.close();
  }

  /** One API call: JSON in and out, with the timeout, retries and error mapping. */
  async request<T>(operation: string, call: Call): Promise<T> {
    const attempt = async (): Promise<T> => {
      const text = await this.#attempt(operation, call);
      return (text ? JSON.parse(text) : undefined) as T;
    };
    const attempts = call.retry === false ? 1 : this.#retry.attempts;
    const signal = call.signal ? AbortSignal.any([call.signal, this.#closed.signal]) : this.#closed.signal;
    return withRetry(attempt, {
      ...this.#retry,
      attempts,
      isRetryable: (error) => !signal.aborted && isRetryableError(error),
      sleep: (ms) => abortableSleep(ms, signal),
    });
  }

  async #attempt(operation: string, call: Call): Promise<string> {
    const limit = deadline([call.signal, this.#closed.signal], this.#timeoutMs);
    try {
      const body = call.body === undefined ? undefined : kubeJson(call.body);
      const answer = await this.#transport.send(call.method, call.path, {
        signal: limit.signal,
        ...(body === undefined ? {} : { body }),
        ...(call.contentType ? { contentType: call.contentType } : {}),
      });
      if (answer.status >= 200 && answer.status < 300) return answer.body;
      throw errorForStatus(operation, statusFromResponse(answer.status, answer.body));
    } catch (error) {
      throw this.#noAnswer(operation, error, limit.timedOut());
    } finally {
      limit.release();
    }
  }

  /** A failure without an answer: a timeout or a broken connection is transient; a cancellation is not. */
  #noAnswer(operation: string, error: unknown, timedOut: boolean): unknown {
    if (apiStatusOf(error)) return error;
    if (this.#closed.signal.aborted) return this.#closed.signal.reason;
    const message = timedOut ? `no answer within ${this.#timeoutMs} ms` : (error as Error)?.message;
    if (!timedOut && (error as Error)?.name === 'AbortError')
      return new DrainbridgeError(`${operation}: cancelled`, { cause: error });
    return errorForStatus(operation, { code: 0, reason: 'NoResponse', message: String(message), causes: [] }, error);
  }

  // --- lists and watches (the informers) ---

  listPage<T>(
    path: string,
    page: { readonly limit: number; readonly continue?: string },
    signal?: AbortSignal,
  ): Promise<ListPage<T>> {
    return this.request(`list ${path}`, {
      method: 'GET',
      path: `${path}${query({ limit: page.limit, continue: page.continue })}`,
      ...(signal ? { signal } : {}),
    });
  }

  /**
   * One watch from `resourceVersion`: resolves when the server ends it (or `signal` aborts it); an ERROR
   * event or a refusal rejects with the mapped error (410 Expired: a `KubeApiError` with code 410).
   */
  async watch<T>(
    path: string,
    from: { readonly resourceVersion: string; readonly timeoutSeconds: number },
    onEvent: (event: WatchEvent<T>) => void,
    signal: AbortSignal,
  ): Promise<void> {
    const operation = `watch ${path}`;
    const limit = deadline([signal, this.#closed.signal], this.#timeoutMs);
    const url = `${path}${query({ watch: true, allowWatchBookmarks: true, ...from })}`;
    try {
      const answer = await this.#transport.stream(url, limit.signal);
      limit.stopClock();
      if (answer.status !== 200) throw errorForStatus(operation, statusFromResponse(answer.status, answer.body));
      await answer.lines((line) => {
        const event = JSON.parse(line) as WatchEvent<T>;
        if (event.type === 'ERROR') {
          const code = (event.object as { code?: unknown }).code;
          throw errorForStatus(operation, statusFromResponse(typeof code === 'number' ? code : 500, event.object));
        }
        onEvent(event);
      });
    } catch (error) {
      if (limit.signal.aborted && !limit.timedOut()) return;
      throw this.#noAnswer(operation, error, limit.timedOut());
    } finally {
      limit.release();
    }
  }

  // --- the calls KubeClient also has (same signatures) ---

  getNode(name: string): Promise<V1Node> {
    return this.request(`get node ${name}`, { method: 'GET', path: `/api/v1/nodes/${segment(name)}` });
  }

  /** Every node (all pages). */
  async listNodes(labelSelector?: string): Promise<V1Node[]> {
    const items: V1Node[] = [];
    let token: string | undefined;
    do {
      const page: ListPage<V1Node> = await this.request('list nodes', {
        method: 'GET',
        path: `/api/v1/nodes${query({ limit: 500, continue: token, labelSelector })}`,
      });
      items.push(...page.items);
      token = page.metadata?.continue || undefined;
    } while (token);
    return items;
  }

  /** Pods (all pages), in `namespace` or every namespace, by label and field selector. */
  async listPods(
    select: { readonly namespace?: string; readonly labelSelector?: string; readonly fieldSelector?: string } = {},
  ): Promise<V1Pod[]> {
    const { namespace, labelSelector, fieldSelector } = select;
    const base = namespace ? `/api/v1/namespaces/${segment(namespace)}/pods` : '/api/v1/pods';
    const items: V1Pod[] = [];
    let token: string | undefined;
    do {
      const page: ListPage<V1Pod> = await this.request(`list pods (${labelSelector ?? fieldSelector ?? 'all'})`, {
        method: 'GET',
        path: `${base}${query({ limit: 500, continue: token, labelSelector, fieldSelector })}`,
      });
      items.push(...page.items);
      token = page.metadata?.continue || undefined;
    } while (token);
    return items;
  }

  /** Every object of a cluster-scoped custom resource (all pages). */
  async listClusterObjects<T>(api: ClusterResource): Promise<T[]> {
    const items: T[] = [];
    let token: string | undefined;
    do {
      const page: ListPage<T> = await this.request(`list ${api.plural}.${api.group}`, {
        method: 'GET',
        path: `${customPath(api)}${query({ limit: 500, continue: token })}`,
      });
      items.push(...page.items);
      token = page.metadata?.continue || undefined;
    } while (token);
    return items;
  }

  getEvacuation(name: string): Promise<EvacuationObject> {
    return this.request(`get evacuation ${name}`, { method: 'GET', path: customPath(EVACUATION_API, name) });
  }

  /** Evacuation records (all pages), e.g. one node's by `drainbridge.io/node=<name>`. */
  async listEvacuations(labelSelector?: string): Promise<EvacuationObject[]> {
    const items: EvacuationObject[] = [];
    let token: string | undefined;
    do {
      const page: ListPage<EvacuationObject> = await this.request(
        labelSelector ? `list evacuations (${labelSelector})` : 'list evacuations',
        {
          method: 'GET',
          path: `${customPath(EVACUATION_API)}${query({ limit: 500, continue: token, labelSelector })}`,
        },
      );
      items.push(...page.items);
      token = page.metadata?.continue || undefined;
    } while (token);
    return items;
  }

  getLease(namespace: string, name: string, settings: CallSettings = {}): Promise<V1Lease> {
    return this.request(`get lease ${namespace}/${name}`, {
      ...settings,
      method: 'GET',
      path: leasePath(namespace, name),
    });
  }

  createLease(namespace: string, lease: V1Lease, settings: CallSettings = {}): Promise<V1Lease> {
    return this.request(`create lease in ${namespace}`, {
      ...settings,
      method: 'POST',
      path: leasePath(namespace),
      body: lease,
    });
  }

  /** Conditional on `metadata.resourceVersion` (ConflictError when it changed). */
  replaceLease(namespace: string, lease: V1Lease, settings: CallSettings = {}): Promise<V1Lease> {
    const name = lease.metadata?.name ?? '';
    return this.request(`replace lease ${namespace}/${name}`, {
      ...settings,
      method: 'PUT',
      path: leasePath(namespace, name),
      body: lease,
    });
  }

  /** Deletes the Lease if it is still at `resourceVersion` (409 ConflictError when it changed since read). */
  deleteLease(namespace: string, name: string, resourceVersion: string): Promise<unknown> {
    return this.request(`delete lease ${namespace}/${name}`, {
      method: 'DELETE',
      path: leasePath(namespace, name),
      body: { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { resourceVersion } },
    });
  }

  createEvent(event: CoreV1Event): Promise<CoreV1Event> {
    const namespace = event.metadata.namespace ?? 'default';
    return this.request(`create event in ${namespace}`, {
      method: 'POST',
      path: `/api/v1/namespaces/${segment(namespace)}/events`,
      body: event,
    });
  }

  /** A JSON merge patch of a cluster-scoped custom object (its status with `subresource: 'status'`). */
  patchClusterObject<T>(api: ClusterResource, name: string, patch: MergePatch, subresource?: 'status'): Promise<T> {
    return this.request(`patch ${api.plural}${subresource ? '/status' : ''} ${name}`, {
      method: 'PATCH',
      path: `${customPath(api, name)}${subresource ? '/status' : ''}`,
      body: patch,
      contentType: MERGE_PATCH,
    });
  }

  getCustomResourceDefinition(name: string): Promise<V1CustomResourceDefinition> {
    return this.request(`get customresourcedefinition ${name}`, {
      method: 'GET',
      path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${segment(name)}`,
    });
  }
}
