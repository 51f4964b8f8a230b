import { NOTICE_PROVIDERS } from './notice.ts';
import type { WindowOccurrence } from './window.ts';

/**
 * The normalised maintenance request every source (cordon watcher, NodeMaintenance, cloud notices,
 * manual invocation, schedule rules) is turned into. The workflow only ever sees this shape.
 */

/** Where a maintenance request came from. */
export const ORIGINS = ['cordon', 'node-maintenance', ...NOTICE_PROVIDERS, 'manual', 'schedule'] as const;
export type Origin = (typeof ORIGINS)[number];

/** Cloud providers whose instance ids can name a target: every cloud whose notices drainbridge reads, and OpenStack. */
export const INSTANCE_PROVIDERS = [...NOTICE_PROVIDERS, 'openstack'] as const;
export type InstanceProvider = (typeof INSTANCE_PROVIDERS)[number];

/**
 * What to evacuate: exactly one of a node name, a node's `spec.providerID`, or a cloud instance id.
 * Resolution to a node happens in the workflow's first step (`resolveTarget`).
 */
export type Target =
  | { readonly nodeName: string }
  | { readonly providerID: string }
  | { readonly instance: { readonly provider: InstanceProvider; readonly id: string } };

/**
 * kubectl drain's options, with kubectl's defaults. Every field has the same meaning as the kubectl flag
 * of the same name (see docs/cli.md "The command line").
 */
export interface DrainOptions {
  /** `--force`: also evict pods that no controller manages. Still evicts; only `disableEviction` deletes. */
  readonly force: boolean;
  /** `--ignore-daemonsets`: skip DaemonSet-managed pods instead of refusing. */
  readonly ignoreDaemonSets: boolean;
  /** `--delete-emptydir-data`: evict pods that use emptyDir volumes (their data is lost). */
  readonly deleteEmptyDirData: boolean;
  /** `--grace-period`: seconds given to each pod; -1 uses the pod's own terminationGracePeriodSeconds. */
  readonly gracePeriodSeconds: number;
  /** `--timeout`: seconds to wait for the drain to finish; 0 waits for ever (bounded by the request deadline). */
  readonly timeoutSeconds: number;
  /** `--pod-selector`: label selector; only matching pods are drained. Empty selects all. */
  readonly podSelector: string;
  /** `--disable-eviction`: delete pods instead of evicting them, bypassing PodDisruptionBudgets. */
  readonly disableEviction: boolean;
  /** `--skip-wait-for-delete-timeout`: stop waiting for a pod whose deletionTimestamp is older than this many seconds; 0 never skips. */
  readonly skipWaitForDeleteTimeoutSeconds: number;
  /** `--chunk-size`: page size when listing pods. */
  readonly chunkSize: number;
}

/** kubectl drain's defaults (kubectl 1.32). */
export const KUBECTL_DRAIN_DEFAULTS: DrainOptions = Object.freeze({
  force: false,
  ignoreDaemonSets: false,
  deleteEmptyDirData: false,
  gracePeriodSeconds: -1,
  timeoutSeconds: 0,
  podSelector: '',
  disableEviction: false,
  skipWaitForDeleteTimeoutSeconds: 0,
  chunkSize: 500,
});

/** One maintenance request, as the workflow carries it from step to step. */
export interface MaintenanceRequest {
  /** Unique per maintenance request; the idempotency key for everything drainbridge does for it. */
  readonly requestId: string;
  /** Who asked (a user, a controller, a cloud notice id): recorded in the node's ledger. */
  readonly requester: string;
  readonly origin: Origin;
  readonly target: Target;
  readonly reason: string;
  /** Do not start before this instant (ISO 8601). */
  readonly notBefore?: string;
  /** Give up (DeadlineExceeded) after this instant (ISO 8601), leaving the safe state. */
  readonly deadline?: string;
  readonly drain: DrainOptions;
  /** The maintenance window occurrence that asked for it (origin `schedule`). */
  readonly window?: WindowOccurrence;
  /**
   * A Restore's request ended by the node agent because the notice's source stayed unreadable: since when
   * (its first unreadable read). Restore reports it (lib/workflow/unreadable-end.ts).
   */
  readonly unreadableSince?: string;
  /** A cloud notice's request: the notice's revision (a later one moves the start; lib/progress/reschedule.ts). */
  readonly revision?: NoticeRevision;
}

/** A notice's revision: the provider's own (`key`) and when the publisher saw it (`at`, ISO 8601; later wins). */
export interface NoticeRevision {
  readonly key: string;
  readonly at: string;
}

/** The node a request was resolved to, carried with the request after `resolveTarget`. */
export interface ResolvedRequest extends MaintenanceRequest {
  readonly nodeName: string;
}

/** A human-readable rendering of a target, for messages and logs. */
export function describeTarget(target: Target): string {
  if ('nodeName' in target) return `node ${target.nodeName}`;
  if ('providerID' in target) return `providerID ${target.providerID}`;
  return `${target.instance.provider} instance ${target.instance.id}`;
}
