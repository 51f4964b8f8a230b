/**
 * Parses a request path into what the apiserver's RequestInfoFactory derives from it: resource or
 * non-resource request, verb, group/version/resource, subresource, namespace, name. Pure.
 */

/** The parsed request, the input of authorization and routing. */
export interface RequestInfo {
  isResourceRequest: boolean;
  /** get, list, watch, create, update, patch, delete, deletecollection (or the HTTP verb, lower-case, for non-resource paths). */
  verb: string;
  path: string;
  apiPrefix: 'api' | 'apis' | '';
  group: string;
  version: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
}

const NAMESPACE_SUBRESOURCES: ReadonlySet<string> = new Set(['status', 'finalize']);

const HTTP_VERBS: Readonly<Record<string, string>> = {
  POST: 'create',
  PUT: 'update',
  PATCH: 'patch',
  DELETE: 'delete',
};

function nonResource(method: string, path: string): RequestInfo {
  return {
    isResourceRequest: false,
    verb: method.toLowerCase(),
    path,
    apiPrefix: '',
    group: '',
    version: '',
    resource: '',
    subresource: '',
    namespace: '',
    name: '',
  };
}

/** Splits `/api/v1/...` or `/apis/<group>/<version>/...` into prefix, group, version and the rest. */
function splitPrefix(
  parts: string[],
): { prefix: 'api' | 'apis'; group: string; version: string; rest: string[] } | undefined {
  if (parts[0] === 'api' && parts.length >= 3) {
    return { prefix: 'api', group: '', version: parts[1] ?? '', rest: parts.slice(2) };
  }
  if (parts[0] === 'apis' && parts.length >= 4) {
    return { prefix: 'apis', group: parts[1] ?? '', version: parts[2] ?? '', rest: parts.slice(3) };
  }
  return undefined;
}

function verbFor(method: string, hasName: boolean, query: URLSearchParams, watchPrefix: boolean): string {
  if (method === 'GET' || method === 'HEAD') {
    if (watchPrefix || (!hasName && isTrue(query.get('watch')))) return 'watch';
    return hasName ? 'get' : 'list';
  }
  if (method === 'DELETE' && !hasName) return 'deletecollection';
  return HTTP_VERBS[method] ?? method.toLowerCase();
}

function isTrue(value: string | null): boolean {
  return value === 'true' || value === '1';
}

/** Parses method + URL. Paths outside `/api/<v>/…` and `/apis/<g>/<v>/…` are non-resource requests. */
export function parseRequestInfo(method: string, url: URL): RequestInfo {
  const path = url.pathname;
  const parts = path.split('/').filter((p) => p !== '');
  const split = splitPrefix(parts);
  if (!split) return nonResource(method, path);
  let rest = split.rest;
  const watchPrefix = rest[0] === 'watch';
  if (watchPrefix) rest = rest.slice(1);
  let namespace = '';
  // `namespaces/<ns>/<resource>…` is namespaced; `namespaces/<ns>` alone (or /status, /finalize) is the namespace itself.
  if (rest[0] === 'namespaces' && rest.length >= 3 && !NAMESPACE_SUBRESOURCES.has(rest[2] ?? '')) {
    namespace = rest[1] ?? '';
    rest = rest.slice(2);
  }
  const [resource = '', name = '', subresource = ''] = rest;
  if (resource === 'namespaces' && name && !namespace) namespace = name;
  return {
    isResourceRequest: true,
    verb: verbFor(method, name !== '', url.searchParams, watchPrefix),
    path,
    apiPrefix: split.prefix,
    group: split.group,
    version: split.version,
    resource,
    subresource,
    namespace,
    name,
  };
}
