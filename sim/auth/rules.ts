/**
 * RBAC rule matching, as the apiserver's rbac authorizer does it (pkg/apis/rbac/v1 evaluation):
 * verbs, apiGroups, resources (with a star, `res/sub`, star-slash-sub), resourceNames, nonResourceURLs (with a
 * trailing `*`). Pure.
 */

/** One `PolicyRule`. */
export interface PolicyRule {
  verbs?: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

/** What is being asked: the authorizer's attributes minus the user. */
export interface AccessAttributes {
  verb: string;
  isResourceRequest: boolean;
  /** Non-resource requests: the URL path. */
  path: string;
  group: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
}

const has = (list: readonly string[] | undefined, value: string): boolean =>
  (list ?? []).some((item) => item === '*' || item === value);

function resourceMatches(rule: PolicyRule, resource: string, subresource: string): boolean {
  const combined = subresource ? `${resource}/${subresource}` : resource;
  return (rule.resources ?? []).some(
    (r) => r === '*' || r === combined || (subresource !== '' && r === `*/${subresource}`),
  );
}

function nameMatches(rule: PolicyRule, name: string): boolean {
  const names = rule.resourceNames ?? [];
  return names.length === 0 || names.includes(name);
}

function urlMatches(rule: PolicyRule, path: string): boolean {
  return (rule.nonResourceURLs ?? []).some(
    (url) => url === '*' || url === path || (url.endsWith('*') && path.startsWith(url.slice(0, -1))),
  );
}

/** Whether one rule allows the request. */
export function ruleAllows(rule: PolicyRule, request: AccessAttributes): boolean {
  if (!has(rule.verbs, request.verb)) return false;
  if (!request.isResourceRequest) return urlMatches(rule, request.path);
  return (
    has(rule.apiGroups, request.group) &&
    resourceMatches(rule, request.resource, request.subresource) &&
    nameMatches(rule, request.name)
  );
}
