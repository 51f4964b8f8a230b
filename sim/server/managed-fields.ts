/**
 * `metadata.managedFields` for writes that come through the HTTP API, as the apiserver's field manager
 * records them for Update and Apply operations: the manager (the `fieldManager` query parameter, else the
 * User-Agent up to its first `/`, as the apiserver's `prefixFromUserAgent`), the operation, the apiVersion,
 * the subresource, the time (to the second) and the fields it set in FieldsV1 form.
 *
 * Ownership follows the Update rule: a write's manager takes every field the write changed, every other
 * manager loses those fields, and an entry left with no fields goes. Simplifications, documented in
 * sim/README.md: lists are atomic (a list is one field, not `k:`/`v:` items), Apply is computed like an
 * Update (no conflict detection), and controllers writing straight to the store record nothing. Pure.
 */
import type { KubeObject } from '../store/types.ts';

/** One `metadata.managedFields` entry. */
export interface ManagedFieldsEntry {
  manager: string;
  operation: 'Update' | 'Apply';
  apiVersion: string;
  time: string;
  fieldsType: 'FieldsV1';
  fieldsV1: FieldSet;
  subresource?: string;
}

/** FieldsV1: `{ "f:spec": { "f:unschedulable": {} } }`; an empty object marks a leaf. */
export type FieldSet = { [key: string]: FieldSet };

/** Metadata the apiserver sets itself: never owned by a manager. */
const SERVER_METADATA = new Set([
  'name',
  'namespace',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'managedFields',
  'selfLink',
]);

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Leaf paths of an object (maps recursed, lists and scalars are leaves), skipping server-set fields. */
function leafPaths(object: Record<string, unknown>, skipStatus: boolean): string[][] {
  const out: string[][] = [];
  const walk = (value: unknown, path: string[]): void => {
    if (isPlainObject(value) && Object.keys(value).length > 0) {
      for (const [key, child] of Object.entries(value)) walk(child, [...path, key]);
    } else out.push(path);
  };
  for (const [key, value] of Object.entries(object)) {
    if (key === 'apiVersion' || key === 'kind' || (skipStatus && key === 'status')) continue;
    if (key === 'metadata' && isPlainObject(value)) {
      for (const [field, child] of Object.entries(value)) if (!SERVER_METADATA.has(field)) walk(child, [key, field]);
      continue;
    }
    walk(value, [key]);
  }
  return out;
}

function valueAt(object: unknown, path: readonly string[]): unknown {
  let here: unknown = object;
  for (const key of path) {
    if (!isPlainObject(here)) return undefined;
    here = here[key];
  }
  return here;
}

const keyOf = (path: readonly string[]): string => JSON.stringify(path);

/** Fields whose value differs between the two objects (added, changed or removed). */
export function changedPaths(before: KubeObject | undefined, after: KubeObject, skipStatus: boolean): string[][] {
  const paths = new Map<string, string[]>();
  for (const path of leafPaths(after as Record<string, unknown>, skipStatus)) paths.set(keyOf(path), path);
  if (before) for (const path of leafPaths(before as Record<string, unknown>, skipStatus)) paths.set(keyOf(path), path);
  return [...paths.values()].filter(
    (path) => JSON.stringify(valueAt(before, path)) !== JSON.stringify(valueAt(after, path)),
  );
}

function toPaths(set: FieldSet, prefix: string[] = []): string[][] {
  const out: string[][] = [];
  for (const [key, child] of Object.entries(set)) {
    const path = [...prefix, key.slice(2)];
    if (Object.keys(child).length === 0) out.push(path);
    else out.push(...toPaths(child, path));
  }
  return out;
}

function toFieldSet(paths: readonly string[][]): FieldSet {
  const root: FieldSet = {};
  for (const path of paths) {
    let here = root;
    for (const key of path) {
      here[`f:${key}`] ??= {};
      here = here[`f:${key}`] as FieldSet;
    }
  }
  return root;
}

/** The apiserver's default manager: the User-Agent up to its first `/`, printable, at most 128 characters. */
export function managerFromUserAgent(userAgent: string | undefined): string {
  const prefix = (userAgent ?? '').split('/')[0] ?? '';
  return (
    [...prefix]
      .filter((char) => char >= ' ' && char !== '\x7f')
      .join('')
      .slice(0, 128) || 'unknown'
  );
}

/** RFC 3339 to the second, as metav1.Time serialises. */
export function fieldsTime(now: Date): string {
  return `${now.toISOString().slice(0, 19)}Z`;
}

export interface FieldWrite {
  readonly manager: string;
  readonly operation: 'Update' | 'Apply';
  readonly apiVersion: string;
  readonly subresource?: string;
  readonly now: Date;
}

const sameEntry = (entry: ManagedFieldsEntry, write: FieldWrite): boolean =>
  entry.manager === write.manager &&
  entry.operation === write.operation &&
  entry.apiVersion === write.apiVersion &&
  (entry.subresource ?? '') === (write.subresource ?? '');

/**
 * The managedFields `after` should carry when `write` turned `before` into it (`before` undefined for a
 * create). Nothing changed: the entries stay as they were.
 */
export function nextManagedFields(
  before: KubeObject | undefined,
  after: KubeObject,
  write: FieldWrite,
): ManagedFieldsEntry[] {
  const current = (before?.metadata.managedFields as ManagedFieldsEntry[] | undefined) ?? [];
  const changed = changedPaths(before, after, write.subresource !== 'status');
  if (changed.length === 0) return current;
  const changedKeys = new Set(changed.map(keyOf));
  const taken = changed.filter((path) => valueAt(after, path) !== undefined);
  const entries: ManagedFieldsEntry[] = [];
  let own: string[][] = [];
  for (const entry of current) {
    const kept = toPaths(entry.fieldsV1).filter((path) => !changedKeys.has(keyOf(path)));
    if (sameEntry(entry, write)) own = kept;
    else if (kept.length > 0) entries.push({ ...entry, fieldsV1: toFieldSet(kept) });
  }
  const mine = [...own, ...taken];
  if (mine.length > 0) {
    entries.push({
      manager: write.manager,
      operation: write.operation,
      apiVersion: write.apiVersion,
      time: fieldsTime(write.now),
      fieldsType: 'FieldsV1',
      fieldsV1: toFieldSet(mine),
      ...(write.subresource ? { subresource: write.subresource } : {}),
    });
  }
  return entries;
}
