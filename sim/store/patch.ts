/**
 * The three patch formats the apiserver accepts: JSON merge patch (RFC 7386), JSON patch (RFC 6902)
 * and strategic merge patch (merge-keyed lists for the fields kubectl and controllers patch). Pure:
 * each returns a new document.
 */
import { badRequest } from './status.ts';

type Json = unknown;

const isObject = (value: Json): value is Record<string, Json> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** RFC 7386: objects merge recursively, `null` deletes, everything else replaces. */
export function mergePatch(target: Json, patch: Json): Json {
  if (!isObject(patch)) return structuredClone(patch);
  const out: Record<string, Json> = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = mergePatch(out[key], value);
  }
  return out;
}

/**
 * Lists that strategic merge patch merges by a key instead of replacing (the `patchMergeKey` tags of
 * k8s.io/api for the fields in use). Keyed by the field name.
 */
const MERGE_KEYS: Readonly<Record<string, string>> = {
  containers: 'name',
  initContainers: 'name',
  ephemeralContainers: 'name',
  volumes: 'name',
  volumeMounts: 'mountPath',
  env: 'name',
  ports: 'containerPort',
  conditions: 'type',
  taints: 'key',
  ownerReferences: 'uid',
  containerStatuses: 'name',
  initContainerStatuses: 'name',
  imagePullSecrets: 'name',
  addresses: 'type',
};

/** Lists of scalars merged as sets (`patchStrategy:"merge"` on a primitive list). */
const SET_LISTS: ReadonlySet<string> = new Set(['finalizers']);

function mergeKeyedList(target: Json[], patch: Json[], mergeKey: string): Json[] {
  const out = target.map((item) => structuredClone(item));
  for (const item of patch) {
    if (!isObject(item)) continue;
    const index = out.findIndex((existing) => isObject(existing) && existing[mergeKey] === item[mergeKey]);
    if (item.$patch === 'delete') {
      if (index >= 0) out.splice(index, 1);
    } else if (index >= 0) out[index] = strategicMergePatch(out[index], item);
    else out.push(strategicMergePatch({}, item));
  }
  return out;
}

function mergeList(key: string, target: Json, patch: Json[]): Json[] {
  const mergeKey = MERGE_KEYS[key];
  if (mergeKey && Array.isArray(target)) return mergeKeyedList(target, patch, mergeKey);
  if (SET_LISTS.has(key) && Array.isArray(target)) return [...new Set([...target, ...patch])];
  if (mergeKey) return mergeKeyedList([], patch, mergeKey);
  return structuredClone(patch);
}

/** Applies `$deleteFromPrimitiveList/<field>` directives. */
function deleteFromPrimitiveLists(out: Record<string, Json>, patch: Record<string, Json>): void {
  for (const [key, value] of Object.entries(patch)) {
    const field = key.startsWith('$deleteFromPrimitiveList/') ? key.slice('$deleteFromPrimitiveList/'.length) : '';
    const current = out[field];
    if (field && Array.isArray(value) && Array.isArray(current)) {
      out[field] = current.filter((item) => !value.includes(item));
    }
  }
}

/**
 * Strategic merge patch for the fields the simulator's clients patch: keyed lists merge by their
 * key (see MERGE_KEYS), `$patch: delete|replace` and `$deleteFromPrimitiveList` are honoured, other
 * `$` directives (`$setElementOrder`, `$retainKeys`) are accepted and ignored.
 */
export function strategicMergePatch(target: Json, patch: Json): Json {
  if (!isObject(patch)) return structuredClone(patch);
  if (patch.$patch === 'replace') {
    const { $patch: _ignored, ...rest } = patch;
    return structuredClone(rest);
  }
  if (patch.$patch === 'delete') return undefined;
  const out: Record<string, Json> = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (!key.startsWith('$')) mergeField(out, key, value);
  }
  deleteFromPrimitiveLists(out, patch);
  return out;
}

/** Merges one field of a strategic merge patch into `out`; `null` (or a nested `$patch: delete`) removes it. */
function mergeField(out: Record<string, Json>, key: string, value: Json): void {
  let merged: Json;
  if (value === null) merged = undefined;
  else if (Array.isArray(value)) merged = mergeList(key, out[key], value);
  else if (isObject(value)) merged = strategicMergePatch(out[key], value);
  else merged = value;
  if (merged === undefined) delete out[key];
  else out[key] = merged;
}

/** One RFC 6902 operation. */
interface Operation {
  op: 'add' | 'remove' | 'replace' | 'move' | 'copy' | 'test';
  path: string;
  value?: Json;
  from?: string;
}

function parsePointer(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw new JsonPatchApplyFailed(`json patch: invalid path "${pointer}"`);
  return pointer
    .slice(1)
    .split('/')
    .map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'));
}

function parentOf(document: Json, parts: string[], pointer: string): { parent: Json; last: string } {
  let current = document;
  for (const part of parts.slice(0, -1)) {
    const next = Array.isArray(current) ? current[Number(part)] : isObject(current) ? current[part] : undefined;
    if (next === undefined) throw new JsonPatchApplyFailed(`json patch: path "${pointer}" does not exist`);
    current = next;
  }
  return { parent: current, last: parts.at(-1) ?? '' };
}

function readAt(document: Json, pointer: string): Json {
  const parts = parsePointer(pointer);
  if (parts.length === 0) return document;
  const { parent, last } = parentOf(document, parts, pointer);
  const value = Array.isArray(parent) ? parent[Number(last)] : isObject(parent) ? parent[last] : undefined;
  if (value === undefined) throw new JsonPatchApplyFailed(`json patch: path "${pointer}" does not exist`);
  return value;
}

function removeAt(document: Json, pointer: string): void {
  const { parent, last } = parentOf(document, parsePointer(pointer), pointer);
  readAt(document, pointer);
  if (Array.isArray(parent)) parent.splice(Number(last), 1);
  else if (isObject(parent)) delete parent[last];
}

function addAt(document: Json, pointer: string, value: Json, replace: boolean): void {
  const { parent, last } = parentOf(document, parsePointer(pointer), pointer);
  if (replace) readAt(document, pointer);
  if (Array.isArray(parent)) {
    const index = last === '-' ? parent.length : Number(last);
    if (!Number.isInteger(index) || index < 0 || index > parent.length) {
      throw new JsonPatchApplyFailed(`json patch: index out of range at "${pointer}"`);
    }
    parent.splice(index, replace ? 1 : 0, structuredClone(value));
  } else if (isObject(parent)) parent[last] = structuredClone(value);
  else throw new JsonPatchApplyFailed(`json patch: path "${pointer}" does not exist`);
}

function applyOperation(document: Json, operation: Operation): void {
  const from = operation.from ?? '';
  switch (operation.op) {
    case 'add':
      addAt(document, operation.path, operation.value, false);
      break;
    case 'replace':
      addAt(document, operation.path, operation.value, true);
      break;
    case 'remove':
      removeAt(document, operation.path);
      break;
    case 'copy':
      addAt(document, operation.path, readAt(document, from), false);
      break;
    case 'move': {
      const value = readAt(document, from);
      removeAt(document, from);
      addAt(document, operation.path, value, false);
      break;
    }
    case 'test':
      if (JSON.stringify(readAt(document, operation.path)) !== JSON.stringify(operation.value)) {
        throw new JsonPatchTestFailed(operation.path);
      }
      break;
    default:
      throw new JsonPatchApplyFailed(`json patch: unknown op "${String((operation as { op: unknown }).op)}"`);
  }
}

/**
 * A well-formed JSON patch that cannot be applied to the object (a path that does not exist, an index
 * out of range, an unknown op, a failed `test`): the apiserver answers 422 Invalid, unlike a body that
 * is not a patch at all (400).
 */
export class JsonPatchApplyFailed extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'JsonPatchApplyFailed';
  }
}

/** A failed `test` operation. */
export class JsonPatchTestFailed extends JsonPatchApplyFailed {
  constructor(path: string) {
    super(`testing value ${path} failed`);
    this.name = 'JsonPatchTestFailed';
  }
}

/** RFC 6902 on a copy of `target`; 400 BadRequest for a malformed patch, JsonPatchApplyFailed when it does not apply. */
export function jsonPatch(target: Json, patch: Json): Json {
  if (!Array.isArray(patch)) throw badRequest('json patch: the body must be a JSON array of operations');
  const document = structuredClone(target);
  for (const operation of patch) {
    if (!isObject(operation) || typeof operation.op !== 'string' || typeof operation.path !== 'string') {
      throw badRequest('json patch: every operation needs "op" and "path"');
    }
    applyOperation(document, operation as unknown as Operation);
  }
  return document;
}
