/**
 * The floor of evacuating a node's VMs by live migration under KubeVirt's limits: each VM's migration
 * takes a known time (target pod start-up, target preparation, start, and a memory transfer
 * proportional to the guest's memory), at most `slots` run at once (min of `parallelOutboundMigrationsPerNode`
 * and `parallelMigrationsPerCluster` for one node). The floor is the makespan of the longest-first schedule
 * (each next-largest VM to the slot that frees first), and no schedule can beat max(longest, total / slots)
 * — when the two agree, the floor is exact. Pure.
 */

/** One VM's migration as the floor sees it. */
export interface MigrationJob {
  readonly key: string;
  readonly memoryGiB: number;
  /** Simulated seconds from creating the migration to the VM running on its target. */
  readonly seconds: number;
}

/** The steps' simulated seconds (the scenario's KubeVirt timings and pod start-up). */
export interface MigrationStepSeconds {
  readonly podStartupSeconds: number;
  readonly targetPreparationSeconds: number;
  readonly migrationStartSeconds: number;
  readonly transferBaseSeconds: number;
  readonly transferSecondsPerGiB: number;
}

export interface MigrationFloor {
  /** Simulated seconds of the longest-first schedule's makespan. */
  readonly seconds: number;
  /** No schedule within the limits ends earlier than this. */
  readonly lowerBoundSeconds: number;
  readonly slots: number;
  /** The schedule: per slot, the VMs in order. */
  readonly schedule: readonly (readonly string[])[];
  readonly totalSeconds: number;
  readonly longestSeconds: number;
}

/** A VM's migration time with the simulator's memory-proportional transfer. */
export function migrationSeconds(memoryGiB: number, steps: MigrationStepSeconds): number {
  return (
    steps.podStartupSeconds +
    steps.targetPreparationSeconds +
    steps.migrationStartSeconds +
    steps.transferBaseSeconds +
    steps.transferSecondsPerGiB * memoryGiB
  );
}

/** The floor of `jobs` with `slots` migrations at once (slots ≥ 1). */
export function migrationFloor(jobs: readonly MigrationJob[], slots: number): MigrationFloor {
  if (!Number.isInteger(slots) || slots < 1) throw new RangeError(`slots must be a positive integer, got ${slots}`);
  const loads = Array.from({ length: slots }, () => 0);
  const schedule: string[][] = Array.from({ length: slots }, () => []);
  const longestFirst = [...jobs].sort((a, b) => b.seconds - a.seconds || a.key.localeCompare(b.key));
  for (const job of longestFirst) {
    const slot = loads.indexOf(Math.min(...loads));
    loads[slot] = (loads[slot] ?? 0) + job.seconds;
    schedule[slot]?.push(job.key);
  }
  const totalSeconds = jobs.reduce((sum, job) => sum + job.seconds, 0);
  const longestSeconds = Math.max(0, ...jobs.map((job) => job.seconds));
  return {
    seconds: Math.max(0, ...loads),
    lowerBoundSeconds: Math.max(longestSeconds, totalSeconds / slots),
    slots,
    schedule,
    totalSeconds,
    longestSeconds,
  };
}
