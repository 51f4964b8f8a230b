/**
 * Small helpers over object metadata shared by the loops: keys, owner references, pod states,
 * upstream-style name suffixes and template hashes.
 */
import type { KubeObject, OwnerReference } from '../store/types.ts';
import type { Pod } from './types.ts';

/** `namespace/name`, or `name` for cluster-scoped objects. The work queues' key format. */
export function keyOf(object: KubeObject): string {
  const { namespace, name } = object.metadata;
  return namespace ? `${namespace}/${name}` : (name ?? '');
}

/** Splits a queue key back into namespace and name. */
export function splitKey(key: string): { namespace?: string; name: string } {
  const slash = key.indexOf('/');
  return slash < 0 ? { name: key } : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

/** An owner reference to `owner` that marks it as the controller, as workload controllers set it. */
export function controllerRefTo(owner: KubeObject): OwnerReference {
  return {
    apiVersion: owner.apiVersion,
    kind: owner.kind,
    name: owner.metadata.name ?? '',
    uid: owner.metadata.uid ?? '',
    controller: true,
    blockOwnerDeletion: true,
  };
}

/** The owner reference with `controller: true`, if any. */
export function controllerRefOf(object: KubeObject): OwnerReference | undefined {
  return object.metadata.ownerReferences?.find((ref) => ref.controller === true);
}

/** Whether `object` is controlled by `owner` (matched by uid, as upstream). */
export function isControlledBy(object: KubeObject, owner: KubeObject): boolean {
  return controllerRefOf(object)?.uid === owner.metadata.uid;
}

export function isDeleting(object: KubeObject): boolean {
  return object.metadata.deletionTimestamp !== undefined;
}

export function isTerminal(pod: Pod): boolean {
  return pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
}

/** Not terminal and not being deleted: a pod a workload counts as one of its replicas. */
export function isActive(pod: Pod): boolean {
  return !isTerminal(pod) && !isDeleting(pod);
}

export function isPodReady(pod: Pod): boolean {
  return (pod.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
}

// The alphabet of apimachinery's rand.String / SafeEncodeString: no vowels, no confusable digits.
const ALPHANUMS = 'bcdfghjklmnpqrstvwxz2456789';

/** A random suffix like the apiserver's `generateName` (5 characters). */
export function randomSuffix(length = 5): string {
  let out = '';
  for (let i = 0; i < length; i++) out += ALPHANUMS[Math.floor(Math.random() * ALPHANUMS.length)];
  return out;
}

/** 32-bit FNV-1a of a string's UTF-8 bytes. */
export function fnv32a(text: string): number {
  let hash = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(text)) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}

/** Maps each character of a decimal string onto the safe alphabet (`rand.SafeEncodeString`). */
export function safeEncode(text: string): string {
  return [...text].map((c) => ALPHANUMS[c.charCodeAt(0) % ALPHANUMS.length]).join('');
}

/** Deterministic JSON (sorted keys), so equal templates hash equally. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** A template hash in the shape upstream writes to `pod-template-hash` / `controller-revision-hash`. */
export function templateHash(template: unknown): string {
  return safeEncode(String(fnv32a(canonicalJson(template))));
}

/** Deep equality through canonical JSON; enough for status comparisons. */
export function sameJson(a: unknown, b: unknown): boolean {
  return canonicalJson(a) === canonicalJson(b);
}
