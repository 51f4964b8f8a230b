/**
 * `Impersonate-User` / `Impersonate-Group` / `Impersonate-Uid` headers (`kubectl --as`, `--as-group`),
 * checked as the apiserver does: the requester needs the `impersonate` verb on `users`, `groups` or
 * `serviceaccounts` (core group) for each value.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { forbidden } from '../store/status.ts';
import type { ObjectStore, UserInfo } from '../store/types.ts';
import { authorize, forbiddenMessage } from './rbac.ts';
import type { AccessAttributes } from './rules.ts';

const SA_PREFIX = 'system:serviceaccount:';

function headerValues(headers: IncomingHttpHeaders, name: string): string[] {
  const value = headers[name];
  if (value === undefined) return [];
  return (Array.isArray(value) ? value : value.split(',')).map((v) => v.trim()).filter((v) => v !== '');
}

function check(
  store: ObjectStore,
  requester: UserInfo,
  target: { resource: string; name: string; namespace?: string },
): void {
  const attributes: AccessAttributes = {
    verb: 'impersonate',
    isResourceRequest: true,
    path: '',
    group: '',
    resource: target.resource,
    subresource: '',
    namespace: target.namespace ?? '',
    name: target.name,
  };
  const decision = authorize(store, requester, attributes);
  if (!decision.allowed) {
    throw forbidden({ group: '', resource: target.resource }, target.name, forbiddenMessage(requester, attributes));
  }
}

/** The user to act as: the requester itself without impersonation headers. 403 when not allowed. */
export function impersonatedUser(store: ObjectStore, requester: UserInfo, headers: IncomingHttpHeaders): UserInfo {
  const username = headerValues(headers, 'impersonate-user')[0];
  const groups = headerValues(headers, 'impersonate-group');
  if (!username) return requester;
  if (username.startsWith(SA_PREFIX)) {
    const [namespace = '', name = ''] = username.slice(SA_PREFIX.length).split(':');
    check(store, requester, { resource: 'serviceaccounts', name, namespace });
  } else {
    check(store, requester, { resource: 'users', name: username });
  }
  for (const group of groups) check(store, requester, { resource: 'groups', name: group });
  const implied = username.startsWith(SA_PREFIX)
    ? ['system:serviceaccounts', `system:serviceaccounts:${username.slice(SA_PREFIX.length).split(':')[0]}`]
    : [];
  const all = new Set([...groups, ...implied, 'system:authenticated']);
  const user: UserInfo = { username, groups: [...all] };
  const uid = headerValues(headers, 'impersonate-uid')[0];
  if (uid) user.uid = uid;
  return user;
}
