/**
 * The one Kubernetes API client. Every call drainbridge makes goes through `KubeClient`: a timeout per
 * call, retries with backoff on transient errors (lib/util/retry.ts), and errors mapped to the named
 * errors (lib/clients/kube/errors.ts). Built from a `KubeConfig` (lib/config builds one from a token + CA).
 */

import { Agent as HttpsAgent } from 'node:https';
import {
  ApiException,
  ApiextensionsV1Api,
  AppsV1Api,
  type ConfigurationOptions,
  CoordinationV1Api,
  CoreV1Api,
  type CoreV1Event,
  CustomObjectsApi,
  type KubeConfig,
  Observable,
  type ObservableMiddleware,
  PolicyV1Api,
  type RequestContext,
  type ResponseContext,
  type V1CustomResourceDefinition,
  type V1DaemonSet,
  type V1Lease,
  type V1Node,
  type V1Pod,
  type V1PodDisruptionBudget,
} from '@kubernetes/client-node';
import { ClusterUnreachable } from '../../errors/index.ts';
import { DEFAULT_RETRY, type RetryOptions, withRetry } from '../../util/retry.ts';
import { apiStatusOf, errorForStatus, isTransientStatus, statusFromResponse } from './errors.ts';
import { FIELD_MANAGER } from './field-manager.ts';
import { EVACUATION_API, type EvacuationObject, evictionBody, type MergePatch, podKey } from './paths.ts';
import { describeNoAnswer, failsFastOnFirstContact, noAnswerCode, noAnswerKind } from './reach.ts';

export interface KubeClientOptions {
  /** Per-call timeout in ms (each attempt). */
  readonly timeoutMs?: number;
  /** Retry settings for transient errors (`onRetry` to log them through lib/log); `isRetryable` is fixed by the client. */
  readonly retry?: Partial<Omit<RetryOptions, 'isRetryable'>>;
  /** Default page size for list calls (`--chunk-size`); 0 lists in one call. */
  readonly chunkSize?: number;
}

/** A list call's page, in the shape every generated `list*` returns. */
interface Page<T> {
  readonly items: T[];
  readonly metadata?: { readonly _continue?: string; readonly resourceVersion?: string };
}

/** A complete list and the resourceVersion it was read at (a watch from it misses nothing). */
export interface ListedAt<T> {
  readonly items: T[];
  readonly resourceVersion: string;
}

const DEFAULT_TIMEOUT_MS = 10_000;

function isRetryable(error: unknown): boolean {
  const status = apiStatusOf(error);
  return status !== undefined && isTransientStatus(status);
}

/** Whether an error thrown by the HTTP layer means no answer arrived (timeout, reset, refused). */
function isNoResponse(error: unknown): error is Error {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  return (
    error.name === 'AbortError' ||
    error.name === 'TimeoutError' ||
    error.name === 'FetchError' ||
    (typeof code === 'string' && /^(E[A-Z]+|UND_ERR)/.test(code))
  );
}

/**
 * A call that got no answer, as the error to throw: ClusterUnreachable on the client's first contact
 * (and for a certificate that does not match, ever), else a retried TransientError — each with a sentence
 * a person acts on (lib/clients/kube/reach.ts), the HTTP library's error kept only as the cause.
 */
function noAnswerError(
  operation: string,
  error: Error,
  contact: { server: string; answered: boolean; timeoutMs: number },
): Error {
  const kind = noAnswerKind(error);
  const first = !contact.answered;
  const sentence = describeNoAnswer(kind, contact.server, {
    firstContact: first,
    timeoutMs: contact.timeoutMs,
    code: noAnswerCode(error),
  });
  if (kind === 'tls' || (first && failsFastOnFirstContact(kind))) {
    return new ClusterUnreachable(`${operation}: ${sentence}`, { cause: error });
  }
  return errorForStatus(operation, { code: 0, reason: 'NoResponse', message: sentence, causes: [] }, error);
}

/** What the generated API methods take as their last argument. */
type CallOptions = ConfigurationOptions;

/**
 * One keep-alive agent per client, with the TLS settings of the agent the kubeconfig's authentication
 * made. @kubernetes/client-node builds a fresh https.Agent for every request, so every call paid a TCP
 * and TLS handshake of its own (a real cost from Lambda to a remote API server).
 */
class KeepAliveAgents {
  #agent: HttpsAgent | undefined;

  for(made: unknown): HttpsAgent | undefined {
    if (!(made instanceof HttpsAgent)) return undefined;
    this.#agent ??= new HttpsAgent({ ...made.options, keepAlive: true, maxSockets: 16 });
    return this.#agent;
  }
}

/**
 * Per-call options: middleware that bounds one request with an AbortSignal, optionally sets a header,
 * and reuses the client's connections. The object-parameter API runs observable middleware (the
 * generated client's rxjs stub), after the kubeconfig's authentication has set up the request.
 */
function requestOptions(timeoutMs: number, agents: KeepAliveAgents, contentType?: string): CallOptions {
  const middleware: ObservableMiddleware = {
    pre: (context: RequestContext) => {
      context.setSignal(AbortSignal.timeout(timeoutMs));
      if (contentType) context.setHeaderParam('Content-Type', contentType);
      const agent = agents.for(context.getAgent());
      if (agent) context.setAgent(agent);
      return new Observable(Promise.resolve(context));
    },
    post: (response: ResponseContext) => new Observable(Promise.resolve(response)),
  };
  return { middleware: [middleware], middlewareMergeStrategy: 'append' };
}

export class KubeClient {
  readonly core: CoreV1Api;
  readonly policy: PolicyV1Api;
  readonly apps: AppsV1Api;
  readonly coordination: CoordinationV1Api;
  readonly custom: CustomObjectsApi;
  readonly apiextensions: ApiextensionsV1Api;
  readonly #timeoutMs: number;
  readonly #retry: Omit<RetryOptions, 'isRetryable'>;
  readonly #agents = new KeepAliveAgents();
  readonly chunkSize: number;
  /** The API server's URL, for errors. */
  readonly #server: string;
  /** Whether the server has answered this client yet (any HTTP status): before, no answer is configuration. */
  #answered = false;
  /** What the watches (lib/clients/kube/watched-list.ts) connect with. */
  readonly kubeConfig: KubeConfig;

  constructor(kubeConfig: KubeConfig, options: KubeClientOptions = {}) {
    this.kubeConfig = kubeConfig;
    this.core = kubeConfig.makeApiClient(CoreV1Api);
    this.policy = kubeConfig.makeApiClient(PolicyV1Api);
    this.apps = kubeConfig.makeApiClient(AppsV1Api);
    this.coordination = kubeConfig.makeApiClient(CoordinationV1Api);
    this.custom = kubeConfig.makeApiClient(CustomObjectsApi);
    this.apiextensions = kubeConfig.makeApiClient(ApiextensionsV1Api);
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#retry = { ...DEFAULT_RETRY, ...options.retry };
    this.chunkSize = options.chunkSize ?? 500;
    this.#server = kubeConfig.getCurrentCluster()?.server ?? '(no server)';
  }

  /** Converts what the generated client threw into a mapped error; anything else (a bug, bad config) as is. */
  #mapError(operation: string, error: unknown): unknown {
    if (error instanceof ApiException) {
      this.#answered = true;
      return errorForStatus(operation, statusFromResponse(error.code, error.body), error);
    }
    if (!isNoResponse(error)) return error;
    const contact = { server: this.#server, answered: this.#answered, timeoutMs: this.#timeoutMs };
    return noAnswerError(operation, error, contact);
  }

  /**
   * Runs one API call with the timeout, retries and error mapping. `retry: false` makes a single attempt
   * (evictions: a refusal is classified by the caller, never retried in a loop here).
   */
  async call<T>(
    operation: string,
    send: (options: CallOptions) => Promise<T>,
    settings: { contentType?: string; retry?: boolean } = {},
  ): Promise<T> {
    const attempt = async (): Promise<T> => {
      try {
        const answer = await send(requestOptions(this.#timeoutMs, this.#agents, settings.contentType));
        this.#answered = true;
        return answer;
      } catch (error) {
        throw this.#mapError(operation, error);
      }
    };
    const attempts = settings.retry === false ? 1 : this.#retry.attempts;
    return withRetry(attempt, { ...this.#retry, attempts, isRetryable });
  }

  /** Follows `continue` tokens until the list is complete; `limit` is the chunk size (0: one call). */
  async listAll<T>(
    operation: string,
    list: (page: { limit?: number; _continue?: string }, options: CallOptions) => Promise<Page<T>>,
    chunkSize = this.chunkSize,
  ): Promise<T[]> {
    return (await this.listAllAt(operation, list, chunkSize)).items;
  }

  /** `listAll`, with the resourceVersion of the list (its last page's: a paged list is one snapshot). */
  async listAllAt<T>(
    operation: string,
    list: (page: { limit?: number; _continue?: string }, options: CallOptions) => Promise<Page<T>>,
    chunkSize = this.chunkSize,
  ): Promise<ListedAt<T>> {
    const items: T[] = [];
    let token: string | undefined;
    let resourceVersion = '';
    do {
      const page: { limit?: number; _continue?: string } = {};
      if (chunkSize > 0) page.limit = chunkSize;
      if (token) page._continue = token;
      const result = await this.call(operation, (options) => list(page, options));
      items.push(...result.items);
      resourceVersion = result.metadata?.resourceVersion ?? '';
      token = result.metadata?._continue || undefined;
    } while (token);
    return { items, resourceVersion };
  }

  getNode(name: string): Promise<V1Node> {
    return this.call(`get node ${name}`, (o) => this.core.readNode({ name }, o));
  }

  listNodes(labelSelector?: string, fieldSelector?: string): Promise<V1Node[]> {
    return this.listAll('list nodes', (page, o) => this.core.listNode({ ...page, labelSelector, fieldSelector }, o));
  }

  /**
   * A JSON merge patch; put `metadata.resourceVersion` in it to make the write conditional (409 on change).
   * Sent as field manager `drainbridge`, so managedFields tell drainbridge's cordon from anyone else's.
   */
  patchNode(name: string, patch: MergePatch): Promise<V1Node> {
    const fieldManager = FIELD_MANAGER;
    return this.call(`patch node ${name}`, (o) => this.core.patchNode({ name, body: patch, fieldManager }, o), {
      contentType: 'application/merge-patch+json',
    });
  }

  /** Pods bound to a node (`fieldSelector=spec.nodeName=`), paged by `chunkSize`. */
  async listPodsOnNode(
    nodeName: string,
    settings: { labelSelector?: string; chunkSize?: number } = {},
  ): Promise<V1Pod[]> {
    return (await this.listPodsOnNodeAt(nodeName, settings)).items;
  }

  /** `listPodsOnNode` with the list's resourceVersion. */
  listPodsOnNodeAt(
    nodeName: string,
    settings: { labelSelector?: string; chunkSize?: number } = {},
  ): Promise<ListedAt<V1Pod>> {
    const fieldSelector = `spec.nodeName=${nodeName}`;
    const labelSelector = settings.labelSelector || undefined;
    return this.listAllAt(
      `list pods on node ${nodeName}`,
      (page, o) => this.core.listPodForAllNamespaces({ ...page, fieldSelector, labelSelector }, o),
      settings.chunkSize,
    );
  }

  listPods(fieldSelector?: string, labelSelector?: string): Promise<V1Pod[]> {
    return this.listAll('list pods', (page, o) =>
      this.core.listPodForAllNamespaces({ ...page, fieldSelector, labelSelector }, o),
    );
  }

  /**
   * Creates a policy/v1 Eviction with a uid precondition (a replacement pod of the same name is never
   * evicted by mistake). One attempt: the caller classifies refusals.
   */
  async evictPod(pod: V1Pod, settings: { gracePeriodSeconds?: number; dryRun?: boolean } = {}): Promise<void> {
    const name = pod.metadata?.name ?? '';
    const namespace = pod.metadata?.namespace ?? '';
    const body = evictionBody(pod, settings.gracePeriodSeconds, settings.dryRun);
    const dryRun = settings.dryRun ? 'All' : undefined;
    await this.call(
      `evict pod ${podKey(pod)}`,
      (o) => this.core.createNamespacedPodEviction({ name, namespace, body, dryRun }, o),
      { retry: false },
    );
  }

  /** Deletes a pod (only for `disableEviction`), with a uid precondition. */
  async deletePod(pod: V1Pod, gracePeriodSeconds?: number): Promise<void> {
    const name = pod.metadata?.name ?? '';
    const namespace = pod.metadata?.namespace ?? '';
    const grace = gracePeriodSeconds !== undefined && gracePeriodSeconds >= 0 ? gracePeriodSeconds : undefined;
    const body = { preconditions: { uid: pod.metadata?.uid }, gracePeriodSeconds: grace };
    await this.call(
      `delete pod ${podKey(pod)}`,
      (o) => this.core.deleteNamespacedPod({ name, namespace, body, gracePeriodSeconds: grace }, o),
      { retry: false },
    );
  }

  async listPodDisruptionBudgets(): Promise<V1PodDisruptionBudget[]> {
    return (await this.listPodDisruptionBudgetsAt()).items;
  }

  /** Every PDB, with the list's resourceVersion. */
  listPodDisruptionBudgetsAt(): Promise<ListedAt<V1PodDisruptionBudget>> {
    return this.listAllAt('list poddisruptionbudgets', (page, o) =>
      this.policy.listPodDisruptionBudgetForAllNamespaces(page, o),
    );
  }

  getDaemonSet(namespace: string, name: string): Promise<V1DaemonSet> {
    return this.call(`get daemonset ${namespace}/${name}`, (o) =>
      this.apps.readNamespacedDaemonSet({ namespace, name }, o),
    );
  }

  createEvent(event: CoreV1Event): Promise<CoreV1Event> {
    const namespace = event.metadata.namespace ?? 'default';
    return this.call(`create event in ${namespace}`, (o) =>
      this.core.createNamespacedEvent({ namespace, body: event }, o),
    );
  }

  getLease(namespace: string, name: string): Promise<V1Lease> {
    return this.call(`get lease ${namespace}/${name}`, (o) =>
      this.coordination.readNamespacedLease({ namespace, name }, o),
    );
  }

  createLease(namespace: string, lease: V1Lease): Promise<V1Lease> {
    return this.call(`create lease in ${namespace}`, (o) =>
      this.coordination.createNamespacedLease({ namespace, body: lease }, o),
    );
  }

  /** Replaces a lease; its `metadata.resourceVersion` makes the write conditional (ConflictError on change). */
  replaceLease(namespace: string, lease: V1Lease): Promise<V1Lease> {
    const name = lease.metadata?.name ?? '';
    return this.call(`replace lease ${namespace}/${name}`, (o) =>
      this.coordination.replaceNamespacedLease({ namespace, name, body: lease }, o),
    );
  }

  getEvacuation(name: string): Promise<EvacuationObject> {
    return this.call(`get evacuation ${name}`, async (o) => {
      const found: unknown = await this.custom.getClusterCustomObject({ ...EVACUATION_API, name }, o);
      return found as EvacuationObject;
    });
  }

  /**
   * Evacuation records: all of them (the resumption of unfinished requests after a restart), or those
   * matching a label selector (`drainbridge.io/node=NAME`: a node's requests, for `drainbridge repair`).
   */
  listEvacuations(labelSelector?: string): Promise<EvacuationObject[]> {
    const operation = labelSelector ? `list evacuations (${labelSelector})` : 'list evacuations';
    const selector = labelSelector ? { labelSelector } : {};
    return this.listAll(operation, async (page, o) => {
      const listed = (await this.custom.listClusterCustomObject({ ...EVACUATION_API, ...page, ...selector }, o)) as {
        items?: EvacuationObject[];
        metadata?: { continue?: string };
      };
      // A custom resource list comes back as plain JSON: its token is `continue`, not the typed `_continue`.
      const token = listed.metadata?.continue;
      return { items: listed.items ?? [], ...(token ? { metadata: { _continue: token } } : {}) };
    });
  }

  createEvacuation(body: EvacuationObject): Promise<EvacuationObject> {
    return this.call(`create evacuation ${body.metadata.name}`, async (o) => {
      const created: unknown = await this.custom.createClusterCustomObject({ ...EVACUATION_API, body }, o);
      return created as EvacuationObject;
    });
  }

  /** Replaces an Evacuation; `metadata.resourceVersion` makes it conditional (ConflictError on change). */
  replaceEvacuation(body: EvacuationObject): Promise<EvacuationObject> {
    const name = body.metadata.name;
    return this.call(`replace evacuation ${name}`, async (o) => {
      const replaced: unknown = await this.custom.replaceClusterCustomObject({ ...EVACUATION_API, name, body }, o);
      return replaced as EvacuationObject;
    });
  }

  /**
   * Deletes an Evacuation as it was read: the `resourceVersion` precondition makes the delete fail with
   * ConflictError when the record changed since (someone still writes to it), and 404 when it is gone.
   */
  async deleteEvacuation(name: string, resourceVersion: string): Promise<void> {
    await this.call(`delete evacuation ${name}`, (o) =>
      this.custom.deleteClusterCustomObject(
        { ...EVACUATION_API, name, body: { preconditions: { resourceVersion } } },
        o,
      ),
    );
  }

  /** A JSON merge patch of a cluster-scoped custom object (its status with `subresource: 'status'`). */
  patchClusterObject<T>(
    api: { readonly group: string; readonly version: string; readonly plural: string },
    name: string,
    patch: MergePatch,
    subresource?: 'status',
  ): Promise<T> {
    const operation = `patch ${api.plural}${subresource ? '/status' : ''} ${name}`;
    return this.call(
      operation,
      async (o) => {
        const request = { ...api, name, body: patch };
        const patched: unknown = subresource
          ? await this.custom.patchClusterCustomObjectStatus(request, o)
          : await this.custom.patchClusterCustomObject(request, o);
        return patched as T;
      },
      { contentType: 'application/merge-patch+json' },
    );
  }

  getCustomResourceDefinition(name: string): Promise<V1CustomResourceDefinition> {
    return this.call(`get customresourcedefinition ${name}`, (o) =>
      this.apiextensions.readCustomResourceDefinition({ name }, o),
    );
  }
}
