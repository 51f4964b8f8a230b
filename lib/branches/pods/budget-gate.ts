/**
 * Asks only what a PodDisruptionBudget can grant. A healthy pod under exactly one PDB whose status is
 * current and allows no (more) disruptions would be refused with 429 anyway: it is held back this pass with
 * the apiserver's own reason, and the budget's allowance is handed to as many pods as it allows. Anything
 * the status cannot decide (no PDB, several PDBs, a PDB not yet observed, an unhealthy or not-running pod)
 * is left to the eviction API itself. Pure.
 *
 * Why: a refused pod is asked again only at the next pass, all of them together; without the gate every
 * pass spent one 429 per waiting pod, and the pods that could go waited behind the per-pod backoff.
 */
import type { V1Pod, V1PodDisruptionBudget } from '@kubernetes/client-node';
import { budgetsCovering, ignoresBudgets } from './refusals.ts';

export interface HeldByBudget {
  readonly pod: V1Pod;
  readonly pdbName: string;
  /** The apiserver's wording for the refusal this avoids. */
  readonly message: string;
}

function isReady(pod: V1Pod): boolean {
  return (
    pod.status?.phase === 'Running' &&
    (pod.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True')
  );
}

function isObserved(pdb: V1PodDisruptionBudget): boolean {
  return (
    pdb.status?.observedGeneration !== undefined && pdb.status.observedGeneration >= (pdb.metadata?.generation ?? 0)
  );
}

function budgetKey(pdb: V1PodDisruptionBudget): string {
  return `${pdb.metadata?.namespace}/${pdb.metadata?.name}`;
}

/** Splits the pods due this pass into those to ask the API about and those a PDB's status already refuses. */
export function gateByBudgets(
  due: readonly V1Pod[],
  budgets: readonly V1PodDisruptionBudget[],
): { attempt: V1Pod[]; held: HeldByBudget[] } {
  const remaining = new Map<string, number>();
  const attempt: V1Pod[] = [];
  const held: HeldByBudget[] = [];
  for (const pod of due) {
    const covering = budgetsCovering(pod, budgets);
    const pdb = covering[0];
    if (covering.length !== 1 || !pdb || ignoresBudgets(pod) || !isReady(pod) || !isObserved(pdb)) {
      attempt.push(pod);
      continue;
    }
    const key = budgetKey(pdb);
    const left = remaining.get(key) ?? pdb.status?.disruptionsAllowed ?? 0;
    if (left > 0) {
      remaining.set(key, left - 1);
      attempt.push(pod);
      continue;
    }
    remaining.set(key, 0);
    held.push({ pod, pdbName: pdb.metadata?.name ?? '', message: budgetHoldMessage(pdb) });
  }
  return { attempt, held };
}

/** The apiserver's words for a budget that allows no disruption (its 429's cause), from the budget's status. */
export function budgetHoldMessage(pdb: V1PodDisruptionBudget): string {
  const status = pdb.status;
  return `The disruption budget ${pdb.metadata?.name} needs ${status?.desiredHealthy ?? '?'} healthy pods and has ${status?.currentHealthy ?? '?'} currently`;
}
