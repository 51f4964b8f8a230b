/**
 * One resource's stored objects with the indexes the apiserver's watch cache keeps, so that a read is
 * proportional to what it returns rather than to the cluster:
 *
 * - keys in list order (sorted), kept sorted on insert and removal instead of sorting every list;
 * - pods by `spec.nodeName` (the apiserver's field index for pods: `fieldSelector=spec.nodeName=X`);
 * - objects by owner uid (`metadata.ownerReferences[].uid`; the garbage collector's and the
 *   controllers' "what do I own").
 *
 * Every write goes through `set`/`delete`, which keep the indexes in step with the map.
 */
import type { KubeObject } from './types.ts';

/** The field the node index answers. */
export const NODE_NAME_FIELD = 'spec.nodeName';

function nodeNameOf(object: KubeObject): string {
  const spec = object.spec as { nodeName?: unknown } | undefined;
  return typeof spec?.nodeName === 'string' ? spec.nodeName : '';
}

function ownerUidsOf(object: KubeObject): string[] {
  return (object.metadata.ownerReferences ?? []).map((ref) => ref.uid).filter((uid): uid is string => Boolean(uid));
}

/** The first index whose key is not below `key` (binary search). */
function lowerBound(sorted: readonly string[], key: string): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((sorted[middle] ?? '') < key) low = middle + 1;
    else high = middle;
  }
  return low;
}

function addTo(index: Map<string, Set<string>>, value: string, key: string): void {
  let keys = index.get(value);
  if (!keys) {
    keys = new Set();
    index.set(value, keys);
  }
  keys.add(key);
}

function removeFrom(index: Map<string, Set<string>>, value: string, key: string): void {
  const keys = index.get(value);
  if (!keys) return;
  keys.delete(key);
  if (keys.size === 0) index.delete(value);
}

/** A map of stored objects by key, with sorted keys and the node and owner indexes. */
export class Bucket {
  readonly #objects = new Map<string, KubeObject>();
  readonly #sorted: string[] = [];
  readonly #byNode = new Map<string, Set<string>>();
  readonly #byOwner = new Map<string, Set<string>>();

  get size(): number {
    return this.#objects.size;
  }

  get(key: string): KubeObject | undefined {
    return this.#objects.get(key);
  }

  has(key: string): boolean {
    return this.#objects.has(key);
  }

  values(): IterableIterator<KubeObject> {
    return this.#objects.values();
  }

  /** Every key, in list order. */
  sortedKeys(): readonly string[] {
    return this.#sorted;
  }

  set(key: string, object: KubeObject): void {
    const previous = this.#objects.get(key);
    if (previous) this.#unindex(key, previous);
    else this.#sorted.splice(lowerBound(this.#sorted, key), 0, key);
    this.#objects.set(key, object);
    this.#index(key, object);
  }

  delete(key: string): void {
    const previous = this.#objects.get(key);
    if (!previous) return;
    this.#unindex(key, previous);
    this.#objects.delete(key);
    const at = lowerBound(this.#sorted, key);
    if (this.#sorted[at] === key) this.#sorted.splice(at, 1);
  }

  /** Keys of objects whose `spec.nodeName` is `nodeName` (not empty: unbound objects are not indexed), unordered. */
  keysOnNode(nodeName: string): ReadonlySet<string> {
    return this.#byNode.get(nodeName) ?? new Set();
  }

  /** Keys of objects with an owner reference to `uid`, unordered. */
  keysOwnedBy(uid: string): ReadonlySet<string> {
    return this.#byOwner.get(uid) ?? new Set();
  }

  /**
   * `keys` in list order: sorting a few is cheaper than walking every key; for a large share of the
   * bucket, walking the sorted keys and keeping the members is.
   */
  inOrder(keys: ReadonlySet<string>): string[] {
    if (keys.size * Math.log2(keys.size + 2) < this.#sorted.length) return [...keys].sort();
    return this.#sorted.filter((key) => keys.has(key));
  }

  #index(key: string, object: KubeObject): void {
    const nodeName = nodeNameOf(object);
    if (nodeName) addTo(this.#byNode, nodeName, key);
    for (const uid of ownerUidsOf(object)) addTo(this.#byOwner, uid, key);
  }

  #unindex(key: string, object: KubeObject): void {
    const nodeName = nodeNameOf(object);
    if (nodeName) removeFrom(this.#byNode, nodeName, key);
    for (const uid of ownerUidsOf(object)) removeFrom(this.#byOwner, uid, key);
  }
}
