/**
 * Where a pod may run: the scheduler's filter predicates over plain Node and Pod objects, worded as
 * kube-scheduler words them. Pure. Shared by the simulator's scheduler and by drainbridge's drain
 * planner, which has to say which replacements cannot schedule anywhere.
 *
 * Filters run in kube-scheduler's default order (NodeUnschedulable, TaintToleration, NodeAffinity,
 * NodeResourcesFit) and, like the scheduler's framework, a node's verdict is its first failing filter.
 * Not modelled: CPU/memory requests, host ports, volumes, inter-pod (anti-)affinity, topology spread.
 */
import type { Labels } from './selectors.ts';

export interface Taint {
  readonly key: string;
  readonly value?: string;
  /** `NoSchedule`, `PreferNoSchedule` or `NoExecute`. */
  readonly effect: string;
}

export interface Toleration {
  /** Empty with operator `Exists` tolerates every taint. */
  readonly key?: string;
  /** `Equal` (the default) or `Exists`. */
  readonly operator?: string;
  readonly value?: string;
  /** Empty tolerates every effect. */
  readonly effect?: string;
  readonly tolerationSeconds?: number;
}

export interface NodeSelectorRequirement {
  readonly key: string;
  /** `In`, `NotIn`, `Exists`, `DoesNotExist`, `Gt`, `Lt`. */
  readonly operator: string;
  readonly values?: readonly string[];
}

/** One term of required node affinity: its expressions and fields are ANDed. */
export interface NodeSelectorTerm {
  readonly matchExpressions?: readonly NodeSelectorRequirement[];
  /** Only `metadata.name` is a supported field, as upstream. */
  readonly matchFields?: readonly NodeSelectorRequirement[];
}

/** A weighted preference (1–100) for nodes matching `preference`. */
export interface PreferredSchedulingTerm {
  readonly weight: number;
  readonly preference: NodeSelectorTerm;
}

export interface Condition {
  readonly type: string;
  readonly status: string;
}

/** The parts of a Node the scheduler reads (a `V1Node` of @kubernetes/client-node fits). */
export interface SchedulingNode {
  readonly metadata?: { readonly name?: string; readonly labels?: Labels };
  readonly spec?: { readonly unschedulable?: boolean; readonly taints?: readonly Taint[] };
  readonly status?: {
    /** `pods` is the capacity in pods (a quantity such as `"110"`). */
    readonly allocatable?: Readonly<Record<string, string | number>>;
    readonly conditions?: readonly Condition[];
  };
}

/** The parts of a Pod the scheduler reads (a `V1Pod` of @kubernetes/client-node fits). */
export interface SchedulingPod {
  readonly metadata?: { readonly name?: string; readonly namespace?: string };
  readonly spec?: {
    readonly nodeName?: string;
    readonly nodeSelector?: Labels;
    readonly tolerations?: readonly Toleration[];
    readonly affinity?: {
      readonly nodeAffinity?: {
        readonly requiredDuringSchedulingIgnoredDuringExecution?: {
          readonly nodeSelectorTerms?: readonly NodeSelectorTerm[];
        };
        readonly preferredDuringSchedulingIgnoredDuringExecution?: readonly PreferredSchedulingTerm[];
      };
    };
  };
  readonly status?: { readonly phase?: string };
}

/** Taint keys the control plane sets (node lifecycle controller, `kubectl cordon`). */
export const TAINT_KEYS = {
  unschedulable: 'node.kubernetes.io/unschedulable',
  notReady: 'node.kubernetes.io/not-ready',
} as const;

/** The scheduler's own words for each filter, so messages match `kubectl describe pod`. */
export const REASONS = {
  unschedulable: 'node(s) were unschedulable',
  affinity: "node(s) didn't match Pod's node affinity/selector",
  tooManyPods: 'Too many pods',
} as const;

/** The untolerated-taint reason for one taint, e.g. `node(s) had untolerated taint {dedicated: gpu}`. */
export function untoleratedTaintReason(taint: Taint): string {
  return `node(s) had untolerated taint {${taint.key}: ${taint.value ?? ''}}`;
}

/** Whether one toleration tolerates one taint (core/v1 `Toleration.ToleratesTaint`). */
export function toleratesTaint(toleration: Toleration, taint: Taint): boolean {
  if (toleration.effect && toleration.effect !== taint.effect) return false;
  if (toleration.key && toleration.key !== taint.key) return false;
  const operator = toleration.operator ?? 'Equal';
  if (operator === 'Exists') return true;
  if (operator === 'Equal' || operator === '') return (toleration.value ?? '') === (taint.value ?? '');
  return false;
}

/** Whether any of the tolerations tolerates the taint. */
export function isTolerated(taint: Taint, tolerations: readonly Toleration[] | undefined): boolean {
  return (tolerations ?? []).some((toleration) => toleratesTaint(toleration, taint));
}

/** Whether the node's Ready condition is True. A node with no Ready condition is not ready. */
export function isNodeReady(node: SchedulingNode): boolean {
  return (node.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
}

/**
 * The taints the scheduler sees. A node that is not Ready gets `node.kubernetes.io/not-ready:NoSchedule`
 * from the node lifecycle controller (TaintNodesByCondition); the simulator has no such controller, so
 * the taint is implied here unless the node already carries it.
 */
export function effectiveTaints(node: SchedulingNode): readonly Taint[] {
  const taints = node.spec?.taints ?? [];
  if (isNodeReady(node) || taints.some((t) => t.key === TAINT_KEYS.notReady && t.effect === 'NoSchedule')) {
    return taints;
  }
  return [...taints, { key: TAINT_KEYS.notReady, effect: 'NoSchedule' }];
}

/**
 * Whether `spec.unschedulable` (cordon) keeps the pod off the node. Pods that tolerate
 * `node.kubernetes.io/unschedulable:NoSchedule` (DaemonSet pods do) ignore it.
 */
export function isBlockedByCordon(pod: SchedulingPod, node: SchedulingNode): boolean {
  if (node.spec?.unschedulable !== true) return false;
  return !isTolerated({ key: TAINT_KEYS.unschedulable, effect: 'NoSchedule' }, pod.spec?.tolerations);
}

/** The first NoSchedule/NoExecute taint the pod does not tolerate, as the TaintToleration filter reports it. */
export function firstUntoleratedTaint(pod: SchedulingPod, node: SchedulingNode): Taint | undefined {
  return effectiveTaints(node).find(
    (taint) =>
      (taint.effect === 'NoSchedule' || taint.effect === 'NoExecute') && !isTolerated(taint, pod.spec?.tolerations),
  );
}

/** Whether every `nodeSelector` label is on the node with the same value. */
export function matchesNodeSelector(pod: SchedulingPod, node: SchedulingNode): boolean {
  const labels = node.metadata?.labels ?? {};
  return Object.entries(pod.spec?.nodeSelector ?? {}).every(([key, value]) => labels[key] === value);
}

function compareAsInteger(actual: string | undefined, values: readonly string[] | undefined, sign: 1 | -1): boolean {
  if (actual === undefined || values?.length !== 1) return false;
  const left = Number(actual);
  const right = Number(values[0]);
  if (!Number.isInteger(left) || !Number.isInteger(right)) return false;
  return sign * (left - right) > 0;
}

/** One node selector requirement against a value (`undefined` when the label is absent). */
export function matchesRequirementValue(requirement: NodeSelectorRequirement, actual: string | undefined): boolean {
  const values = requirement.values ?? [];
  switch (requirement.operator) {
    case 'In':
      return actual !== undefined && values.includes(actual);
    case 'NotIn':
      return actual === undefined || !values.includes(actual);
    case 'Exists':
      return actual !== undefined;
    case 'DoesNotExist':
      return actual === undefined;
    case 'Gt':
      return compareAsInteger(actual, requirement.values, 1);
    case 'Lt':
      return compareAsInteger(actual, requirement.values, -1);
    default:
      return false;
  }
}

/** One term: all expressions on labels and all fields (only `metadata.name`) must match. An empty term matches nothing. */
export function matchesNodeSelectorTerm(term: NodeSelectorTerm, node: SchedulingNode): boolean {
  const expressions = term.matchExpressions ?? [];
  const fields = term.matchFields ?? [];
  if (expressions.length === 0 && fields.length === 0) return false;
  const labels = node.metadata?.labels ?? {};
  const labelsMatch = expressions.every((e) => matchesRequirementValue(e, labels[e.key]));
  const fieldsMatch = fields.every((f) => f.key === 'metadata.name' && matchesRequirementValue(f, node.metadata?.name));
  return labelsMatch && fieldsMatch;
}

/** Required node affinity: terms are ORed. No affinity matches every node; an empty term list matches none. */
export function matchesRequiredNodeAffinity(pod: SchedulingPod, node: SchedulingNode): boolean {
  const required = pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  if (required === undefined) return true;
  return (required.nodeSelectorTerms ?? []).some((term) => matchesNodeSelectorTerm(term, node));
}

/**
 * The sum of the weights of the pod's preferred node-affinity terms that the node matches: the
 * NodeAffinity score before normalisation. Scoring decides only among nodes that fit.
 */
export function preferredAffinityScore(pod: SchedulingPod, node: SchedulingNode): number {
  const preferred = pod.spec?.affinity?.nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? [];
  return preferred.reduce((sum, term) => sum + (matchesNodeSelectorTerm(term.preference, node) ? term.weight : 0), 0);
}

/** Whether the pod counts against a node's capacity: the scheduler ignores Succeeded and Failed pods. */
export function occupiesNode(pod: SchedulingPod): boolean {
  const phase = pod.status?.phase;
  return phase !== 'Succeeded' && phase !== 'Failed';
}

/**
 * The node's capacity in pods, from `status.allocatable.pods`. Absent or unparsable counts as 0,
 * as upstream (a node that reports no pod capacity takes no pods).
 */
export function podCapacity(node: SchedulingNode): number {
  const raw = node.status?.allocatable?.pods;
  const value = typeof raw === 'number' ? raw : Number(raw ?? Number.NaN);
  return Number.isInteger(value) && value > 0 ? value : 0;
}

/** Whether one more pod fits next to `podsOnNode` (terminal pods do not count). */
export function hasPodCapacity(node: SchedulingNode, podsOnNode: readonly SchedulingPod[]): boolean {
  return podsOnNode.filter(occupiesNode).length + 1 <= podCapacity(node);
}

/**
 * Why the scheduler would not place `pod` on `node`, in its words; empty when the pod fits.
 * Reasons are in filter order; the scheduler reports the first one for the node.
 */
export function whyNot(pod: SchedulingPod, node: SchedulingNode, podsOnNode: readonly SchedulingPod[]): string[] {
  const reasons: string[] = [];
  if (isBlockedByCordon(pod, node)) reasons.push(REASONS.unschedulable);
  const taint = firstUntoleratedTaint(pod, node);
  if (taint) reasons.push(untoleratedTaintReason(taint));
  if (!matchesNodeSelector(pod, node) || !matchesRequiredNodeAffinity(pod, node)) reasons.push(REASONS.affinity);
  if (!hasPodCapacity(node, podsOnNode)) reasons.push(REASONS.tooManyPods);
  return reasons;
}

/** Whether the pod fits the node. */
export function fits(pod: SchedulingPod, node: SchedulingNode, podsOnNode: readonly SchedulingPod[]): boolean {
  return whyNot(pod, node, podsOnNode).length === 0;
}

function histogram(reasons: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const reason of reasons) counts.set(reason, (counts.get(reason) ?? 0) + 1);
  // Upstream sorts the "<count> <reason>" strings themselves, so the order is lexicographic.
  return [...counts]
    .map(([reason, count]) => `${count} ${reason}`)
    .sort()
    .join(', ');
}

/**
 * The FailedScheduling message for a pod no node takes, e.g. `0/3 nodes are available: 1 Too many
 * pods, 2 node(s) were unschedulable. preemption: …`. `firstReasons` holds each node's first reason.
 * Preemption is worded for a cluster without priorities: only a full node could free room.
 */
export function unschedulableMessage(firstReasons: readonly string[]): string {
  const total = firstReasons.length;
  const preemption = firstReasons.map((reason) =>
    reason === REASONS.tooManyPods
      ? 'No preemption victims found for incoming pod'
      : 'Preemption is not helpful for scheduling',
  );
  if (total === 0) return 'no nodes available to schedule pods';
  return `0/${total} nodes are available: ${histogram(firstReasons)}. preemption: 0/${total} nodes are available: ${histogram(preemption)}.`;
}

/** Where a pod could go: the fitting nodes, best first, or the reason none fits. */
export interface Placement<N extends SchedulingNode> {
  /**
   * Fitting nodes, best first: highest preferred-affinity score, then fewest occupying pods, then name
   * (the simulator binds to the first). kube-scheduler weighs more scores; these two decide here.
   */
  readonly fitting: readonly N[];
  /** Each non-fitting node's first reason, by node name. */
  readonly reasons: ReadonlyMap<string, string>;
  /** The FailedScheduling message when nothing fits. */
  readonly message?: string;
}

/** Evaluates every node for the pod. `podsByNode` holds the pods bound to each node, by node name. */
export function placePod<N extends SchedulingNode>(
  pod: SchedulingPod,
  nodes: readonly N[],
  podsByNode: ReadonlyMap<string, readonly SchedulingPod[]>,
): Placement<N> {
  const nameOf = (node: N): string => node.metadata?.name ?? '';
  const load = (node: N): number => (podsByNode.get(nameOf(node)) ?? []).filter(occupiesNode).length;
  const reasons = new Map<string, string>();
  const fitting: N[] = [];
  for (const node of nodes) {
    const [first] = whyNot(pod, node, podsByNode.get(nameOf(node)) ?? []);
    if (first === undefined) fitting.push(node);
    else reasons.set(nameOf(node), first);
  }
  const score = (node: N): number => preferredAffinityScore(pod, node);
  fitting.sort((a, b) => score(b) - score(a) || load(a) - load(b) || nameOf(a).localeCompare(nameOf(b)));
  if (fitting.length > 0) return { fitting, reasons };
  return { fitting, reasons, message: unschedulableMessage([...reasons.values()]) };
}
