/**
 * Bearer-token authentication: tokens map to users (the admin, test users) and ServiceAccounts, with
 * the groups the apiserver assigns (`system:authenticated`, `system:serviceaccounts`, …).
 */
import { randomBytes } from 'node:crypto';
import { registerSecret } from '../../lib/log/redact.ts';
import type { UserInfo } from '../store/types.ts';

/** The user behind the admin token: `system:masters` bypasses RBAC, as in a real cluster. */
export const ADMIN_USER: UserInfo = {
  username: 'kubernetes-admin',
  groups: ['system:masters', 'system:authenticated'],
};

/** Requests without a token. */
export const ANONYMOUS: UserInfo = { username: 'system:anonymous', groups: ['system:unauthenticated'] };

/** The username of a ServiceAccount. */
export function serviceAccountUsername(namespace: string, name: string): string {
  return `system:serviceaccount:${namespace}:${name}`;
}

/** Maps bearer tokens to users. */
export class TokenAuthenticator {
  readonly #tokens = new Map<string, UserInfo>();

  /** Adds a token for `user`; returns it. Tokens are registered with the log redactor. */
  issue(user: UserInfo): string {
    const token = randomBytes(24).toString('base64url');
    registerSecret(token);
    this.#tokens.set(token, { ...user, groups: [...user.groups] });
    return token;
  }

  /** A token for ServiceAccount `namespace/name` (the account's uid, when known, becomes the user's uid). */
  issueForServiceAccount(namespace: string, name: string, uid?: string): string {
    const user: UserInfo = {
      username: serviceAccountUsername(namespace, name),
      groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`, 'system:authenticated'],
    };
    if (uid) user.uid = uid;
    return this.issue(user);
  }

  /**
   * The user for an `Authorization` header: ANONYMOUS when absent, undefined (→ 401) when the token
   * is unknown or the scheme is not Bearer.
   */
  authenticate(authorization: string | undefined): UserInfo | undefined {
    if (!authorization) return ANONYMOUS;
    const match = /^Bearer\s+(\S+)$/i.exec(authorization.trim());
    if (!match?.[1]) return undefined;
    return this.#tokens.get(match[1]);
  }
}
