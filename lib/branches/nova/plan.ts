/**
 * The Nova part of `drainbridge plan`: which servers would be live-migrated, which stay as blockers,
 * and whether the other enabled, up compute hosts have room for them (Placement inventories minus
 * usages, with allocation ratios and reserved amounts). Reads only; changes nothing.
 */

import type { NovaClient } from '../../clients/openstack/nova.ts';
import type { PlacementClient, ProviderCapacity } from '../../clients/openstack/placement.ts';
import type { Blocker, BranchPlan } from '../../model/plan.ts';
import { type CapacityVerdict, checkCapacity, type Demand } from './capacity.ts';
import { DEFAULT_NOVA_OPTIONS, type NovaEvacuationOptions, type ObservedServer } from './model.ts';
import { dispositionOf, serverItem } from './planner.ts';

export interface NovaPlan extends BranchPlan {
  readonly host: string;
  /** Capacity check of the target hosts; absent when there is nothing to move. */
  readonly capacity?: CapacityVerdict & { readonly targets: readonly string[] };
}

export interface NovaPlanDeps {
  readonly nova: NovaClient;
  readonly placement: PlacementClient;
  readonly options?: Partial<NovaEvacuationOptions>;
}

async function targetCapacities(deps: NovaPlanDeps, sourceHost: string): Promise<ProviderCapacity[]> {
  const services = await deps.nova.listComputeServices();
  const usable = new Set(
    services.filter((s) => s.host !== sourceHost && s.status === 'enabled' && s.state === 'up').map((s) => s.host),
  );
  const hypervisors = (await deps.nova.listHypervisors()).filter((h) => usable.has(h.host));
  const capacities: ProviderCapacity[] = [];
  for (const hypervisor of hypervisors) {
    capacities.push(await deps.placement.capacityOf({ uuid: hypervisor.id, name: hypervisor.host }));
  }
  return capacities;
}

function capacityBlockers(verdict: CapacityVerdict, targets: readonly string[]): Blocker[] {
  if (verdict.fits) return [];
  if (targets.length === 0) {
    return [
      { code: 'InsufficientCapacity', reason: 'no other nova-compute host is enabled and up to take the servers' },
    ];
  }
  return verdict.unplaced.map((d) => ({
    code: 'InsufficientCapacity' as const,
    reason: `server ${d.name} (${d.id}) needs ${Object.entries(d.resources)
      .map(([rc, n]) => `${rc}=${n}`)
      .join(', ')}; no enabled host among ${targets.join(', ')} has that much free`,
    item: serverItem(d.id, d.name),
  }));
}

/** A host without a nova-compute service: `plan` reports it and an evacuation fails on it, in these words. */
export const noComputeService = (host: string): Blocker => ({
  code: 'NoComputeService',
  reason: `Nova has no nova-compute service on host "${host}"`,
});

/**
 * The codes of a host's plan that refuse its evacuation before its nova-compute service is disabled
 * (evacuate.ts): nothing could leave the host, so nothing is done to it.
 */
export const REFUSING_CODES: ReadonlySet<string> = new Set(['NoComputeService', 'InsufficientCapacity']);

/** Plans the Nova branch for one host. A host without a nova-compute service is a blocker here (the pass fails on it). */
export async function planNovaHost(deps: NovaPlanDeps, host: string): Promise<NovaPlan> {
  const options = { ...DEFAULT_NOVA_OPTIONS, ...deps.options };
  const [service] = await deps.nova.listComputeServices(host);
  if (!service) return { branch: 'nova', host, toMove: [], skipped: [], blockers: [noComputeService(host)] };
  const servers: ObservedServer[] = await deps.nova.listServersOnHost(host);
  const toMove: ObservedServer[] = [];
  const blockers: Blocker[] = [];
  for (const server of servers) {
    const disposition = dispositionOf({ ...server, taskState: null }, options);
    if ('blocker' in disposition) blockers.push(disposition.blocker);
    else toMove.push(server);
  }
  const items = toMove.map((s) => serverItem(s.id, s.name));
  if (toMove.length === 0) return { branch: 'nova', host, toMove: items, skipped: [], blockers };
  const demands: Demand[] = [];
  for (const server of toMove) {
    demands.push({ id: server.id, name: server.name, resources: await deps.placement.allocationsOf(server.id) });
  }
  const capacities = await targetCapacities(deps, host);
  const targets = capacities.map((c) => c.provider.name);
  const verdict = checkCapacity(demands, capacities);
  return {
    branch: 'nova',
    host,
    toMove: items,
    skipped: [],
    blockers: [...blockers, ...capacityBlockers(verdict, targets)],
    capacity: { ...verdict, targets },
  };
}

/** The blockers of `host`'s plan that refuse its evacuation (REFUSING_CODES): the Nova pass's `refusal`. */
export async function refusalOf(deps: NovaPlanDeps, host: string): Promise<Blocker[]> {
  return (await planNovaHost(deps, host)).blockers.filter((b) => REFUSING_CODES.has(b.code));
}
