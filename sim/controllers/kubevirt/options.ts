/**
 * How the simulated KubeVirt is configured: the KubeVirt CR written at install, and the durations of
 * the steps real KubeVirt spends on a live migration (target preparation, memory transfer, abort).
 * Times are simulated milliseconds; the store's Clock scales them by `--speed`.
 */

export interface KubeVirtTimings {
  /** Handed-off migration → `TargetReady` (virt-handler prepares the target domain). Default 1000. */
  readonly targetPreparationMs?: number;
  /** `TargetReady` → `Running` (the source starts the transfer). Default 500. */
  readonly migrationStartMs?: number;
  /** Memory transfer time: this base plus `transferMsPerGiB` per GiB of guest memory. Default 2000. */
  readonly transferBaseMs?: number;
  /** Default 1000 (a 2 GiB VMI transfers in 4 s). */
  readonly transferMsPerGiB?: number;
  /** An abort (deleted migration) takes this long once virt-handler sees it. Default 500. */
  readonly abortMs?: number;
  /**
   * After a successful migration the source launcher pod keeps running this long before it exits
   * (Completed): virt-handler on the source cleans up the migrated domain first. Default 2000.
   */
  readonly sourceLauncherExitMs?: number;
  /** A target pod that stays unschedulable this long is deleted (KubeVirt: 5 minutes). */
  readonly unschedulableTargetTimeoutMs?: number;
  /** A target pod Pending for any reason this long is deleted (KubeVirt: 15 minutes). */
  readonly pendingTargetTimeoutMs?: number;
}

export type ResolvedTimings = Required<KubeVirtTimings>;

export const DEFAULT_TIMINGS: ResolvedTimings = {
  targetPreparationMs: 1000,
  migrationStartMs: 500,
  transferBaseMs: 2000,
  transferMsPerGiB: 1000,
  abortMs: 500,
  sourceLauncherExitMs: 2000,
  unschedulableTargetTimeoutMs: 5 * 60_000,
  pendingTargetTimeoutMs: 15 * 60_000,
};

export interface KubeVirtOptions {
  /** `spec.configuration` of the KubeVirt CR created when none exists (`evictionStrategy`, `migrations`). */
  readonly configuration?: Record<string, unknown>;
  readonly timings?: KubeVirtTimings;
}

/** Fills defaults; a RangeError names a timing that is not a non-negative number. */
export function resolveTimings(timings: KubeVirtTimings = {}): ResolvedTimings {
  const resolved = { ...DEFAULT_TIMINGS };
  for (const [key, value] of Object.entries(timings) as [keyof KubeVirtTimings, number | undefined][]) {
    if (value === undefined) continue;
    if (!(key in DEFAULT_TIMINGS)) throw new RangeError(`kubevirt.timings.${key}: unknown timing`);
    if (!Number.isFinite(value) || value < 0) {
      throw new RangeError(`kubevirt.timings.${key}: must be a non-negative number, got ${value}`);
    }
    resolved[key] = value;
  }
  return resolved;
}
