/**
 * Whether the servers of a host fit on the other enabled hosts, from Placement's numbers. Pure.
 *
 * Free amount of a resource class on a provider, as Placement computes it when it allocates:
 * (total − reserved) × allocation_ratio − used. A single allocation must also be ≤ max_unit.
 * Servers are placed largest first (memory, then vCPUs) on the host with the most free memory that
 * holds every resource class they need — a first-fit-decreasing estimate, not the scheduler itself:
 * "fits" means the scheduler has room, "does not fit" means it certainly has not.
 */
import type { ProviderCapacity } from '../../clients/openstack/placement.ts';

export interface Demand {
  readonly id: string;
  readonly name: string;
  /** Resource class → amount the server holds (its Placement allocations). */
  readonly resources: Readonly<Record<string, number>>;
}

export interface CapacityVerdict {
  readonly fits: boolean;
  /** Servers no target host could take. */
  readonly unplaced: readonly Demand[];
  /** Free amount per host and resource class before placing anything. */
  readonly freeBefore: Readonly<Record<string, Readonly<Record<string, number>>>>;
}

/** Free amount per resource class of one provider. */
export function freeCapacity(capacity: ProviderCapacity): Record<string, number> {
  const free: Record<string, number> = {};
  for (const [rc, inv] of Object.entries(capacity.inventories)) {
    free[rc] = Math.floor((inv.total - inv.reserved) * inv.allocationRatio) - (capacity.usages[rc] ?? 0);
  }
  return free;
}

function fitsOn(demand: Demand, free: Record<string, number>, capacity: ProviderCapacity): boolean {
  return Object.entries(demand.resources).every(([rc, amount]) => {
    const inventory = capacity.inventories[rc];
    return inventory !== undefined && amount <= inventory.maxUnit && amount <= (free[rc] ?? 0);
  });
}

const size = (d: Demand): [number, number] => [d.resources.MEMORY_MB ?? 0, d.resources.VCPU ?? 0];

/** Places the demands on the targets (first fit decreasing) and says what does not fit. */
export function checkCapacity(demands: readonly Demand[], targets: readonly ProviderCapacity[]): CapacityVerdict {
  const free = targets.map((t) => ({ capacity: t, free: freeCapacity(t) }));
  const freeBefore = Object.fromEntries(free.map((f) => [f.capacity.provider.name, { ...f.free }]));
  const ordered = [...demands].sort((a, b) => {
    const [am, ac] = size(a);
    const [bm, bc] = size(b);
    return bm - am || bc - ac;
  });
  const unplaced: Demand[] = [];
  for (const demand of ordered) {
    const candidates = free
      .filter((f) => fitsOn(demand, f.free, f.capacity))
      .sort((a, b) => (b.free.MEMORY_MB ?? 0) - (a.free.MEMORY_MB ?? 0));
    const target = candidates[0];
    if (!target) {
      unplaced.push(demand);
      continue;
    }
    for (const [rc, amount] of Object.entries(demand.resources)) target.free[rc] = (target.free[rc] ?? 0) - amount;
  }
  return { fits: unplaced.length === 0, unplaced, freeBefore };
}
