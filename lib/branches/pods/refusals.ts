/**
 * What an eviction's answer means for the drain. Pure: classifies the API status of a failed eviction
 * (as lib/clients/kube/errors.ts keeps it) into the drain's outcomes, after the apiserver's eviction subresource
 * (pkg/registry/core/pod/storage/eviction.go) and KubeVirt's eviction webhook.
 */
import type { V1Pod, V1PodDisruptionBudget } from '@kubernetes/client-node';
import {
  type ApiStatus,
  DISRUPTION_BUDGET_CAUSE,
  hasCause,
  isMultiplePdbRefusal,
  NAMESPACE_TERMINATING_CAUSE,
} from '../../clients/kube/errors.ts';
import { type LabelSelector, selectorMatches } from '../../clients/kube/selectors.ts';

/** KubeVirt's 429 message when the eviction started a live migration instead (descheduler's marker). */
export const EVACUATION_TRIGGERED_TEXT = 'Eviction triggered evacuation';

export type EvictionOutcome =
  /** Accepted: the pod is now terminating. */
  | { readonly kind: 'evicted' }
  /** 404: the pod (or that uid) is gone already. */
  | { readonly kind: 'gone' }
  /** 429 with cause DisruptionBudget: the named PDB allows no disruption now. */
  | { readonly kind: 'budget'; readonly pdbName: string; readonly message: string }
  /** 500 "more than one PodDisruptionBudget": blocked until someone fixes the PDBs. */
  | { readonly kind: 'multiple-budgets'; readonly message: string }
  /** 429 "Eviction triggered evacuation" (KubeVirt): a migration is under way; not a block. */
  | { readonly kind: 'evacuating'; readonly message: string }
  /** 403 NamespaceTerminating: the namespace controller is deleting the pod; wait for it. */
  | { readonly kind: 'namespace-terminating'; readonly message: string }
  /** 409 uid precondition or other 429: try again after the pod's backoff. */
  | { readonly kind: 'retry'; readonly message: string }
  /** Anything else: a refusal the drain cannot get past by waiting (RBAC 403, 422 …). */
  | { readonly kind: 'refused'; readonly message: string };

const BUDGET_NAME = /The disruption budget (\S+)/;

/** The PDB a DisruptionBudget cause names ("The disruption budget web-pdb needs 2 healthy pods …"). */
export function budgetNameOf(status: ApiStatus): string {
  for (const cause of status.causes) {
    if (cause.reason !== DISRUPTION_BUDGET_CAUSE) continue;
    const match = BUDGET_NAME.exec(cause.message ?? '');
    if (match?.[1]) return match[1];
  }
  return '';
}

function causeMessage(status: ApiStatus, reason: string): string {
  return status.causes.find((cause) => cause.reason === reason)?.message ?? status.message;
}

/** Classifies a failed eviction's API status. */
export function classifyEvictionStatus(status: ApiStatus): EvictionOutcome {
  if (status.code === 404) return { kind: 'gone' };
  if (status.code === 429 && status.message.includes(EVACUATION_TRIGGERED_TEXT)) {
    return { kind: 'evacuating', message: status.message };
  }
  if (status.code === 429 && hasCause(status, DISRUPTION_BUDGET_CAUSE)) {
    return { kind: 'budget', pdbName: budgetNameOf(status), message: causeMessage(status, DISRUPTION_BUDGET_CAUSE) };
  }
  if (isMultiplePdbRefusal(status)) return { kind: 'multiple-budgets', message: status.message };
  if (status.code === 403 && hasCause(status, NAMESPACE_TERMINATING_CAUSE)) {
    return { kind: 'namespace-terminating', message: status.message };
  }
  if (status.code === 429 || status.code === 409 || status.code === 0 || status.code >= 500) {
    return { kind: 'retry', message: `${status.code} ${status.message}` };
  }
  return { kind: 'refused', message: `${status.code} ${status.reason}: ${status.message}` };
}

/**
 * The PDBs in the pod's namespace whose selector matches it, as the eviction subresource matches them:
 * a missing or empty selector matches nothing.
 */
export function budgetsCovering(pod: V1Pod, budgets: readonly V1PodDisruptionBudget[]): V1PodDisruptionBudget[] {
  const namespace = pod.metadata?.namespace;
  return budgets.filter((pdb) => {
    const selector = pdb.spec?.selector as LabelSelector | undefined;
    if (pdb.metadata?.namespace !== namespace || !selector) return false;
    const empty =
      Object.keys(selector.matchLabels ?? {}).length === 0 && (selector.matchExpressions ?? []).length === 0;
    return !empty && selectorMatches(selector, pod.metadata?.labels);
  });
}

/** Whether the eviction subresource skips the PDB check for this pod (terminal, pending or terminating). */
export function ignoresBudgets(pod: V1Pod): boolean {
  const phase = pod.status?.phase;
  return phase === 'Succeeded' || phase === 'Failed' || phase === 'Pending' || pod.metadata?.deletionTimestamp != null;
}
