/** `meta.k8s.io/v1` Table responses, what `kubectl get` asks for with `Accept: …;as=Table;…`. */
import type { KubeObject, ResourceType } from '../store/types.ts';
import { columnsFor } from './printers.ts';

/** Whether the client asked for a Table. */
export function wantsTable(accept: string | undefined): boolean {
  return (accept ?? '').split(',').some((part) => part.includes('as=Table') && part.includes('g=meta.k8s.io'));
}

/** What each row carries: `None`, `Metadata` (default: PartialObjectMetadata) or the whole `Object`. */
export type IncludeObject = 'None' | 'Metadata' | 'Object';

export function includeObjectOf(query: URLSearchParams): IncludeObject {
  const value = query.get('includeObject');
  return value === 'None' || value === 'Object' ? value : 'Metadata';
}

function rowObject(object: KubeObject, include: IncludeObject): unknown {
  if (include === 'None') return undefined;
  if (include === 'Object') return object;
  return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: object.metadata };
}

/** A Table of `objects` (already served at the requested version). */
export function toTable(
  type: ResourceType,
  objects: readonly KubeObject[],
  options: { include: IncludeObject; nowMs: number; listMetadata: Record<string, unknown> },
): object {
  const columns = columnsFor(type);
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: options.listMetadata,
    columnDefinitions: columns.map(({ name, type: columnType, format, priority, description }) => ({
      name,
      type: columnType,
      format: format ?? '',
      description,
      priority,
    })),
    rows: objects.map((object) => ({
      cells: columns.map((c) => c.cell(object, options.nowMs)),
      object: rowObject(object, options.include),
    })),
  };
}
