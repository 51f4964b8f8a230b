/**
 * The RBAC authorizer over the store's Role/ClusterRole/RoleBinding/ClusterRoleBinding objects, with
 * the apiserver's `system:masters` bypass, its refusal wording and its "allowed by" reasons.
 */
import type { KubeObject, ObjectStore, UserInfo } from '../store/types.ts';
import { type AccessAttributes, type PolicyRule, ruleAllows } from './rules.ts';

const RBAC = 'rbac.authorization.k8s.io';
const CLUSTER_ROLES = { group: RBAC, resource: 'clusterroles' };
const ROLES = { group: RBAC, resource: 'roles' };
const CLUSTER_ROLE_BINDINGS = { group: RBAC, resource: 'clusterrolebindings' };
const ROLE_BINDINGS = { group: RBAC, resource: 'rolebindings' };

interface Subject {
  kind?: string;
  name?: string;
  namespace?: string;
}

interface Binding extends KubeObject {
  subjects?: Subject[];
  roleRef?: { kind?: string; name?: string };
}

/** The authorizer's answer; `reason` is what SelfSubjectAccessReview reports and a 403 appends. */
export interface Decision {
  allowed: boolean;
  reason: string;
}

function subjectMatches(subject: Subject, user: UserInfo, bindingNamespace: string): boolean {
  switch (subject.kind) {
    case 'User':
      return subject.name === user.username;
    case 'Group':
      return user.groups.includes(subject.name ?? '');
    case 'ServiceAccount': {
      const namespace = subject.namespace || bindingNamespace;
      return user.username === `system:serviceaccount:${namespace}:${subject.name}`;
    }
    default:
      return false;
  }
}

function describeSubject(subject: Subject, bindingNamespace: string): string {
  if (subject.kind === 'ServiceAccount')
    return `ServiceAccount "${subject.name}/${subject.namespace || bindingNamespace}"`;
  return `${subject.kind} "${subject.name}"`;
}

/** Authorizes `attributes` for `user` against the RBAC objects in `store`. */
export function authorize(store: ObjectStore, user: UserInfo, attributes: AccessAttributes): Decision {
  if (user.groups.includes('system:masters')) return { allowed: true, reason: '' };
  const errors: string[] = [];
  for (const { binding, namespace, subject } of bindingsFor(store, user, attributes.namespace)) {
    const rules = rulesOf(store, binding, namespace, errors);
    if (rules.some((rule) => ruleAllows(rule, attributes))) {
      return { allowed: true, reason: allowedReason(binding, namespace, subject) };
    }
  }
  return { allowed: false, reason: errors.length > 0 ? `RBAC: ${aggregate(errors)}` : '' };
}

/** The ClusterRoleBindings, then the RoleBindings of `namespace`, that name `user`, with the matching subject. */
function bindingsFor(
  store: ObjectStore,
  user: UserInfo,
  namespace: string,
): { binding: Binding; namespace: string; subject: Subject }[] {
  const candidates: { binding: Binding; namespace: string }[] = store
    .list(CLUSTER_ROLE_BINDINGS)
    .items.map((b) => ({ binding: b as Binding, namespace: '' }));
  if (namespace) {
    for (const b of store.list(ROLE_BINDINGS, { namespace }).items)
      candidates.push({ binding: b as Binding, namespace });
  }
  const found: { binding: Binding; namespace: string; subject: Subject }[] = [];
  for (const { binding, namespace: bindingNamespace } of candidates) {
    const subject = (binding.subjects ?? []).find((s) => subjectMatches(s, user, bindingNamespace));
    if (subject) found.push({ binding, namespace: bindingNamespace, subject });
  }
  return found;
}

/** Every rule that applies to `user` in `namespace` (SelfSubjectRulesReview); `errors` names missing roles. */
export function rulesFor(
  store: ObjectStore,
  user: UserInfo,
  namespace: string,
): { rules: PolicyRule[]; errors: string[] } {
  const errors: string[] = [];
  const rules = bindingsFor(store, user, namespace).flatMap(({ binding, namespace: ns }) =>
    rulesOf(store, binding, ns, errors),
  );
  return { rules, errors };
}

function aggregate(errors: string[]): string {
  return errors.length === 1 ? (errors[0] ?? '') : `[${errors.join(', ')}]`;
}

function allowedReason(binding: Binding, namespace: string, subject: Subject): string {
  const ref = binding.roleRef ?? {};
  const bindingName = namespace
    ? `RoleBinding "${binding.metadata.name}/${namespace}"`
    : `ClusterRoleBinding "${binding.metadata.name}"`;
  const roleName = ref.kind === 'Role' ? `Role "${ref.name}"` : `ClusterRole "${ref.name}"`;
  return `RBAC: allowed by ${bindingName} of ${roleName} to ${describeSubject(subject, namespace)}`;
}

function rulesOf(store: ObjectStore, binding: Binding, namespace: string, errors: string[]): PolicyRule[] {
  const ref = binding.roleRef ?? {};
  const name = ref.name ?? '';
  const role =
    ref.kind === 'Role' && namespace ? store.get(ROLES, namespace, name) : store.get(CLUSTER_ROLES, undefined, name);
  if (!role) {
    errors.push(`${ref.kind === 'Role' ? 'role' : 'clusterrole'}.${RBAC} "${name}" not found`);
    return [];
  }
  return ((role as { rules?: PolicyRule[] }).rules ?? []).filter((r) => r !== null && typeof r === 'object');
}

/** The apiserver's 403 text for a refused request (`responsewriters.forbiddenMessage`). */
export function forbiddenMessage(user: UserInfo, attributes: AccessAttributes): string {
  const who = `User "${user.username}"`;
  if (!attributes.isResourceRequest) return `${who} cannot ${attributes.verb} path "${attributes.path}"`;
  const resource = attributes.subresource ? `${attributes.resource}/${attributes.subresource}` : attributes.resource;
  const scope = attributes.namespace ? `in the namespace "${attributes.namespace}"` : 'at the cluster scope';
  return `${who} cannot ${attributes.verb} resource "${resource}" in API group "${attributes.group}" ${scope}`;
}
