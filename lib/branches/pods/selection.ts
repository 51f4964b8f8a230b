/**
 * Which pods on a node a drain branch moves, skips or is blocked by. Pure: the pods, the DaemonSet
 * lookups and the clock come in; one chain of filters decides — drainbridge's (branch-filters.ts:
 * KubeVirt launcher pods are never evicted by the pod drain; pods matching `infraPodSelector` are held
 * back for the `infra-pods` branch, which runs after the VM branches), then kubectl's (filters.ts).
 */
import type { V1Pod } from '@kubernetes/client-node';
import { podKey } from '../../clients/kube/paths.ts';
import { matchesAll, parseSelector } from '../../clients/kube/selectors.ts';
import type { Blocker, BlockerCode, PlanItem } from '../../model/plan.ts';
import { type PodBranch, podBranchFilters } from './branch-filters.ts';
import {
  errorLine,
  type FilterContext,
  filterPod,
  isMirrorPod,
  makeFilters,
  type PodDeleteStatus,
  warningLine,
} from './filters.ts';

export interface SelectionContext extends FilterContext {
  readonly branch: PodBranch;
  /** Label selector (string form) of infrastructure pods kept until the VM branches finish; '' for none. */
  readonly infraPodSelector: string;
  /**
   * Whether the `pods` branch also refuses for the pods it leaves to `infra-pods` (the eviction pass: a
   * drain fails on any refused pod of the node before it evicts anything, as kubectl does, not once the
   * VM branches are done). A plan reports each refusal under its own branch instead.
   */
  readonly refuseForHeldBack?: boolean;
}

/** Pods refused by one kubectl filter message, grouped as kubectl groups them. */
export interface FilterRefusal {
  readonly message: string;
  readonly code: BlockerCode;
  readonly pods: readonly V1Pod[];
  /** kubectl's line, e.g. `cannot delete Pods with local storage (…): ns/a, ns/b`. */
  readonly line: string;
}

export interface DrainSelection {
  /** Pods this branch evicts (or deletes with disableEviction), in list order. */
  readonly toEvict: readonly V1Pod[];
  readonly skipped: readonly { readonly pod: V1Pod; readonly reason: string }[];
  /** kubectl's warning lines (`ignoring DaemonSet-managed Pods: ns/a`), in first-seen order. */
  readonly warnings: readonly string[];
  /** Filter errors: while there is any, the branch evicts nothing. */
  readonly refusals: readonly FilterRefusal[];
  /** Launcher pods on the node (only reported by the `pods` branch). */
  readonly launcherPods: readonly V1Pod[];
  /** Pods left to the other branch (infra pods seen by `pods`). */
  readonly heldBack: readonly V1Pod[];
}

function skipReason(pod: V1Pod, message: string): string {
  if (message) return message;
  return isMirrorPod(pod) ? 'mirror pod of a static pod' : 'terminating longer than --skip-wait-for-delete-timeout';
}

function addTo<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/** Collects filter results the way kubectl's PodDeleteList groups them. */
class SelectionBuilder {
  readonly toEvict: V1Pod[] = [];
  readonly skipped: { pod: V1Pod; reason: string }[] = [];
  readonly launcherPods: V1Pod[] = [];
  readonly heldBack: V1Pod[] = [];
  readonly #warnings = new Map<string, string[]>();
  readonly #errors = new Map<string, { code: BlockerCode; pods: V1Pod[] }>();
  /** Only the `pods` branch reports launcher pods (once per node, not once per branch). */
  readonly #reportsLaunchers: boolean;

  constructor(branch: PodBranch) {
    this.#reportsLaunchers = branch === 'pods';
  }

  addFiltered(pod: V1Pod, status: PodDeleteStatus): void {
    if (status.handOff === 'vm-branch') {
      if (this.#reportsLaunchers) this.launcherPods.push(pod);
      return;
    }
    if (status.handOff === 'other-pod-branch') {
      this.heldBack.push(pod);
      return;
    }
    if (status.verdict === 'Warning') addTo(this.#warnings, status.message, podKey(pod));
    if (status.delete) this.toEvict.push(pod);
    else if (status.verdict === 'Error') this.addRefusalOf(pod, status);
    else this.skipped.push({ pod, reason: skipReason(pod, status.message) });
  }

  /** A pod another branch moves, whose kubectl refusal still refuses this drain (refuseForHeldBack). */
  addRefusalOf(pod: V1Pod, status: PodDeleteStatus): void {
    if (status.verdict !== 'Error') return;
    const group = this.#errors.get(status.message) ?? { code: status.code ?? 'Other', pods: [] };
    group.pods.push(pod);
    this.#errors.set(status.message, group);
  }

  build(): DrainSelection {
    const refusals = [...this.#errors].map(([message, group]) => ({
      message,
      code: group.code,
      pods: group.pods,
      line: errorLine(message, group.pods.map(podKey)),
    }));
    const warnings = [...this.#warnings].map(([message, keys]) => warningLine(message, keys));
    const { toEvict, skipped, launcherPods, heldBack } = this;
    return { toEvict, skipped, warnings, refusals, launcherPods, heldBack };
  }
}

/** Decides, for one branch, what each pod on the node is. */
export function selectPods(pods: readonly V1Pod[], context: SelectionContext): DrainSelection {
  const podSelector = parseSelector(context.options.podSelector);
  const filters = makeFilters(podBranchFilters(context.branch, parseSelector(context.infraPodSelector)));
  const builder = new SelectionBuilder(context.branch);
  for (const pod of pods) {
    // kubectl lists the node's pods with the pod selector: a pod it does not match is not seen at all.
    if (!matchesAll(podSelector, pod.metadata?.labels)) continue;
    const status = filterPod(pod, context, filters);
    builder.addFiltered(pod, status);
    if (context.refuseForHeldBack && status.handOff === 'other-pod-branch')
      builder.addRefusalOf(pod, filterPod(pod, context));
  }
  return builder.build();
}

/** The DaemonSets (namespace/name) whose existence the daemonSet filter needs: running DS-managed pods. */
export function daemonSetsToCheck(pods: readonly V1Pod[]): { namespace: string; name: string }[] {
  const seen = new Map<string, { namespace: string; name: string }>();
  for (const pod of pods) {
    const ref = pod.metadata?.ownerReferences?.find((owner) => owner.controller === true);
    if (ref?.kind !== 'DaemonSet' || pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed') continue;
    const namespace = pod.metadata?.namespace ?? '';
    seen.set(`${namespace}/${ref.name}`, { namespace, name: ref.name });
  }
  return [...seen.values()];
}

/**
 * kubectl's failure of a drain that a filter refuses (`unable to drain node "N" due to error: …`): one
 * error as it is, several in brackets as Go's errors.NewAggregate prints them.
 */
export function drainRefusedMessage(nodeName: string, refusals: readonly FilterRefusal[]): string {
  const lines = refusals.map((refusal) => refusal.line);
  const text = lines.length === 1 ? (lines[0] ?? '') : `[${lines.join(', ')}]`;
  return `unable to drain node "${nodeName}" due to error: ${text}`;
}

/** A pod as a plan item. */
export const itemOf = (pod: V1Pod): PlanItem => ({ kind: 'Pod', uid: pod.metadata?.uid ?? '', name: podKey(pod) });

/** Blockers from kubectl's filters and launcher pods (pure). */
export function selectionBlockers(selection: DrainSelection, launcherPodsBlock: boolean): Blocker[] {
  const blockers: Blocker[] = [];
  for (const refusal of selection.refusals) {
    for (const pod of refusal.pods) {
      blockers.push({ code: refusal.code, reason: errorLine(refusal.message, [podKey(pod)]), item: itemOf(pod) });
    }
  }
  if (launcherPodsBlock) {
    for (const pod of selection.launcherPods) {
      const reason = `pod ${podKey(pod)} is a KubeVirt launcher pod: its VM must be live-migrated, not evicted`;
      blockers.push({ code: 'LauncherPod', reason, item: itemOf(pod) });
    }
  }
  return blockers;
}
