/** Shapes stored objects for the wire: the requested apiVersion, list envelopes, delete answers. */
import type { KubeObject, ListResult, ResourceRef, ResourceType } from '../store/types.ts';

/** The apiVersion string for a type at a served version. */
export function apiVersionAt(type: ResourceType, version: string): string {
  return type.group ? `${type.group}/${version}` : version;
}

/** The object as served at `version` (stored once, served at every version of the type). */
export function served(type: ResourceType, version: string, object: KubeObject): KubeObject {
  return { ...object, apiVersion: apiVersionAt(type, version) };
}

/** A `<Kind>List` with list metadata. */
export function listEnvelope(type: ResourceType, version: string, result: ListResult): object {
  const metadata: Record<string, unknown> = { resourceVersion: result.resourceVersion };
  if (result.continue) metadata.continue = result.continue;
  if (result.remainingItemCount !== undefined) metadata.remainingItemCount = result.remainingItemCount;
  return {
    kind: type.listKind,
    apiVersion: apiVersionAt(type, version),
    metadata,
    items: result.items.map((item) => served(type, version, item)),
  };
}

/** The `Status` a delete answers with when the object went at once (kinds that do not return the object). */
export function deletedStatus(ref: ResourceRef, object: KubeObject): object {
  const details: Record<string, unknown> = { name: object.metadata.name, kind: ref.resource, uid: object.metadata.uid };
  if (ref.group) details.group = ref.group;
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details };
}
