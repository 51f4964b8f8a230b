/**
 * A Kubernetes call as RBAC sees it, with why it is made: what the preflight asks a
 * SelfSubjectAccessReview for (lib/preflight/access.ts), and what a branch declares it calls
 * (lib/branches, `access`). Pure data.
 */

export interface ApiAccess {
  readonly verb: string;
  readonly group: string;
  readonly resource: string;
  readonly subresource?: string;
  /** One object only, for a rule restricted by resourceNames (e.g. one CRD). */
  readonly name?: string;
  /** Empty: cluster-scoped, or every namespace. */
  readonly namespace: string;
  /** What the call is for, in a phrase. */
  readonly why: string;
}

export interface AccessSettings {
  /** Where the admission Lease lives (DRAINBRIDGE_NAMESPACE). */
  readonly namespace: string;
  /** `--disable-eviction`: pods are deleted instead of evicted. */
  readonly disableEviction?: boolean;
  /** `plan`: the API server dry-runs each eviction. */
  readonly serverDryRun?: boolean;
  /** The KubeVirt restart opt-in: the VMI's VirtualMachine is read. */
  readonly kubevirtRestart?: boolean;
}

/** One call as RBAC sees it: `more` adds the group, subresource or namespace. */
export const call = (verb: string, resource: string, why: string, more: Partial<ApiAccess> = {}): ApiAccess => ({
  verb,
  group: '',
  resource,
  namespace: '',
  why,
  ...more,
});
