/**
 * The simulator's object store: the one in-process state every part of the simulator reads and writes
 * (the HTTP server, the control loops in sim/controllers, scenario loading, tests).
 *
 * Semantics follow the Kubernetes apiserver's generic registry where drainbridge or kubectl can tell the
 * difference: one global, monotonically increasing resourceVersion; optimistic concurrency (409 on a
 * stale resourceVersion); graceful pod deletion; finalizers; watch with a bounded history (410 Gone);
 * owner-reference garbage collection; namespace termination. Every failure is a `StatusError` carrying
 * the exact `metav1.Status` the apiserver would send (see status.ts).
 *
 * This file is the seam with sim/controllers: it only grows, it does not change.
 */

import type { Schema } from './schema/types.ts';
import type { StatusError } from './status.ts';

/** A Kubernetes owner reference (`metadata.ownerReferences[]`). */
export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/** `metav1.ObjectMeta`, typed as far as the simulator reads it; everything else passes through. */
export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  /** The store's global counter at the object's last write, as a decimal string. */
  resourceVersion?: string;
  /** Bumped on every change outside `metadata` and `status` for kinds with `hasGeneration`. */
  generation?: number;
  creationTimestamp?: string;
  /** Set when deletion has started but the object is held by a grace period or finalizers. */
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: OwnerReference[];
  [key: string]: unknown;
}

/** Any stored object: typed envelope, the rest is the kind's own business. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  [key: string]: unknown;
}

/** A printer column, as in a CRD's `additionalPrinterColumns` (served in Table responses). */
export interface PrinterColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  /** A simple JSONPath: fields, `[0]` indexes, `[?(@.type=='Ready')]` filters (sim/server/jsonpath.ts). */
  jsonPath: string;
  description?: string;
  priority?: number;
  format?: string;
}

/**
 * One served resource. Storage is keyed by `group` + `resource`; `versions` lists the API versions it
 * is served at (the object is stored once and its `apiVersion` rewritten to the version asked for).
 */
export interface ResourceType {
  /** API group; `''` for the core group. */
  group: string;
  /** Served versions, preferred (storage) version first. */
  versions: string[];
  /** Lower-case plural, the URL segment: `pods`, `poddisruptionbudgets`. */
  resource: string;
  /** Lower-case singular: `pod`. */
  singular: string;
  kind: string;
  /** The list kind: `PodList`. */
  listKind: string;
  namespaced: boolean;
  /** Subresources served, e.g. `['status', 'eviction', 'binding']`. */
  subresources: string[];
  shortNames?: string[];
  categories?: string[];
  /** Verbs advertised in discovery; defaults to the full set. */
  verbs?: string[];
  /** Whether writes outside metadata/status bump `metadata.generation`. */
  hasGeneration: boolean;
  /** Extra columns for Table responses (CRDs' `additionalPrinterColumns`). */
  printerColumns?: PrinterColumn[];
  /** Set for resources a CustomResourceDefinition created (the CRD's name). */
  definedBy?: string;
  /**
   * A CRD's structural schema (`openAPIV3Schema` of its storage version): custom resources are pruned,
   * defaulted and validated against it, `x-kubernetes-validations` included (sim/store/schema/).
   */
  schema?: Schema;
}

/** Identifies a stored resource: group + plural. */
export interface ResourceRef {
  group: string;
  resource: string;
}

/** The registry of served resources; CRDs add to it at run time. */
export interface ResourceRegistry {
  /** Adds or replaces a resource type. Watchers of the registry (discovery) see it at once. */
  register(type: ResourceType): void;
  /** Removes a resource type (a deleted CRD). Stored objects of it are dropped by the store. */
  unregister(ref: ResourceRef): void;
  /** The type for group + plural (any version), or undefined. */
  get(ref: ResourceRef): ResourceType | undefined;
  /** The type served at group/version/plural, or undefined when that version is not served. */
  lookup(group: string, version: string, resource: string): ResourceType | undefined;
  /** The type whose `kind` is served in `group` (e.g. for ownerReferences and scenario objects). */
  byKind(group: string, kind: string): ResourceType | undefined;
  /** Every type, in registration order. */
  all(): ResourceType[];
}

/** `metadata.name`, `spec.nodeName`, … with `=`, `==` or `!=`. */
export interface FieldRequirement {
  field: string;
  op: '=' | '!=';
  value: string;
}

export interface ListOptions {
  /** Omit for every namespace (and for cluster-scoped resources). */
  namespace?: string;
  /** The string form, e.g. `app=web,tier!=db`. */
  labelSelector?: string;
  /** The string form, e.g. `spec.nodeName=node-1,status.phase!=Succeeded`. */
  fieldSelector?: string;
  /** Maximum items per page; 0 or omitted means all. */
  limit?: number;
  /** The `continue` token of the previous page. */
  continue?: string;
}

/** What `scan` selects by: a list's selectors, and the owner index the controllers read. */
export interface ScanOptions extends Pick<ListOptions, 'namespace' | 'labelSelector' | 'fieldSelector'> {
  /** Only objects with an owner reference (`metadata.ownerReferences[].uid`) to this uid. */
  ownerUid?: string;
}

export interface ListResult {
  items: KubeObject[];
  /** The store's resourceVersion at the time of the (first page of the) list. */
  resourceVersion: string;
  /** Set when more items remain; pass back as `continue`. */
  continue?: string;
  /** Items left after this page (as `metadata.remainingItemCount`). */
  remainingItemCount?: number;
}

/** Options common to every write. */
export interface WriteOptions {
  /** `dryRun=All`: validate and return the result, change nothing, bump no counter, notify no watcher. */
  dryRun?: boolean;
}

export interface UpdateOptions extends WriteOptions {
  /** `'status'` writes only `.status` (and metadata is ignored); otherwise `.status` is kept as stored for kinds with a status subresource. */
  subresource?: string;
}

export interface DeleteOptions extends WriteOptions {
  /** Seconds before a bound pod is removed; 0 removes it now. Defaults to the pod's own grace period. */
  gracePeriodSeconds?: number;
  preconditions?: { uid?: string; resourceVersion?: string };
  /** `Orphan` leaves dependents in place (ownerReferences removed); otherwise they are deleted. */
  propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
}

export interface DeleteResult {
  /** The object as it was removed, or as it now stands with `deletionTimestamp` set. */
  object: KubeObject;
  /** True when the object is gone from the store; false when deletion is pending (grace period, finalizers). */
  removed: boolean;
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

export interface WatchEvent {
  type: WatchEventType;
  /** The object (a `Status` for ERROR; only `metadata.resourceVersion` is meaningful for BOOKMARK). */
  object: KubeObject;
}

export interface WatchOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /**
   * Start point. Omitted or `'0'`: synthetic ADDED events for every current object, then live events.
   * Otherwise every event after that version; a version older than the kept history throws 410 Gone.
   */
  resourceVersion?: string;
  /** Send a BOOKMARK carrying the current resourceVersion every `bookmarkIntervalMs` of clock time. */
  allowBookmarks?: boolean;
  bookmarkIntervalMs?: number;
}

/** A live subscription. Events are delivered asynchronously (microtasks), in resourceVersion order. */
export interface Watch {
  stop(): void;
}

/**
 * Simulated time. Controllers use only this (never raw `setTimeout`), so that a test can run the
 * cluster at `speed` 100 and stop every pending timer at shutdown.
 */
export interface Clock {
  /** How many simulated milliseconds pass per real millisecond (1 = real time). */
  readonly speed: number;
  /** Simulated epoch milliseconds. */
  now(): number;
  /** Simulated time as RFC 3339 with second precision, as Kubernetes timestamps are written. */
  nowIso(): string;
  /** Runs `callback` after `ms` simulated milliseconds. */
  setTimeout(callback: () => void, ms: number): ClockTimer;
  /** Runs `callback` every `ms` simulated milliseconds until cancelled. */
  setInterval(callback: () => void, ms: number): ClockTimer;
  /** Resolves after `ms` simulated milliseconds (rejects if the clock is stopped first). */
  sleep(ms: number): Promise<void>;
  /** Cancels every pending timer; later scheduling calls do nothing. */
  stop(): void;
  /**
   * Aborted once `stop()` has run (the store was closed): waiters that rely on timers, which a stopped
   * clock never fires, listen to it so that they settle instead of hanging.
   */
  readonly stopped: AbortSignal;
}

export interface ClockTimer {
  cancel(): void;
}

/** Who made a request, after authentication. */
export interface UserInfo {
  username: string;
  groups: string[];
  uid?: string;
}

/** A request as the admission hooks see it, before it is applied. */
export interface AdmissionRequest {
  verb: 'create' | 'update' | 'patch' | 'delete' | 'deletecollection';
  group: string;
  version: string;
  resource: string;
  /** `'eviction'`, `'status'`, … or undefined for the main resource. */
  subresource?: string;
  namespace?: string;
  name?: string;
  /** The decoded request body (an Eviction for `pods/eviction`, the object for create/update). */
  body?: unknown;
  user: UserInfo;
  dryRun: boolean;
}

/** What a hook decides: let the request through (undefined) or answer it with this status. */
export type AdmissionVerdict = undefined | { status: StatusError };

/**
 * Intercepts API requests before they are applied: fault injection, KubeVirt's eviction webhook
 * (which answers 429 "Eviction triggered evacuation of VMI"), request delays. Only HTTP requests pass
 * through hooks; controllers writing to the store directly do not.
 */
export interface AdmissionHook {
  /** For logs and removal. */
  readonly name: string;
  admit(request: AdmissionRequest): AdmissionVerdict | Promise<AdmissionVerdict>;
}

/** The ordered set of hooks; the first verdict wins. */
export interface AdmissionChain {
  /** Adds a hook; returns a function that removes it. */
  add(hook: AdmissionHook): () => void;
  /** Runs the hooks in order; the first non-undefined verdict is returned. */
  run(request: AdmissionRequest): Promise<AdmissionVerdict>;
}

/** The store itself. Every method is synchronous: one call is one atomic step. */
export interface ObjectStore {
  readonly registry: ResourceRegistry;
  readonly clock: Clock;
  readonly admission: AdmissionChain;
  /** The current global resourceVersion as a decimal string. */
  currentResourceVersion(): string;
  /** The object, or undefined. `namespace` is ignored for cluster-scoped resources. */
  get(ref: ResourceRef, namespace: string | undefined, name: string): KubeObject | undefined;
  /** Like `get` but throws a 404 StatusError. */
  mustGet(ref: ResourceRef, namespace: string | undefined, name: string): KubeObject;
  list(ref: ResourceRef, options?: ListOptions): ListResult;
  /**
   * The matching objects themselves, in list order — not copies. For the simulator's own controllers,
   * which read thousands of objects per pass and change them only through writes: copying every listed
   * object was two thirds of the simulator's time at 1,000 nodes. The store replaces an object on every
   * write and never changes a stored one, so what this returns stays as it was read; never modify it.
   */
  scan(ref: ResourceRef, options?: ScanOptions): readonly KubeObject[];
  /** Creates (uid, resourceVersion, creationTimestamp, generation 1; `generateName` honoured). 409 AlreadyExists, 404 for a missing namespace, 403 for a terminating one. */
  create(ref: ResourceRef, object: KubeObject, options?: WriteOptions): KubeObject;
  /** Replaces; a set `metadata.resourceVersion` that is not current → 409 Conflict. 404 when missing. */
  update(ref: ResourceRef, object: KubeObject, options?: UpdateOptions): KubeObject;
  /**
   * Read-modify-write in one step: `change` gets a deep copy and returns the new object (or mutates
   * the copy and returns undefined). Returns the stored result; unchanged objects are not rewritten.
   */
  mutate(
    ref: ResourceRef,
    key: { namespace?: string; name: string },
    change: (copy: KubeObject) => KubeObject | undefined,
    options?: UpdateOptions,
  ): KubeObject;
  delete(ref: ResourceRef, key: { namespace?: string; name: string }, options?: DeleteOptions): DeleteResult;
  /** Subscribes to changes. Throws a 410 StatusError when `resourceVersion` is older than the history kept. */
  watch(ref: ResourceRef, options: WatchOptions, listener: (event: WatchEvent) => void): Watch;
}
