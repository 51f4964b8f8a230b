/**
 * OpenAPI v3, as far as kubectl needs it: the index (`/openapi/v3`) and one document per
 * group/version listing each resource's paths with their `x-kubernetes-group-version-kind` and the
 * `fieldValidation` query parameter. That tells kubectl (`apply`, `create`, `--validate=strict`) that
 * the server validates fields itself, so it needs no schemas. No component schemas are served: kubectl
 * then computes apply patches from its compiled-in types (JSON merge patch for custom resources), and
 * `kubectl explain` is not supported. OpenAPI v2 is not served (404).
 */
import { createHash } from 'node:crypto';
import type { ResourceRegistry, ResourceType } from '../store/types.ts';
import type { Reply, RequestContext } from './context.ts';

const QUERY_PARAMS = ['fieldValidation', 'fieldManager', 'dryRun'].map((name) => ({
  name,
  in: 'query',
  schema: { type: 'string', uniqueItems: true },
}));

function gvPath(group: string, version: string): string {
  return group ? `apis/${group}/${version}` : `api/${version}`;
}

function operation(type: ResourceType, version: string, verb: string): Record<string, unknown> {
  return {
    operationId: `${verb}${type.kind}`,
    'x-kubernetes-action': verb,
    'x-kubernetes-group-version-kind': { group: type.group, version, kind: type.kind },
    parameters: QUERY_PARAMS,
    responses: { '200': { description: 'OK' } },
  };
}

function pathsOf(type: ResourceType, version: string): Record<string, unknown> {
  const base = `/${gvPath(type.group, version)}${type.namespaced ? '/namespaces/{namespace}' : ''}/${type.resource}`;
  return {
    [base]: { get: operation(type, version, 'list'), post: operation(type, version, 'post') },
    [`${base}/{name}`]: {
      get: operation(type, version, 'get'),
      put: operation(type, version, 'put'),
      patch: operation(type, version, 'patch'),
      delete: operation(type, version, 'delete'),
    },
  };
}

/** Group/versions currently served, as `api/v1`, `apis/apps/v1`, … → their types. */
function groupVersions(
  registry: ResourceRegistry,
): Map<string, { group: string; version: string; types: ResourceType[] }> {
  const out = new Map<string, { group: string; version: string; types: ResourceType[] }>();
  for (const type of registry.all()) {
    for (const version of type.versions) {
      const key = gvPath(type.group, version);
      const entry = out.get(key) ?? { group: type.group, version, types: [] };
      entry.types.push(type);
      out.set(key, entry);
    }
  }
  return out;
}

function documentFor(entry: { version: string; types: ResourceType[] }): object {
  const paths: Record<string, unknown> = {};
  for (const type of entry.types) Object.assign(paths, pathsOf(type, entry.version));
  return { openapi: '3.0.0', info: { title: 'Kubernetes', version: 'v1.32.4' }, paths, components: { schemas: {} } };
}

const hashOf = (document: object): string =>
  createHash('sha512').update(JSON.stringify(document)).digest('hex').slice(0, 128).toUpperCase();

/** Answers `/openapi/v3` and `/openapi/v3/<gv path>`; undefined for anything else. */
export function openApiDocument(ctx: RequestContext, parts: string[]): Reply | undefined {
  if (parts[0] !== 'openapi' || parts[1] !== 'v3') return undefined;
  const versions = groupVersions(ctx.parts.store.registry);
  if (parts.length === 2) {
    const paths: Record<string, unknown> = {};
    for (const [key, entry] of versions) {
      paths[key] = { serverRelativeURL: `/openapi/v3/${key}?hash=${hashOf(documentFor(entry))}` };
    }
    return { code: 200, body: { paths } };
  }
  const entry = versions.get(parts.slice(2).join('/'));
  return entry ? { code: 200, body: documentFor(entry) } : undefined;
}
