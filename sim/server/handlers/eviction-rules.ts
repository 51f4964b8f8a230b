/**
 * The eviction subresource's decisions, after the apiserver's EvictionREST
 * (pkg/registry/core/pod/storage/eviction.go): which pods skip the budget, which budget applies,
 * and whether it allows one more disruption. Pure.
 */
import { type LabelSelector, selectorMatches } from '../../../lib/clients/kube/selectors.ts';
import { forbidden, StatusError, tooManyRequests } from '../../store/status.ts';
import type { KubeObject } from '../../store/types.ts';

/** The apiserver's cap on `status.disruptedPods` (MaxDisruptedPodSize). */
export const MAX_DISRUPTED_PODS = 2000;

const phaseOf = (pod: KubeObject): string => String((pod.status as { phase?: unknown } | undefined)?.phase ?? '');

/** Succeeded, Failed, Pending or already deleting pods are deleted without looking at budgets. */
export function canIgnoreBudget(pod: KubeObject): boolean {
  const phase = phaseOf(pod);
  return phase === 'Succeeded' || phase === 'Failed' || phase === 'Pending' || Boolean(pod.metadata.deletionTimestamp);
}

/** Whether the delete must carry the pod's resourceVersion (to not race a pod turning Ready). */
export function shouldEnforceResourceVersion(pod: KubeObject): boolean {
  const phase = phaseOf(pod);
  return !(phase === 'Succeeded' || phase === 'Failed' || pod.metadata.deletionTimestamp);
}

/** The pod's Ready condition is True (`podutil.IsPodReady`). */
export function isPodReady(pod: KubeObject): boolean {
  const conditions = ((pod.status as { conditions?: unknown } | undefined)?.conditions ?? []) as {
    type?: string;
    status?: string;
  }[];
  return conditions.some((c) => c.type === 'Ready' && c.status === 'True');
}

/** Budgets in the pod's namespace whose selector matches it (an empty selector matches all, a missing one none). */
export function matchingBudgets(pod: KubeObject, budgets: readonly KubeObject[]): KubeObject[] {
  return budgets.filter((pdb) => {
    if (pdb.metadata.namespace !== pod.metadata.namespace) return false;
    const selector = (pdb.spec as { selector?: LabelSelector } | undefined)?.selector;
    try {
      return selectorMatches(selector, pod.metadata.labels);
    } catch {
      // An invalid selector matches nothing, as upstream.
      return false;
    }
  });
}

interface BudgetStatus {
  disruptionsAllowed?: number;
  currentHealthy?: number;
  desiredHealthy?: number;
  observedGeneration?: number;
  disruptedPods?: Record<string, string>;
  conditions?: Record<string, unknown>[];
}

/** The budget's status, defaulted. */
export function budgetStatus(pdb: KubeObject): Required<Omit<BudgetStatus, 'conditions'>> & BudgetStatus {
  const status = (pdb.status ?? {}) as BudgetStatus;
  return {
    ...status,
    disruptionsAllowed: status.disruptionsAllowed ?? 0,
    currentHealthy: status.currentHealthy ?? 0,
    desiredHealthy: status.desiredHealthy ?? 0,
    observedGeneration: status.observedGeneration ?? 0,
    disruptedPods: status.disruptedPods ?? {},
  };
}

/** The 429 for a budget the disruption controller has not observed yet. */
export function budgetNotObserved(pdbName: string): StatusError {
  const error = tooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", [
    { reason: 'DisruptionBudget', message: `The disruption budget ${pdbName} is still being processed by the server.` },
  ]);
  return new StatusError(error.code, error.reason, error.message, { ...error.details, retryAfterSeconds: 10 });
}

/** How an unready pod is treated: deleted without touching the budget, or checked like any other. */
export function unhealthyPodBypassesBudget(pod: KubeObject, pdb: KubeObject): boolean {
  if (isPodReady(pod)) return false;
  const policy = (pdb.spec as { unhealthyPodEvictionPolicy?: string } | undefined)?.unhealthyPodEvictionPolicy;
  if (policy === 'AlwaysAllow') return true;
  const status = budgetStatus(pdb);
  return status.currentHealthy >= status.desiredHealthy && status.desiredHealthy > 0;
}

/** Throws the apiserver's refusal when the budget allows no disruption now (checkAndDecrement's checks). */
export function checkBudget(pdb: KubeObject): void {
  const name = pdb.metadata.name ?? '';
  const status = budgetStatus(pdb);
  if (status.observedGeneration < (pdb.metadata.generation ?? 0)) throw budgetNotObserved(name);
  const singular = { group: 'policy', resource: 'poddisruptionbudget' };
  if (status.disruptionsAllowed < 0) throw forbidden(singular, name, 'pdb disruptions allowed is negative');
  if (Object.keys(status.disruptedPods).length > MAX_DISRUPTED_PODS) {
    throw forbidden(singular, name, 'DisruptedPods map too big - too many evictions not confirmed by PDB controller');
  }
  if (status.disruptionsAllowed === 0) {
    throw tooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", [
      {
        reason: 'DisruptionBudget',
        message: `The disruption budget ${name} needs ${status.desiredHealthy} healthy pods and has ${status.currentHealthy} currently`,
      },
    ]);
  }
}

function disruptionAllowedCondition(allowed: number, generation: number, nowIso: string): Record<string, unknown> {
  return {
    type: 'DisruptionAllowed',
    status: allowed > 0 ? 'True' : 'False',
    reason: allowed > 0 ? 'SufficientPods' : 'InsufficientPods',
    message: '',
    observedGeneration: generation,
    lastTransitionTime: nowIso,
  };
}

/** The budget after one eviction: one disruption fewer, the pod recorded in `disruptedPods`. */
export function decrementedBudget(pdb: KubeObject, podName: string, nowIso: string): KubeObject {
  const next = structuredClone(pdb);
  const status = budgetStatus(next);
  const allowed = status.disruptionsAllowed - 1;
  const conditions = (status.conditions ?? []).filter((c) => c.type !== 'DisruptionAllowed');
  const previous = (status.conditions ?? []).find((c) => c.type === 'DisruptionAllowed');
  if (allowed === 0 || previous) {
    const condition = disruptionAllowedCondition(allowed, status.observedGeneration, nowIso);
    if (previous && previous.status === condition.status) condition.lastTransitionTime = previous.lastTransitionTime;
    conditions.push(condition);
  }
  next.status = {
    ...status,
    disruptionsAllowed: allowed,
    disruptedPods: { ...status.disruptedPods, [podName]: nowIso },
    conditions,
  };
  return next;
}
