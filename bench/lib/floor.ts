/**
 * The physical floor of a drain: the least time any tool can take to empty the node of a settled cluster,
 * given what the cluster itself must do. Pure: it reads pods and PodDisruptionBudgets as the case's fresh
 * cluster holds them before the run, and the simulator's timings.
 *
 * What bounds a drain from below:
 * - an evicted pod is gone only after its grace period (the kubelet stops it), so nothing is faster
 *   than the longest grace period of a pod that must go;
 * - a PDB lets `disruptionsAllowed` pods go at a time. The next may go once a replacement is Ready again:
 *   a ReplicaSet replaces a pod as soon as it is terminating (start-up + readiness), a StatefulSet only
 *   after the old pod is gone (grace period + start-up + readiness). So the pods a budget covers leave in
 *   waves: ceil(pods / allowed) of them, and the budget's drain lasts
 *   (waves − 1) × (time until the budget allows again) + the grace period of the last wave.
 * The floor is the longest of these over the budgets and the unbudgeted pods.
 */
import { type LabelSelector, type Labels, selectorMatches } from '../../lib/clients/kube/selectors.ts';

/** How a pod comes back after it was evicted. */
export type Replacement = 'when-terminating' | 'when-gone' | 'never';

/** A pod the drain must move. */
export interface FloorPod {
  /** `namespace/name`. */
  readonly key: string;
  readonly namespace: string;
  readonly labels: Labels;
  readonly graceSeconds: number;
  readonly replacement: Replacement;
}

/** A PodDisruptionBudget as the settled cluster reports it. */
export interface FloorBudget {
  readonly namespace: string;
  readonly name: string;
  readonly selector: LabelSelector | undefined;
  /** `status.disruptionsAllowed` with every pod healthy. */
  readonly disruptionsAllowed: number;
}

/** Simulated seconds a new pod needs until it counts as healthy again. */
export interface FloorTimings {
  readonly startupSeconds: number;
  readonly readinessSeconds: number;
  /** The simulator's clock speed: simulated seconds per real second. */
  readonly speed: number;
}

/** The pods one budget (or no budget) covers, and how long they take to leave. */
export interface FloorGroup {
  /** `PDB ns/name` or `pod ns/name` for an unbudgeted pod. */
  readonly what: string;
  readonly pods: number;
  readonly perWave: number;
  readonly waves: number;
  /** Simulated seconds from one wave's evictions until the budget allows the next. */
  readonly waveSeconds: number;
  /** Simulated seconds until the group's last pod is gone. */
  readonly seconds: number;
}

export interface PhysicalFloor {
  /** Real seconds at the given speed (undefined: some pod can never go, e.g. a budget at 0). */
  readonly wallSeconds: number | undefined;
  readonly simulatedSeconds: number | undefined;
  /** The group that sets the floor. */
  readonly critical: FloorGroup | undefined;
  readonly groups: readonly FloorGroup[];
}

function budgetKey(budget: FloorBudget): string {
  return `${budget.namespace}/${budget.name}`;
}

function covering(pod: FloorPod, budgets: readonly FloorBudget[]): FloorBudget[] {
  return budgets.filter((b) => b.namespace === pod.namespace && b.selector && selectorMatches(b.selector, pod.labels));
}

/** Until a replacement of `pod` is healthy, counted from its eviction (Infinity: it never comes back). */
function recoverySeconds(pod: FloorPod, timings: FloorTimings): number {
  const start = timings.startupSeconds + timings.readinessSeconds;
  if (pod.replacement === 'when-terminating') return start;
  if (pod.replacement === 'when-gone') return pod.graceSeconds + start;
  return Number.POSITIVE_INFINITY;
}

function budgetGroup(budget: FloorBudget, pods: readonly FloorPod[], timings: FloorTimings): FloorGroup {
  const perWave = Math.max(0, budget.disruptionsAllowed);
  const waves = perWave > 0 ? Math.ceil(pods.length / perWave) : Number.POSITIVE_INFINITY;
  const waveSeconds = Math.max(...pods.map((pod) => recoverySeconds(pod, timings)));
  const grace = Math.max(...pods.map((pod) => pod.graceSeconds));
  // One wave needs no recovery at all; an endless wait (a budget at 0, pods that never come back) has no floor.
  const seconds = waves === 1 ? grace : (waves - 1) * waveSeconds + grace;
  return { what: `PDB ${budgetKey(budget)}`, pods: pods.length, perWave, waves, waveSeconds, seconds };
}

/** The floor of draining `pods` under `budgets` with `timings`. */
export function physicalFloor(
  pods: readonly FloorPod[],
  budgets: readonly FloorBudget[],
  timings: FloorTimings,
): PhysicalFloor {
  const byBudget = new Map<string, { budget: FloorBudget; pods: FloorPod[] }>();
  const groups: FloorGroup[] = [];
  for (const pod of pods) {
    const mine = covering(pod, budgets);
    const budget = mine[0];
    if (mine.length > 1) {
      // The eviction API refuses a pod under two budgets: no tool moves it without an operator.
      groups.push({
        what: `pod ${pod.key} (2 PDBs)`,
        pods: 1,
        perWave: 0,
        waves: 0,
        waveSeconds: 0,
        seconds: Infinity,
      });
    } else if (!budget) {
      groups.push({ what: `pod ${pod.key}`, pods: 1, perWave: 1, waves: 1, waveSeconds: 0, seconds: pod.graceSeconds });
    } else {
      const entry = byBudget.get(budgetKey(budget)) ?? { budget, pods: [] };
      entry.pods.push(pod);
      byBudget.set(budgetKey(budget), entry);
    }
  }
  for (const { budget, pods: covered } of byBudget.values()) groups.push(budgetGroup(budget, covered, timings));
  const critical = [...groups].sort((a, b) => b.seconds - a.seconds)[0];
  const simulated = critical === undefined ? 0 : critical.seconds;
  if (!Number.isFinite(simulated)) return { wallSeconds: undefined, simulatedSeconds: undefined, critical, groups };
  return { wallSeconds: simulated / timings.speed, simulatedSeconds: simulated, critical, groups };
}

/** One line for the report: the floor and what sets it. */
export function describeFloor(floor: PhysicalFloor): string {
  const group = floor.critical;
  if (floor.wallSeconds === undefined || !group) return 'no floor: some pod can never be evicted';
  const wave =
    group.waves > 1
      ? `${group.waves} waves of ${group.perWave} × ${group.waveSeconds.toFixed(1)} s + grace`
      : 'its grace period';
  return `${floor.wallSeconds.toFixed(1)} s (${group.what}: ${group.pods} pod(s), ${wave}; ${floor.simulatedSeconds?.toFixed(1)} simulated s)`;
}
