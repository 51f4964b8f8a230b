/**
 * The disruption controller's arithmetic (kubernetes `pkg/controller/disruption/disruption.go`), pure:
 * from a PodDisruptionBudget, the pods its selector matches and their controllers' scale, the status
 * the controller would write. The eviction handler reads that status; getting it right is what makes
 * a drain wait.
 */

/** A pod as the disruption controller reads it. */
export interface BudgetPod {
  readonly metadata: {
    readonly name: string;
    readonly deletionTimestamp?: string;
    readonly ownerReferences?: readonly OwnerReference[];
  };
  readonly status?: { readonly conditions?: readonly { readonly type: string; readonly status: string }[] };
}

export interface OwnerReference {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly uid: string;
  readonly controller?: boolean;
}

/** `int` or `"N%"` (an IntOrString). */
export type IntOrPercent = number | string;

export interface BudgetSpec {
  readonly minAvailable?: IntOrPercent;
  readonly maxUnavailable?: IntOrPercent;
}

export interface BudgetCondition {
  readonly type: 'DisruptionAllowed';
  readonly status: 'True' | 'False';
  readonly reason: 'SufficientPods' | 'InsufficientPods' | 'SyncFailed';
  readonly message: string;
  readonly observedGeneration: number;
  readonly lastTransitionTime: string;
}

export interface BudgetStatus {
  readonly currentHealthy: number;
  readonly desiredHealthy: number;
  readonly expectedPods: number;
  readonly disruptionsAllowed: number;
  /** Pod name → RFC 3339 time the eviction was admitted; omitted when empty, as upstream. */
  readonly disruptedPods?: Readonly<Record<string, string>>;
  readonly observedGeneration: number;
  readonly conditions: readonly BudgetCondition[];
}

/** How long an admitted eviction keeps a pod out of `currentHealthy` before the controller gives up on it. */
export const DELETION_TIMEOUT_MS = 2 * 60 * 1000;

/**
 * The scale of a pod's controller: `{uid, scale}` of the workload whose scale counts (a ReplicaSet owned
 * by a Deployment answers with the Deployment), or undefined when the controller is unknown.
 */
export type ScaleLookup = (ref: OwnerReference) => { readonly uid: string; readonly scale: number } | undefined;

/** The controller reference of an object (the owner with `controller: true`). */
export function controllerOf(pod: BudgetPod): OwnerReference | undefined {
  return pod.metadata.ownerReferences?.find((ref) => ref.controller === true);
}

/**
 * Resolves an IntOrString against a total, rounding percentages up (`GetScaledValueFromIntOrPercent`
 * with roundUp, as the disruption controller calls it for both fields).
 */
export function scaledValue(value: IntOrPercent, total: number): number {
  if (typeof value === 'number') return value;
  const match = /^(\d+)%$/.exec(value);
  if (!match) throw new Error(`invalid value for IntOrString: invalid type: string is not a percentage: "${value}"`);
  return Math.ceil((Number(match[1]) * total) / 100);
}

/** Whether a pod's Ready condition is True. */
export function isPodReady(pod: BudgetPod): boolean {
  return (pod.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
}

/**
 * Sum of the scales of the distinct controllers of the pods. Pods without a controller are skipped and
 * returned as `unmanaged` (upstream records an Event); a controller nobody knows is an error.
 */
export function expectedScale(
  pods: readonly BudgetPod[],
  scaleOf: ScaleLookup,
): { expectedCount: number; unmanaged: string[] } {
  const scales = new Map<string, number>();
  const looked = new Set<string>();
  const unmanaged: string[] = [];
  for (const pod of pods) {
    const ref = controllerOf(pod);
    if (ref === undefined) {
      unmanaged.push(pod.metadata.name);
      continue;
    }
    if (looked.has(ref.uid)) continue;
    const found = scaleOf(ref);
    if (found === undefined) throw new Error(`found no controllers for pod "${pod.metadata.name}"`);
    looked.add(ref.uid);
    scales.set(found.uid, found.scale);
  }
  let expectedCount = 0;
  for (const scale of scales.values()) expectedCount += scale;
  return { expectedCount, unmanaged };
}

/**
 * `expectedCount` and `desiredHealthy` as upstream computes them: an integer `minAvailable` counts the
 * matching pods; a percentage or `maxUnavailable` counts the controllers' scale.
 */
export function expectedAndDesired(
  spec: BudgetSpec,
  pods: readonly BudgetPod[],
  scaleOf: ScaleLookup,
): { expectedCount: number; desiredHealthy: number; unmanaged: string[] } {
  if (spec.maxUnavailable !== undefined) {
    const { expectedCount, unmanaged } = expectedScale(pods, scaleOf);
    const desiredHealthy = Math.max(0, expectedCount - scaledValue(spec.maxUnavailable, expectedCount));
    return { expectedCount, desiredHealthy, unmanaged };
  }
  if (typeof spec.minAvailable === 'number') {
    return { expectedCount: pods.length, desiredHealthy: spec.minAvailable, unmanaged: [] };
  }
  if (typeof spec.minAvailable === 'string') {
    const { expectedCount, unmanaged } = expectedScale(pods, scaleOf);
    return { expectedCount, desiredHealthy: scaledValue(spec.minAvailable, expectedCount), unmanaged };
  }
  return { expectedCount: 0, desiredHealthy: 0, unmanaged: [] };
}

/**
 * Keeps the `disruptedPods` entries that still hold: the pod exists, has not started deleting, and the
 * entry is younger than the deletion timeout. Also returns when the oldest kept entry expires.
 */
export function pruneDisruptedPods(
  pods: readonly BudgetPod[],
  disrupted: Readonly<Record<string, string>> | undefined,
  nowMs: number,
): { kept: Record<string, string>; recheckAtMs?: number } {
  const kept: Record<string, string> = {};
  let recheckAtMs: number | undefined;
  for (const pod of pods) {
    const since = disrupted?.[pod.metadata.name];
    if (since === undefined || pod.metadata.deletionTimestamp !== undefined) continue;
    const expiresAtMs = Date.parse(since) + DELETION_TIMEOUT_MS;
    if (expiresAtMs < nowMs) continue;
    kept[pod.metadata.name] = since;
    recheckAtMs = recheckAtMs === undefined ? expiresAtMs : Math.min(recheckAtMs, expiresAtMs);
  }
  return recheckAtMs === undefined ? { kept } : { kept, recheckAtMs };
}

/** Ready pods that are neither deleting nor recently evicted (`countHealthyPods`). */
export function countHealthy(
  pods: readonly BudgetPod[],
  disrupted: Readonly<Record<string, string>>,
  nowMs: number,
): number {
  return pods.filter((pod) => {
    if (pod.metadata.deletionTimestamp !== undefined) return false;
    const since = disrupted[pod.metadata.name];
    if (since !== undefined && Date.parse(since) + DELETION_TIMEOUT_MS > nowMs) return false;
    return isPodReady(pod);
  }).length;
}

/** The inputs of one disruption-controller sync. */
export interface BudgetInput {
  readonly generation: number;
  readonly spec: BudgetSpec;
  readonly previous?: {
    readonly disruptedPods?: Readonly<Record<string, string>>;
    readonly conditions?: readonly BudgetCondition[];
  };
  /** The pods in the budget's namespace that its selector matches. */
  readonly pods: readonly BudgetPod[];
  readonly scaleOf: ScaleLookup;
  readonly nowMs: number;
}

/** The status a sync writes, what it found unmanaged, and when to sync again for an expiring entry. */
export interface BudgetSync {
  readonly status: BudgetStatus;
  readonly unmanaged: readonly string[];
  readonly recheckAtMs?: number;
  /** Set when the sync failed: the status is the fail-safe one (no disruptions allowed). */
  readonly error?: string;
}

function condition(
  input: BudgetInput,
  fields: Pick<BudgetCondition, 'status' | 'reason' | 'message'>,
): BudgetCondition {
  const previous = input.previous?.conditions?.find((c) => c.type === 'DisruptionAllowed');
  // The transition time moves only when the status flips, as `meta.SetStatusCondition` does.
  const lastTransitionTime =
    previous && previous.status === fields.status
      ? previous.lastTransitionTime
      : `${new Date(input.nowMs).toISOString().slice(0, 19)}Z`;
  return { type: 'DisruptionAllowed', ...fields, observedGeneration: input.generation, lastTransitionTime };
}

/** One disruption-controller sync: the budget's new status. Errors produce the fail-safe status. */
export function computeBudgetStatus(input: BudgetInput): BudgetSync {
  const { kept, recheckAtMs } = pruneDisruptedPods(input.pods, input.previous?.disruptedPods, input.nowMs);
  let counts: ReturnType<typeof expectedAndDesired>;
  try {
    counts = expectedAndDesired(input.spec, input.pods, input.scaleOf);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const failSafe: BudgetStatus = {
      currentHealthy: 0,
      desiredHealthy: 0,
      expectedPods: 0,
      disruptionsAllowed: 0,
      observedGeneration: input.generation,
      conditions: [condition(input, { status: 'False', reason: 'SyncFailed', message })],
    };
    return { status: failSafe, unmanaged: [], error: message };
  }
  const currentHealthy = countHealthy(input.pods, kept, input.nowMs);
  const allowed = currentHealthy - counts.desiredHealthy;
  // expectedCount > 0 keeps a budget that matches nothing yet from allowing its first pods' eviction.
  const disruptionsAllowed = counts.expectedCount <= 0 || allowed <= 0 ? 0 : allowed;
  const status: BudgetStatus = {
    currentHealthy,
    desiredHealthy: counts.desiredHealthy,
    expectedPods: counts.expectedCount,
    disruptionsAllowed,
    ...(Object.keys(kept).length > 0 ? { disruptedPods: kept } : {}),
    observedGeneration: input.generation,
    conditions: [
      disruptionsAllowed > 0
        ? condition(input, { status: 'True', reason: 'SufficientPods', message: '' })
        : condition(input, { status: 'False', reason: 'InsufficientPods', message: '' }),
    ],
  };
  const base = { status, unmanaged: counts.unmanaged };
  return recheckAtMs === undefined ? base : { ...base, recheckAtMs };
}
