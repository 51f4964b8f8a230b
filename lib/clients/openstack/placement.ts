/**
 * Placement, read for capacity: resource providers, their inventories (total, reserved, allocation
 * ratio) and usages, and a consumer's allocations (what a server actually holds).
 */
import type { KeystoneSession } from './keystone.ts';

/** Inventory records need 1.0; `GET /resource_providers?name=` needs 1.0; 1.17 is in every supported release. */
const PLACEMENT_MICROVERSION = 'placement 1.17';

export interface ResourceProvider {
  readonly uuid: string;
  readonly name: string;
}

export interface Inventory {
  readonly total: number;
  readonly reserved: number;
  readonly allocationRatio: number;
  readonly maxUnit: number;
}

export interface ProviderCapacity {
  readonly provider: ResourceProvider;
  readonly generation: number;
  /** Per resource class (VCPU, MEMORY_MB, DISK_GB, …). */
  readonly inventories: Readonly<Record<string, Inventory>>;
  readonly usages: Readonly<Record<string, number>>;
}

type Json = Record<string, unknown>;

export class PlacementClient {
  readonly #session: KeystoneSession;

  constructor(session: KeystoneSession) {
    this.#session = session;
  }

  async #get<T>(path: string): Promise<T> {
    const response = await this.#session.request<T>({
      service: 'placement',
      method: 'GET',
      path,
      headers: { 'OpenStack-API-Version': PLACEMENT_MICROVERSION },
    });
    return response.data;
  }

  async listProviders(): Promise<ResourceProvider[]> {
    const data = await this.#get<{ resource_providers: Json[] }>('/resource_providers');
    return data.resource_providers.map((p) => ({ uuid: String(p.uuid), name: String(p.name) }));
  }

  /** Inventories and usages of one provider. */
  async capacityOf(provider: ResourceProvider): Promise<ProviderCapacity> {
    const inv = await this.#get<{ resource_provider_generation: number; inventories: Record<string, Json> }>(
      `/resource_providers/${provider.uuid}/inventories`,
    );
    const use = await this.#get<{ usages: Record<string, number> }>(`/resource_providers/${provider.uuid}/usages`);
    const inventories: Record<string, Inventory> = {};
    for (const [rc, raw] of Object.entries(inv.inventories)) {
      inventories[rc] = {
        total: Number(raw.total ?? 0),
        reserved: Number(raw.reserved ?? 0),
        allocationRatio: Number(raw.allocation_ratio ?? 1),
        maxUnit: Number(raw.max_unit ?? raw.total ?? 0),
      };
    }
    return { provider, generation: inv.resource_provider_generation, inventories, usages: use.usages };
  }

  /** What a consumer (a server) holds, summed over providers: resource class → amount. */
  async allocationsOf(consumerUuid: string): Promise<Record<string, number>> {
    const data = await this.#get<{ allocations: Record<string, { resources?: Record<string, number> }> }>(
      `/allocations/${consumerUuid}`,
    );
    const totals: Record<string, number> = {};
    for (const holding of Object.values(data.allocations)) {
      for (const [rc, amount] of Object.entries(holding.resources ?? {})) totals[rc] = (totals[rc] ?? 0) + amount;
    }
    return totals;
  }

  /** Sets the `reserved` amount of one inventory (operators do this to hold capacity back; tests too). */
  async setReserved(provider: ResourceProvider, resourceClass: string, reserved: number): Promise<void> {
    const current = await this.#get<{ resource_provider_generation: number; inventories: Record<string, Json> }>(
      `/resource_providers/${provider.uuid}/inventories`,
    );
    const inventory = current.inventories[resourceClass];
    if (!inventory) throw new Error(`provider ${provider.name} has no ${resourceClass} inventory`);
    await this.#session.request({
      service: 'placement',
      method: 'PUT',
      path: `/resource_providers/${provider.uuid}/inventories/${resourceClass}`,
      headers: { 'OpenStack-API-Version': PLACEMENT_MICROVERSION },
      body: { ...inventory, reserved, resource_provider_generation: current.resource_provider_generation },
    });
  }
}
