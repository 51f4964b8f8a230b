/**
 * Applies YAML manifests (one or more documents) to a store, in order: create, or replace what exists.
 * For test setup such as `deploy/base/rbac/*.yaml`; CRDs earlier in the text serve their kinds to later
 * documents. Every document is checked before the first write.
 */
import { parseAllDocuments } from 'yaml';
import { type FieldProblem, InvalidInput } from '../lib/errors/index.ts';
import type { KubeObject, ObjectStore, ResourceRef } from './store/types.ts';

const CRD_KIND = 'CustomResourceDefinition';

function groupOf(apiVersion: string): string {
  return apiVersion.includes('/') ? (apiVersion.split('/')[0] ?? '') : '';
}

function parseDocuments(text: string, source: string): KubeObject[] {
  const problems: FieldProblem[] = [];
  const objects: KubeObject[] = [];
  parseAllDocuments(text).forEach((document, index) => {
    if (document.errors.length > 0) {
      problems.push({ path: `document ${index}`, message: document.errors[0]?.message ?? 'invalid YAML' });
      return;
    }
    const value: unknown = document.toJS();
    if (value === null || value === undefined) return;
    const object = value as Partial<KubeObject>;
    if (typeof object.apiVersion !== 'string')
      problems.push({ path: `document ${index}.apiVersion`, message: 'Required value' });
    if (typeof object.kind !== 'string') problems.push({ path: `document ${index}.kind`, message: 'Required value' });
    if (typeof object.metadata?.name !== 'string') {
      problems.push({ path: `document ${index}.metadata.name`, message: 'Required value' });
    }
    objects.push(value as KubeObject);
  });
  if (problems.length > 0) throw new InvalidInput(`manifests ${source}`, problems);
  return objects;
}

/** Kinds the CRDs among `objects` will define, as `group kind` → ref. */
function pendingKinds(objects: readonly KubeObject[]): Map<string, ResourceRef> {
  const kinds = new Map<string, ResourceRef>();
  for (const crd of objects.filter((o) => o.kind === CRD_KIND)) {
    const spec = (crd.spec ?? {}) as { group?: string; names?: { kind?: string; plural?: string } };
    kinds.set(`${spec.group} ${spec.names?.kind}`, { group: spec.group ?? '', resource: spec.names?.plural ?? '' });
  }
  return kinds;
}

function refFor(store: ObjectStore, object: KubeObject, pending: Map<string, ResourceRef>): ResourceRef | undefined {
  const group = groupOf(object.apiVersion);
  const type = store.registry.byKind(group, object.kind);
  return type ? { group: type.group, resource: type.resource } : pending.get(`${group} ${object.kind}`);
}

/** Creates or replaces every object in `text`; returns them as stored. `InvalidInput` before any write on a bad document or unknown kind. */
export function applyManifests(store: ObjectStore, text: string, source = 'manifests'): KubeObject[] {
  const objects = parseDocuments(text, source);
  const pending = pendingKinds(objects);
  const unknown = objects
    .map((object, index) => ({ object, index }))
    .filter(({ object }) => !refFor(store, object, pending))
    .map(({ object, index }) => ({
      path: `document ${index}.kind`,
      message: `no resource of kind ${object.kind} in ${object.apiVersion}`,
    }));
  if (unknown.length > 0) throw new InvalidInput(`manifests ${source}`, unknown);
  return objects.map((object) => {
    const ref = refFor(store, object, pending) as ResourceRef;
    const type = store.registry.get(ref);
    const namespace = type?.namespaced ? (object.metadata.namespace ?? 'default') : undefined;
    const withNamespace = namespace ? { ...object, metadata: { ...object.metadata, namespace } } : object;
    const existing = store.get(ref, namespace, object.metadata.name ?? '');
    if (!existing) return store.create(ref, withNamespace);
    const { resourceVersion: _ignored, ...metadata } = withNamespace.metadata;
    return store.update(ref, { ...withNamespace, metadata }, {});
  });
}
