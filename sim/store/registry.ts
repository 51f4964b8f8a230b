/**
 * The registry of served resources: the built-in ones (builtin-types.ts) plus whatever
 * CustomResourceDefinitions add at run time.
 */
import type { ResourceRef, ResourceRegistry, ResourceType } from './types.ts';

const keyOf = (ref: ResourceRef): string => `${ref.group}/${ref.resource}`;

/** Creates a registry holding `initial`. */
export function createRegistry(initial: readonly ResourceType[] = []): ResourceRegistry {
  const types = new Map<string, ResourceType>();
  for (const type of initial) types.set(keyOf(type), type);
  return {
    register: (type) => {
      types.set(keyOf(type), type);
    },
    unregister: (ref) => {
      types.delete(keyOf(ref));
    },
    get: (ref) => types.get(keyOf(ref)),
    lookup: (group, version, resource) => {
      const type = types.get(keyOf({ group, resource }));
      return type?.versions.includes(version) ? type : undefined;
    },
    byKind: (group, kind) => [...types.values()].find((t) => t.group === group && t.kind === kind),
    all: () => [...types.values()],
  };
}
