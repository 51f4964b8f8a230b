/**
 * Which validating webhooks a request goes to, as the apiserver's webhook dispatcher decides it: a
 * rule matches the operation (`CREATE`, `UPDATE`, `DELETE`, `*`), the API group and version (`*` for
 * any), the resource (`pods`, `pods/*`, `*`, `*\/status`, `*\/*`; `*` alone never matches a
 * subresource) and the scope (`Cluster`, `Namespaced`, `*`); then the webhook's `objectSelector` must
 * match the new or old object's labels and its `namespaceSelector` the namespace's labels. Pure.
 */
import { type LabelSelector, selectorMatches } from '../../../lib/clients/kube/selectors.ts';

export interface WebhookRule {
  operations?: string[];
  apiGroups?: string[];
  apiVersions?: string[];
  resources?: string[];
  scope?: string;
}

export interface ValidatingWebhook {
  name: string;
  clientConfig?: {
    url?: string;
    caBundle?: string;
    service?: { namespace?: string; name?: string; path?: string; port?: number };
  };
  rules?: WebhookRule[];
  failurePolicy?: 'Fail' | 'Ignore';
  timeoutSeconds?: number;
  namespaceSelector?: LabelSelector;
  objectSelector?: LabelSelector;
}

/** What the dispatcher knows of a request when it picks webhooks. */
export interface Attributes {
  operation: 'CREATE' | 'UPDATE' | 'DELETE';
  group: string;
  version: string;
  resource: string;
  subresource?: string;
  namespaced: boolean;
  objectLabels: readonly (Record<string, string> | undefined)[];
  namespaceLabels?: Record<string, string>;
}

const anyOr = (values: readonly string[] | undefined, value: string): boolean =>
  (values ?? []).some((each) => each === '*' || each === value);

function resourceMatches(patterns: readonly string[] | undefined, resource: string, subresource?: string): boolean {
  return (patterns ?? []).some((pattern) => {
    const [what, sub] = pattern.split('/');
    if (sub === undefined) return !subresource && (what === '*' || what === resource);
    return (what === '*' || what === resource) && (sub === '*' || sub === (subresource ?? ''));
  });
}

function scopeMatches(scope: string | undefined, namespaced: boolean): boolean {
  if (!scope || scope === '*') return true;
  return scope === (namespaced ? 'Namespaced' : 'Cluster');
}

/** Whether one rule covers the request. */
export function ruleMatches(rule: WebhookRule, request: Attributes): boolean {
  return (
    anyOr(rule.operations, request.operation) &&
    anyOr(rule.apiGroups, request.group) &&
    anyOr(rule.apiVersions, request.version) &&
    resourceMatches(rule.resources, request.resource, request.subresource) &&
    scopeMatches(rule.scope, request.namespaced)
  );
}

/** An absent selector matches everything (`{}` does too). */
const selects = (selector: LabelSelector | undefined, labels: Record<string, string> | undefined): boolean =>
  selector === undefined || selectorMatches(selector, labels ?? {});

/** Whether the request goes to this webhook. */
export function webhookApplies(webhook: ValidatingWebhook, request: Attributes): boolean {
  if (!(webhook.rules ?? []).some((rule) => ruleMatches(rule, request))) return false;
  if (!request.objectLabels.some((labels) => selects(webhook.objectSelector, labels))) return false;
  // A cluster-scoped object (and a Namespace itself is matched by its own labels upstream) skips it.
  return !request.namespaced || selects(webhook.namespaceSelector, request.namespaceLabels);
}
