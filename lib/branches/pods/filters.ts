/**
 * kubectl drain's pod filters (k8s.io/kubectl/pkg/drain/filters.go), as small pure functions with the
 * same order, the same short-circuit and the same wording, so that drainbridge refuses exactly what
 * `kubectl drain` refuses. A filter failure is data (verdict `Error`), grouped by message like kubectl.
 * drainbridge's own filters (branch-filters.ts) have the same shape and join through `makeFilters`.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { BlockerCode } from '../../model/plan.ts';
import type { DrainOptions } from '../../model/request.ts';

/** kubectl's messages, verbatim (kubectl prefixes "cannot delete " to errors that lack it). */
export const MESSAGES = Object.freeze({
  daemonSetFatal: 'DaemonSet-managed Pods (use --ignore-daemonsets to ignore)',
  daemonSetWarning: 'ignoring DaemonSet-managed Pods',
  localStorageFatal: 'Pods with local storage (use --delete-emptydir-data to override)',
  localStorageWarning: 'deleting Pods with local storage',
  unmanagedFatal: 'cannot delete Pods that declare no controller (use --force to override)',
  unmanagedWarning: 'deleting Pods that declare no controller',
});

/** The annotation the kubelet puts on mirror pods of static pods (`corev1.MirrorPodAnnotationKey`). */
export const MIRROR_POD_ANNOTATION = 'kubernetes.io/config.mirror';

/** kubectl's PodDeleteStatus reasons. */
export type Verdict = 'Okay' | 'Skip' | 'Warning' | 'Error';

export interface PodDeleteStatus {
  /** Whether the pod is to be evicted (deleted with `disableEviction`). */
  readonly delete: boolean;
  readonly verdict: Verdict;
  readonly message: string;
  /** For `Error`: the blocker code drainbridge reports. */
  readonly code?: BlockerCode;
  /**
   * Set by drainbridge's filters (branch-filters.ts) on a pod that is not this branch's to move: a
   * KubeVirt launcher pod (its VM's branch moves it) or a pod of the other pod branch.
   */
  readonly handOff?: 'vm-branch' | 'other-pod-branch';
}

/** What a filter may look at besides the pod. */
export interface FilterContext {
  readonly options: DrainOptions;
  readonly now: Date;
  /**
   * Whether the DaemonSet `namespace/name` exists: true, false (404), or an error message when the
   * lookup failed otherwise. Looked up by the caller before filtering, so filtering stays pure.
   */
  readonly daemonSetExists: (namespace: string, name: string) => boolean | string;
}

export type PodFilter = (pod: V1Pod, context: FilterContext) => PodDeleteStatus;

export const OKAY: PodDeleteStatus = Object.freeze({ delete: true, verdict: 'Okay', message: '' });
const SKIP: PodDeleteStatus = Object.freeze({ delete: false, verdict: 'Skip', message: '' });

function warning(remove: boolean, message: string): PodDeleteStatus {
  return { delete: remove, verdict: 'Warning', message };
}

function failure(message: string, code: BlockerCode): PodDeleteStatus {
  return { delete: false, verdict: 'Error', message, code };
}

/** The owner reference with `controller: true` (`metav1.GetControllerOf`). */
export function controllerOf(pod: V1Pod): { kind: string; name: string; uid: string } | undefined {
  const ref = pod.metadata?.ownerReferences?.find((owner) => owner.controller === true);
  return ref ? { kind: ref.kind, name: ref.name, uid: ref.uid } : undefined;
}

/** Succeeded or Failed: kubectl lets every filter pass finished pods. */
export function isFinished(pod: V1Pod): boolean {
  return pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
}

export function hasLocalStorage(pod: V1Pod): boolean {
  return (pod.spec?.volumes ?? []).some((volume) => volume.emptyDir !== undefined && volume.emptyDir !== null);
}

export function isMirrorPod(pod: V1Pod): boolean {
  return Object.hasOwn(pod.metadata?.annotations ?? {}, MIRROR_POD_ANNOTATION);
}

export function deletionTime(pod: V1Pod): number | undefined {
  const stamp: unknown = pod.metadata?.deletionTimestamp;
  if (stamp instanceof Date) return stamp.getTime();
  if (typeof stamp === 'string') return Date.parse(stamp);
  return undefined;
}

/**
 * kubectl's `shouldSkipPod`: the pod has been terminating for longer than skip-wait-for-delete-timeout
 * (whole seconds, strictly greater); 0 never skips.
 */
export function isStuckTerminating(pod: V1Pod, timeoutSeconds: number, now: Date): boolean {
  const deletedAt = deletionTime(pod);
  if (timeoutSeconds <= 0 || deletedAt === undefined) return false;
  return Math.trunc((now.getTime() - deletedAt) / 1000) > timeoutSeconds;
}

export const skipDeletedFilter: PodFilter = (pod, { options, now }) =>
  isStuckTerminating(pod, options.skipWaitForDeleteTimeoutSeconds, now) ? SKIP : OKAY;

export const daemonSetFilter: PodFilter = (pod, { options, daemonSetExists }) => {
  const controller = controllerOf(pod);
  if (controller?.kind !== 'DaemonSet' || isFinished(pod)) return OKAY;
  const exists = daemonSetExists(pod.metadata?.namespace ?? '', controller.name);
  if (exists !== true) {
    // As kubectl: the lookup error's text is the message; an orphan (404) goes with --force.
    const notFound = `daemonsets.apps "${controller.name}" not found`;
    if (exists === false && options.force) return warning(true, notFound);
    return exists === false ? failure(notFound, 'OrphanedDaemonSetPod') : failure(exists, 'Other');
  }
  if (!options.ignoreDaemonSets) return failure(MESSAGES.daemonSetFatal, 'DaemonSetPod');
  return warning(false, MESSAGES.daemonSetWarning);
};

export const mirrorPodFilter: PodFilter = (pod) => (isMirrorPod(pod) ? SKIP : OKAY);

export const localStorageFilter: PodFilter = (pod, { options }) => {
  if (!hasLocalStorage(pod) || isFinished(pod)) return OKAY;
  if (!options.deleteEmptyDirData) return failure(MESSAGES.localStorageFatal, 'EmptyDirData');
  return warning(true, MESSAGES.localStorageWarning);
};

export const unreplicatedFilter: PodFilter = (pod, { options }) => {
  if (isFinished(pod) || controllerOf(pod) !== undefined) return OKAY;
  if (options.force) return warning(true, MESSAGES.unmanagedWarning);
  return failure(MESSAGES.unmanagedFatal, 'BarePod');
};

/** kubectl's `makeFilters()` order. */
export const KUBECTL_FILTERS: readonly PodFilter[] = Object.freeze([
  skipDeletedFilter,
  daemonSetFilter,
  mirrorPodFilter,
  localStorageFilter,
  unreplicatedFilter,
]);

/**
 * kubectl's `makeFilters()` with drainbridge's filters joined in. kubectl appends its
 * `AdditionalFilters` after its own; drainbridge's go first instead, because they decide whose pod it
 * is at all (like the pod selector, which narrows kubectl's list before any filter): a launcher pod
 * with emptyDir volumes is the VM branch's, not an emptyDir refusal of the pod branch.
 */
export function makeFilters(branchFilters: readonly PodFilter[] = []): readonly PodFilter[] {
  return [...branchFilters, ...KUBECTL_FILTERS];
}

/**
 * Runs the filters in order; the first status that does not delete stops (kubectl's short-circuit),
 * otherwise the last filter's status stands (so an earlier warning can be dropped, as in kubectl).
 */
export function filterPod(pod: V1Pod, context: FilterContext, filters = KUBECTL_FILTERS): PodDeleteStatus {
  let status = OKAY;
  for (const filter of filters) {
    status = filter(pod, context);
    if (!status.delete) break;
  }
  return status;
}

/** kubectl's error line: messages not starting with "cannot delete" get the prefix. */
export function errorLine(message: string, podKeys: readonly string[]): string {
  const text = message === '' ? 'unexpected error' : message;
  const prefixed = text.toLowerCase().startsWith('cannot delete') ? text : `cannot delete ${text}`;
  return `${prefixed}: ${podKeys.join(', ')}`;
}

/** kubectl's warning line: `message: ns/a, ns/b`. */
export function warningLine(message: string, podKeys: readonly string[]): string {
  return `${message}: ${podKeys.join(', ')}`;
}
