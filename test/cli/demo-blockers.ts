/**
 * A drain of node-1 held for as long as a test needs, on the demo scenario: its web PodDisruptionBudget
 * (minAvailable 5 of 6 replicas) raised to 6 allows no disruption, so the evacuation waits with a
 * `DisruptionBudget` blocker until the budget is lowered again. (The bare debug pod no longer does: a
 * kubectl filter refusal fails the evacuation at once, as `kubectl drain` does.)
 */
import type { Simulator } from '../../sim/index.ts';

/** What a progress line shows while the budget holds node-1's web pods. */
export const BUDGET_BLOCKED = /blocked: pod shop\/web-\S+ is blocked by PodDisruptionBudget web/;

function setWebMinAvailable(sim: Simulator, minAvailable: number): void {
  sim.store.mutate(
    { group: 'policy', resource: 'poddisruptionbudgets' },
    { namespace: 'shop', name: 'web' },
    (copy) => {
      (copy.spec as { minAvailable?: number }).minAvailable = minAvailable;
      return copy;
    },
  );
}

/**
 * Arranges a drain of node-1 that waits: the bare debug pod gone (it would fail the drain at once) and
 * the web budget allowing no disruption.
 */
export function holdDrainOfNode1(sim: Simulator): void {
  // Gone at once (grace period 0): a terminating bare pod is still refused (kubectl's filters).
  sim.store.delete({ group: '', resource: 'pods' }, { namespace: 'default', name: 'debug' }, { gracePeriodSeconds: 0 });
  setWebMinAvailable(sim, 6);
}

/**
 * The operator lowers the budget again and waits until its status allows a disruption (as `kubectl get
 * pdb` would show): the drain goes on, one web pod at a time.
 */
export async function releaseDrainOfNode1(sim: Simulator): Promise<void> {
  setWebMinAvailable(sim, 5);
  for (const give = Date.now() + 10_000; ; ) {
    const budget = sim.store.get({ group: 'policy', resource: 'poddisruptionbudgets' }, 'shop', 'web');
    if (((budget?.status as { disruptionsAllowed?: number } | undefined)?.disruptionsAllowed ?? 0) > 0) return;
    if (Date.now() > give) throw new Error('the web budget allows no disruption 10 s after it was lowered');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
