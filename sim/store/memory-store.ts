/**
 * The in-memory ObjectStore (see types.ts for the contract). Synchronous: each public call is one
 * atomic step, so the simulator needs no locks. Objects go in and come out as deep copies.
 */
import { randomUUID } from 'node:crypto';
import { createAdmissionChain } from './admission.ts';
import { Bucket, NODE_NAME_FIELD } from './bucket.ts';
import { builtinTypes } from './builtin-types.ts';
import { createClock } from './clock.ts';
import { establishedStatus, resourceTypeOf } from './crd.ts';
import {
  annotationsProblem,
  applyDefaults,
  assertAnnotationsFit,
  dropOmittedEmpty,
  generateName,
  nameProblem,
  planDeletion,
  readyToRemove,
  sameContent,
  specChanged,
} from './object-rules.ts';
import { createRegistry } from './registry.ts';
import { admitCustomResource } from './schema/index.ts';
import {
  alreadyExists,
  badRequest,
  conflict,
  forbidden,
  invalid,
  notFound,
  OPTIMISTIC_LOCK_MESSAGE,
  StatusError,
} from './status.ts';
import type {
  AdmissionChain,
  Clock,
  DeleteOptions,
  DeleteResult,
  FieldRequirement,
  KubeObject,
  ListOptions,
  ListResult,
  ObjectStore,
  ResourceRef,
  ResourceRegistry,
  ResourceType,
  ScanOptions,
  UpdateOptions,
  Watch,
  WatchEvent,
  WatchOptions,
  WriteOptions,
} from './types.ts';
import { compileFilter, passes, WatchHub } from './watch-hub.ts';

export interface StoreOptions {
  /** Clock speed when no clock is given (1 = real time). */
  speed?: number;
  clock?: Clock;
  /** Changes kept for resuming watches; older resourceVersions get 410 Gone. Default 10 000. */
  historySize?: number;
}

/** The store plus its shutdown. */
export interface ClosableStore extends ObjectStore {
  /** Stops every watch and every clock timer. */
  close(): void;
  /** Watches currently subscribed (tests: a watch whose client left is released). */
  watchers(): number;
}

const NAMESPACES: ResourceRef = { group: '', resource: 'namespaces' };
const CRDS: ResourceRef = { group: 'apiextensions.k8s.io', resource: 'customresourcedefinitions' };
/** Namespaces the apiserver always has. */
const SYSTEM_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];
/** Namespaces the NamespaceLifecycle admission refuses to delete. */
const IMMORTAL_NAMESPACES: ReadonlySet<string> = new Set(['default', 'kube-system', 'kube-public']);

const bucketKeyOf = (ref: ResourceRef): string => `${ref.group}/${ref.resource}`;
const isRef = (a: ResourceRef, b: ResourceRef): boolean => a.group === b.group && a.resource === b.resource;

/** `apps/v1`, or `v1` for the core group. */
export function apiVersionOf(type: ResourceType): string {
  const version = type.versions[0] ?? 'v1';
  return type.group ? `${type.group}/${version}` : version;
}

function encodeContinue(rv: number, lastKey: string): string {
  return Buffer.from(JSON.stringify({ rv, start: lastKey })).toString('base64url');
}

function decodeContinue(token: string): { rv: number; start: string } {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
    const { rv, start } = parsed as { rv?: unknown; start?: unknown };
    if (typeof rv === 'number' && typeof start === 'string') return { rv, start };
  } catch {
    // fall through to the apiserver's answer for a bad token
  }
  throw badRequest('continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)');
}

class MemoryStore implements ClosableStore {
  readonly registry: ResourceRegistry;
  readonly clock: Clock;
  readonly admission: AdmissionChain;
  readonly #hub: WatchHub;
  readonly #buckets = new Map<string, Bucket>();
  #rv = 0;

  constructor(options: StoreOptions) {
    this.clock = options.clock ?? createClock(options.speed ?? 1);
    this.registry = createRegistry(builtinTypes());
    this.admission = createAdmissionChain();
    this.#hub = new WatchHub({ clock: this.clock, historySize: options.historySize ?? 10_000 });
    for (const name of SYSTEM_NAMESPACES) {
      this.create(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    }
  }

  currentResourceVersion(): string {
    return String(this.#rv);
  }

  close(): void {
    this.#hub.closeAll();
    this.clock.stop();
  }

  watchers(): number {
    return this.#hub.size;
  }

  #typeOf(ref: ResourceRef): ResourceType {
    const type = this.registry.get(ref);
    if (!type) throw new StatusError(404, 'NotFound', 'the server could not find the requested resource');
    return type;
  }

  #bucket(ref: ResourceRef): Bucket {
    const key = bucketKeyOf(ref);
    let bucket = this.#buckets.get(key);
    if (!bucket) {
      bucket = new Bucket();
      this.#buckets.set(key, bucket);
    }
    return bucket;
  }

  #keyOf(type: ResourceType, namespace: string | undefined, name: string): string {
    return type.namespaced ? `${namespace ?? ''}/${name}` : name;
  }

  get(ref: ResourceRef, namespace: string | undefined, name: string): KubeObject | undefined {
    const type = this.#typeOf(ref);
    const found = this.#bucket(ref).get(this.#keyOf(type, namespace, name));
    return found ? structuredClone(found) : undefined;
  }

  mustGet(ref: ResourceRef, namespace: string | undefined, name: string): KubeObject {
    const found = this.get(ref, namespace, name);
    if (!found) throw notFound(ref, name);
    return found;
  }

  list(ref: ResourceRef, options: ListOptions = {}): ListResult {
    const from = options.continue ? decodeContinue(options.continue) : undefined;
    const matching = this.#matching(ref, options, from?.start);
    const limit = options.limit && options.limit > 0 ? options.limit : matching.length;
    const page = matching.slice(0, limit);
    const rv = from?.rv ?? this.#rv;
    const result: ListResult = { items: page.map(([, o]) => structuredClone(o)), resourceVersion: String(rv) };
    const last = page.at(-1);
    if (matching.length > limit && last) {
      result.continue = encodeContinue(rv, last[0]);
      result.remainingItemCount = matching.length - limit;
    }
    return result;
  }

  scan(ref: ResourceRef, options: ScanOptions = {}): readonly KubeObject[] {
    return this.#matching(ref, options, undefined).map(([, object]) => object);
  }

  /**
   * The stored objects `options` select, by key; after `start` when given (a continued list). An
   * owner or a `spec.nodeName=X` term reads its index, so the work is that owner's or node's objects.
   */
  #matching(ref: ResourceRef, options: ScanOptions, start: string | undefined): [string, KubeObject][] {
    const type = this.#typeOf(ref);
    const filter = compileFilter({ ...options, namespace: type.namespaced ? options.namespace : undefined });
    const bucket = this.#bucket(ref);
    const matching: [string, KubeObject][] = [];
    for (const key of this.#candidates(bucket, filter.fields, options.ownerUid)) {
      const object = bucket.get(key);
      if (object && (start === undefined || key > start) && passes(filter, object)) matching.push([key, object]);
    }
    return matching;
  }

  /** The keys that can match, in list order: an index's when the selection names one, else every key. */
  #candidates(bucket: Bucket, fields: readonly FieldRequirement[], ownerUid: string | undefined): readonly string[] {
    if (ownerUid !== undefined) return bucket.inOrder(bucket.keysOwnedBy(ownerUid));
    const onNode = fields.find((term) => term.field === NODE_NAME_FIELD && term.op === '=' && term.value !== '');
    if (onNode) return bucket.inOrder(bucket.keysOnNode(onNode.value));
    return bucket.sortedKeys();
  }

  #checkNamespaceOpen(type: ResourceType, object: KubeObject): void {
    const { namespace, name } = object.metadata;
    if (!namespace) {
      throw invalid(type, name ?? '', [
        { reason: 'FieldValueRequired', message: 'Required value', field: 'metadata.namespace' },
      ]);
    }
    const ns = this.#bucket(NAMESPACES).get(namespace);
    if (!ns) throw notFound(NAMESPACES, namespace);
    if ((ns.status as { phase?: string } | undefined)?.phase === 'Terminating') {
      throw forbidden(
        type,
        name ?? '',
        `unable to create new content in namespace ${namespace} because it is being terminated`,
        [
          {
            reason: 'NamespaceTerminating',
            message: `namespace ${namespace} is being terminated`,
            field: 'metadata.namespace',
          },
        ],
      );
    }
  }

  create(ref: ResourceRef, input: KubeObject, options: WriteOptions = {}): KubeObject {
    const type = this.#typeOf(ref);
    const object = structuredClone(input);
    const meta = object.metadata ?? {};
    object.metadata = meta;
    if (!meta.name && meta.generateName) meta.name = generateName(meta.generateName);
    const problem = nameProblem(type, meta.name) ?? annotationsProblem(type, object);
    if (problem) throw problem;
    if (type.namespaced) this.#checkNamespaceOpen(type, object);
    else delete meta.namespace;
    const name = meta.name ?? '';
    const key = this.#keyOf(type, meta.namespace, name);
    if (this.#bucket(ref).has(key)) throw alreadyExists(ref, name);
    object.apiVersion = apiVersionOf(type);
    object.kind = type.kind;
    meta.uid = randomUUID();
    meta.creationTimestamp = this.clock.nowIso();
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    if (type.hasGeneration) meta.generation = 1;
    else delete meta.generation;
    applyDefaults(type, object);
    admitCustomResource(type, object);
    const definedType = isRef(ref, CRDS) ? resourceTypeOf(object) : undefined;
    if (definedType) object.status = establishedStatus(object, this.clock.nowIso());
    if (options.dryRun) return structuredClone(object);
    this.#commit(ref, key, object);
    if (definedType) this.registry.register(definedType);
    return structuredClone(object);
  }

  update(ref: ResourceRef, input: KubeObject, options: UpdateOptions = {}): KubeObject {
    const type = this.#typeOf(ref);
    const name = input.metadata?.name ?? '';
    const existing = this.#bucket(ref).get(this.#keyOf(type, input.metadata?.namespace, name));
    if (!existing) throw notFound(ref, name);
    const wanted = input.metadata.resourceVersion;
    if (wanted && wanted !== existing.metadata.resourceVersion) throw conflict(ref, name, OPTIMISTIC_LOCK_MESSAGE);
    const next = structuredClone(input);
    if (options.subresource !== 'status' && type.subresources.includes('status')) {
      if (existing.status === undefined) delete next.status;
      else next.status = structuredClone(existing.status);
    }
    return this.#write(ref, existing, next, options);
  }

  mutate(
    ref: ResourceRef,
    key: { namespace?: string; name: string },
    change: (copy: KubeObject) => KubeObject | undefined,
    options: UpdateOptions = {},
  ): KubeObject {
    const existing = this.mustGet(ref, key.namespace, key.name);
    const copy = structuredClone(existing);
    const changed = change(copy) ?? copy;
    return this.#write(ref, this.#stored(ref, existing), changed, options);
  }

  #stored(ref: ResourceRef, copy: KubeObject): KubeObject {
    const type = this.#typeOf(ref);
    const found = this.#bucket(ref).get(this.#keyOf(type, copy.metadata.namespace, copy.metadata.name ?? ''));
    if (!found) throw notFound(ref, copy.metadata.name ?? '');
    return found;
  }

  /** Restores what a client may not change, bumps generation, and commits unless nothing changed. */
  #write(ref: ResourceRef, existing: KubeObject, input: KubeObject, options: UpdateOptions): KubeObject {
    const type = this.#typeOf(ref);
    let next = structuredClone(input);
    if (options.subresource === 'status') {
      next = { ...structuredClone(existing), status: structuredClone(input.status) };
    }
    dropOmittedEmpty(type, next);
    admitCustomResource(type, next, existing);
    const old = existing.metadata;
    next.apiVersion = existing.apiVersion;
    next.kind = existing.kind;
    next.metadata = { ...next.metadata, name: old.name, uid: old.uid, creationTimestamp: old.creationTimestamp };
    this.#copyDeletionState(existing, next);
    if (type.namespaced) next.metadata.namespace = old.namespace;
    else delete next.metadata.namespace;
    next.metadata.resourceVersion = old.resourceVersion;
    if (type.hasGeneration) {
      next.metadata.generation = (old.generation ?? 1) + (specChanged(existing, next) ? 1 : 0);
    }
    const definedType = isRef(ref, CRDS) ? this.#prepareCrd(existing, next) : undefined;
    assertAnnotationsFit(type, next);
    if (sameContent(existing, next) || options.dryRun) return structuredClone(next);
    const key = this.#keyOf(type, old.namespace, old.name ?? '');
    if (readyToRemove(next)) {
      this.#remove(ref, key, next, undefined);
    } else {
      this.#commit(ref, key, next, existing);
      if (definedType) this.registry.register(definedType);
    }
    return structuredClone(next);
  }

  #copyDeletionState(existing: KubeObject, next: KubeObject): void {
    const old = existing.metadata;
    delete next.metadata.deletionTimestamp;
    delete next.metadata.deletionGracePeriodSeconds;
    if (old.deletionTimestamp) next.metadata.deletionTimestamp = old.deletionTimestamp;
    if (old.deletionGracePeriodSeconds !== undefined) {
      next.metadata.deletionGracePeriodSeconds = old.deletionGracePeriodSeconds;
    }
  }

  /** Validates an updated CRD (422 on bad names) and keeps its accepted status; returns the type it defines. */
  #prepareCrd(existing: KubeObject, next: KubeObject): ResourceType {
    const type = resourceTypeOf(next);
    next.status = existing.status ?? establishedStatus(next, this.clock.nowIso());
    return type;
  }

  delete(ref: ResourceRef, key: { namespace?: string; name: string }, options: DeleteOptions = {}): DeleteResult {
    const type = this.#typeOf(ref);
    const storeKey = this.#keyOf(type, key.namespace, key.name);
    const existing = this.#bucket(ref).get(storeKey);
    if (!existing) throw notFound(ref, key.name);
    this.#checkPreconditions(type, existing, options);
    if (isRef(ref, NAMESPACES)) return this.#deleteNamespace(storeKey, existing, options);
    const plan = planDeletion(type, existing, options, this.clock.now());
    if (plan.action === 'keep') return { object: structuredClone(existing), removed: false };
    if (plan.action === 'mark') {
      const next = structuredClone(existing);
      next.metadata.deletionTimestamp = plan.deletionTimestamp;
      next.metadata.deletionGracePeriodSeconds = plan.gracePeriodSeconds;
      if (!options.dryRun) this.#commit(ref, storeKey, next, existing);
      return { object: structuredClone(next), removed: false };
    }
    if (options.dryRun) return { object: structuredClone(existing), removed: true };
    const removed = this.#remove(ref, storeKey, existing, options.propagationPolicy);
    return { object: structuredClone(removed), removed: true };
  }

  /**
   * The precondition check of the apiserver's BeforeDelete, which runs before the storage's own: its
   * conflict names the object by kind (`Operation cannot be fulfilled on Pod "x": …`).
   */
  #checkPreconditions(type: ResourceType, existing: KubeObject, options: DeleteOptions): void {
    const wanted = options.preconditions ?? {};
    const meta = existing.metadata;
    const byKind = { group: type.group, resource: type.kind };
    if (wanted.uid && wanted.uid !== meta.uid) {
      throw conflict(
        byKind,
        meta.name ?? '',
        `the UID in the precondition (${wanted.uid}) does not match the UID in record (${meta.uid}). The object might have been deleted and then recreated`,
      );
    }
    if (wanted.resourceVersion && wanted.resourceVersion !== meta.resourceVersion) {
      throw conflict(
        byKind,
        meta.name ?? '',
        `the ResourceVersion in the precondition (${wanted.resourceVersion}) does not match the ResourceVersion in record (${meta.resourceVersion}). The object might have been modified`,
      );
    }
  }

  /** Namespaces: Terminating, then their content goes, then they go (the namespace controller's job). */
  #deleteNamespace(storeKey: string, existing: KubeObject, options: DeleteOptions): DeleteResult {
    if (IMMORTAL_NAMESPACES.has(storeKey)) throw forbidden(NAMESPACES, storeKey, 'this namespace may not be deleted');
    if (existing.metadata.deletionTimestamp) return { object: structuredClone(existing), removed: false };
    const next = structuredClone(existing);
    next.metadata.deletionTimestamp = this.clock.nowIso();
    next.metadata.deletionGracePeriodSeconds = 0;
    next.status = { ...(next.status as object), phase: 'Terminating' };
    if (options.dryRun) return { object: next, removed: false };
    this.#commit(NAMESPACES, storeKey, next, existing);
    const namespace = existing.metadata.name ?? '';
    for (const [bucketKey, bucket] of this.#buckets) {
      const ref = this.#refOfBucket(bucketKey);
      if (!ref || !this.registry.get(ref)?.namespaced) continue;
      for (const object of [...bucket.values()]) {
        if (object.metadata.namespace === namespace) this.#deleteQuietly(ref, object);
      }
    }
    this.#finishNamespaceIfEmpty(namespace);
    const after = this.#bucket(NAMESPACES).get(namespace);
    return { object: structuredClone(after ?? next), removed: after === undefined };
  }

  #refOfBucket(bucketKey: string): ResourceRef | undefined {
    const slash = bucketKey.indexOf('/');
    const ref = { group: bucketKey.slice(0, slash), resource: bucketKey.slice(slash + 1) };
    return this.registry.get(ref) ? ref : undefined;
  }

  #deleteQuietly(ref: ResourceRef, object: KubeObject, options: DeleteOptions = {}): void {
    try {
      const key: { namespace?: string; name: string } = { name: object.metadata.name ?? '' };
      if (object.metadata.namespace) key.namespace = object.metadata.namespace;
      this.delete(ref, key, options);
    } catch (error) {
      // Already gone (a cascade got there first) is fine; anything else is a bug worth seeing.
      if (!(error instanceof StatusError && error.code === 404)) throw error;
    }
  }

  #finishNamespaceIfEmpty(namespace: string): void {
    const ns = this.#bucket(NAMESPACES).get(namespace);
    if (!ns?.metadata.deletionTimestamp) return;
    for (const [bucketKey, bucket] of this.#buckets) {
      if (bucketKey === bucketKeyOf(NAMESPACES)) continue;
      for (const object of bucket.values()) if (object.metadata.namespace === namespace) return;
    }
    this.#remove(NAMESPACES, namespace, ns, undefined);
  }

  /** Stores `object` under the next resourceVersion: ADDED, or MODIFIED when `previous` (the stored version) is given. */
  #commit(ref: ResourceRef, key: string, object: KubeObject, previous?: KubeObject): void {
    this.#rv += 1;
    object.metadata.resourceVersion = String(this.#rv);
    this.#bucket(ref).set(key, object);
    const storeKey = bucketKeyOf(ref);
    this.#hub.record(
      previous
        ? { rv: this.#rv, storeKey, type: 'MODIFIED', object, previous }
        : { rv: this.#rv, storeKey, type: 'ADDED', object },
    );
  }

  /** Removes for good, then collects dependents, finishes a terminating namespace, drops a CRD's resource. */
  #remove(ref: ResourceRef, key: string, object: KubeObject, policy: DeleteOptions['propagationPolicy']): KubeObject {
    const previous = this.#bucket(ref).get(key);
    this.#bucket(ref).delete(key);
    this.#rv += 1;
    const gone = structuredClone(object);
    gone.metadata.resourceVersion = String(this.#rv);
    this.#hub.record({
      rv: this.#rv,
      storeKey: bucketKeyOf(ref),
      type: 'DELETED',
      object: gone,
      previous: previous ?? object,
    });
    if (isRef(ref, CRDS)) this.#dropCrdResource(object);
    if (object.metadata.uid) this.#collectDependents(object.metadata.uid, policy);
    if (object.metadata.namespace) this.#finishNamespaceIfEmpty(object.metadata.namespace);
    return gone;
  }

  #dropCrdResource(crd: KubeObject): void {
    const spec = (crd.spec ?? {}) as { group?: string; names?: { plural?: string } };
    const ref = { group: spec.group ?? '', resource: spec.names?.plural ?? '' };
    this.registry.unregister(ref);
    this.#buckets.delete(bucketKeyOf(ref));
  }

  /** The garbage collector: dependents are deleted, or orphaned (owner reference removed) for `Orphan`. */
  #collectDependents(ownerUid: string, policy: DeleteOptions['propagationPolicy']): void {
    for (const [bucketKey, bucket] of [...this.#buckets]) {
      const ref = this.#refOfBucket(bucketKey);
      if (!ref) continue;
      const dependents = bucket.inOrder(bucket.keysOwnedBy(ownerUid)).flatMap((key) => bucket.get(key) ?? []);
      for (const dependent of dependents) {
        if (policy === 'Orphan') this.#orphan(ref, dependent, ownerUid);
        else this.#deleteQuietly(ref, dependent);
      }
    }
  }

  #orphan(ref: ResourceRef, dependent: KubeObject, ownerUid: string): void {
    const key: { namespace?: string; name: string } = { name: dependent.metadata.name ?? '' };
    if (dependent.metadata.namespace) key.namespace = dependent.metadata.namespace;
    this.mutate(ref, key, (copy) => {
      copy.metadata.ownerReferences = copy.metadata.ownerReferences?.filter((r) => r.uid !== ownerUid);
      return copy;
    });
  }

  watch(ref: ResourceRef, options: WatchOptions, listener: (event: WatchEvent) => void): Watch {
    const type = this.#typeOf(ref);
    const scoped = { ...options };
    if (!type.namespaced) delete scoped.namespace;
    return this.#hub.subscribe(
      bucketKeyOf(ref),
      scoped,
      {
        initial: () => this.list(ref, { namespace: scoped.namespace }).items,
        bookmark: () => ({
          apiVersion: apiVersionOf(type),
          kind: type.kind,
          metadata: { resourceVersion: String(this.#rv) },
        }),
      },
      listener,
    );
  }
}

/** Creates a store holding the built-in resource types and the system namespaces. */
export function createStore(options: StoreOptions = {}): ClosableStore {
  return new MemoryStore(options);
}
