/**
 * API discovery: the legacy documents (`/api`, `/api/v1`, `/apis`, `/apis/<g>`, `/apis/<g>/<v>`) and
 * the aggregated v2 form kubectl 1.32 asks for first (`Accept: application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList`).
 * Built from the registry on every request, so CRDs show up at once.
 */
import type { ResourceRegistry, ResourceType } from '../store/types.ts';

const ALL_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

interface SubresourceInfo {
  verbs: string[];
  kind?: { group: string; version: string; kind: string };
}

const SUBRESOURCES: Readonly<Record<string, SubresourceInfo>> = {
  status: { verbs: ['get', 'patch', 'update'] },
  eviction: { verbs: ['create'], kind: { group: 'policy', version: 'v1', kind: 'Eviction' } },
  binding: { verbs: ['create'], kind: { group: '', version: 'v1', kind: 'Binding' } },
  scale: { verbs: ['get', 'patch', 'update'], kind: { group: 'autoscaling', version: 'v1', kind: 'Scale' } },
  token: { verbs: ['create'], kind: { group: 'authentication.k8s.io', version: 'v1', kind: 'TokenRequest' } },
  finalize: { verbs: ['update'] },
};

function subresourceInfo(type: ResourceType, version: string, name: string): Required<SubresourceInfo> {
  const known = SUBRESOURCES[name] ?? { verbs: ['get'] };
  return { verbs: known.verbs, kind: known.kind ?? { group: type.group, version, kind: type.kind } };
}

/** Groups in discovery order: the core group first, then the rest as registered. */
function groupsOf(registry: ResourceRegistry): Map<string, ResourceType[]> {
  const groups = new Map<string, ResourceType[]>();
  for (const type of registry.all()) {
    const list = groups.get(type.group) ?? [];
    list.push(type);
    groups.set(type.group, list);
  }
  return groups;
}

function versionsOf(types: readonly ResourceType[]): string[] {
  const versions: string[] = [];
  for (const type of types) for (const v of type.versions) if (!versions.includes(v)) versions.push(v);
  return versions;
}

function legacyResource(type: ResourceType): Record<string, unknown> {
  const entry: Record<string, unknown> = {
    name: type.resource,
    singularName: type.singular,
    namespaced: type.namespaced,
    kind: type.kind,
    verbs: type.verbs ?? ALL_VERBS,
  };
  if (type.shortNames) entry.shortNames = type.shortNames;
  if (type.categories) entry.categories = type.categories;
  return entry;
}

/** `/api/v1` or `/apis/<g>/<v>`: an APIResourceList, or undefined when the group/version is not served. */
export function resourceList(registry: ResourceRegistry, group: string, version: string): object | undefined {
  const types = registry.all().filter((t) => t.group === group && t.versions.includes(version));
  if (types.length === 0) return undefined;
  const resources: Record<string, unknown>[] = [];
  for (const type of types) {
    resources.push(legacyResource(type));
    for (const sub of type.subresources) {
      const info = subresourceInfo(type, version, sub);
      resources.push({
        name: `${type.resource}/${sub}`,
        singularName: '',
        namespaced: type.namespaced,
        group: info.kind.group,
        version: info.kind.version,
        kind: info.kind.kind,
        verbs: info.verbs,
      });
    }
  }
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: group ? `${group}/${version}` : version,
    resources,
  };
}

/** `/api`. */
export function coreVersions(serverAddress: string): object {
  return {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
  };
}

function apiGroup(group: string, types: readonly ResourceType[]): Record<string, unknown> {
  const versions = versionsOf(types).map((version) => ({ groupVersion: `${group}/${version}`, version }));
  return { name: group, versions, preferredVersion: versions[0] };
}

/** `/apis`. */
export function groupList(registry: ResourceRegistry): object {
  const groups = [...groupsOf(registry)]
    .filter(([group]) => group !== '')
    .map(([group, types]) => apiGroup(group, types));
  return { kind: 'APIGroupList', apiVersion: 'v1', groups };
}

/** `/apis/<g>`, or undefined. */
export function groupDocument(registry: ResourceRegistry, group: string): object | undefined {
  const types = groupsOf(registry).get(group);
  if (!group || !types) return undefined;
  return { kind: 'APIGroup', apiVersion: 'v1', ...apiGroup(group, types) };
}

function aggregatedResource(type: ResourceType, version: string): Record<string, unknown> {
  const entry: Record<string, unknown> = {
    resource: type.resource,
    responseKind: { group: type.group, version, kind: type.kind },
    scope: type.namespaced ? 'Namespaced' : 'Cluster',
    singularResource: type.singular,
    verbs: type.verbs ?? ALL_VERBS,
  };
  if (type.shortNames) entry.shortNames = type.shortNames;
  if (type.categories) entry.categories = type.categories;
  if (type.subresources.length > 0) {
    entry.subresources = type.subresources.map((sub) => {
      const info = subresourceInfo(type, version, sub);
      return { subresource: sub, responseKind: info.kind, verbs: info.verbs };
    });
  }
  return entry;
}

/** The aggregated discovery document for `/api` (`core` true) or `/apis`. */
export function aggregatedDiscovery(registry: ResourceRegistry, core: boolean): object {
  const items = [...groupsOf(registry)]
    .filter(([group]) => (group === '') === core)
    .map(([group, types]) => ({
      metadata: { name: group, creationTimestamp: null },
      versions: versionsOf(types).map((version) => ({
        version,
        resources: types.filter((t) => t.versions.includes(version)).map((t) => aggregatedResource(t, version)),
        freshness: 'Current',
      })),
    }));
  return { kind: 'APIGroupDiscoveryList', apiVersion: 'apidiscovery.k8s.io/v2', metadata: {}, items };
}

/** The content type of an aggregated answer, when the client accepts it. */
export function acceptsAggregated(accept: string | undefined): string | undefined {
  if (!accept) return undefined;
  for (const part of accept.split(',')) {
    const media = part.trim().replaceAll(' ', '');
    if (media.includes('g=apidiscovery.k8s.io') && media.includes('as=APIGroupDiscoveryList')) {
      if (media.includes('v=v2') && !media.includes('v=v2beta1')) {
        return 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';
      }
    }
  }
  return undefined;
}
