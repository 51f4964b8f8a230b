/**
 * One safety decision for Nova (issue 25): what `drainbridge plan` reports as blocking a host —
 * NoComputeService, InsufficientCapacity — refuses the evacuation's prepare too, in the same code and
 * words, before the host's nova-compute service is disabled; a host with room is prepared as before.
 * One fake Nova and Placement answer both; the pass's `refusal` is refusalOf, as createNovaBranch wires it
 * (lib/branches/nova/index.ts).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { NovaEvacuationFailed, NovaEvacuationPass } from '../../../lib/branches/nova/evacuate.ts';
import { planNovaHost, refusalOf } from '../../../lib/branches/nova/plan.ts';
import type { NovaClient, NovaHypervisor, NovaServer, NovaService } from '../../../lib/clients/openstack/nova.ts';
import type { PlacementClient, ProviderCapacity, ResourceProvider } from '../../../lib/clients/openstack/placement.ts';
import type { Blocker } from '../../../lib/model/plan.ts';
import type { ResolvedRequest } from '../../../lib/model/request.ts';
import { MemoryProgressStore } from '../../../lib/progress/memory-store.ts';

interface Cloud {
  readonly services: NovaService[];
  readonly servers: NovaServer[];
  /** Free VCPU per host (its hypervisor's inventory, nothing used). */
  readonly freeVcpus: Record<string, number>;
  /** VCPU each server holds. */
  readonly vcpus: Record<string, number>;
  readonly disabled: string[];
}

const service = (host: string): NovaService => ({
  id: `svc-${host}`,
  host,
  zone: 'nova',
  status: 'enabled',
  state: 'up',
  disabledReason: null,
  forcedDown: false,
});

function cloud(fields: Partial<Cloud> = {}): Cloud {
  return {
    services: [service('cmp-1'), service('cmp-2')],
    servers: [{ id: 'srv-a', name: 'vm-a', status: 'ACTIVE', host: 'cmp-1', taskState: null }],
    freeVcpus: { 'cmp-2': 8 },
    vcpus: { 'srv-a': 4 },
    disabled: [],
    ...fields,
  };
}

/** The calls of NovaClient and PlacementClient that planning and prepare make, answered from `state`. */
function clients(state: Cloud): { nova: NovaClient; placement: PlacementClient } {
  const nova: Pick<NovaClient, 'listComputeServices' | 'listServersOnHost' | 'listHypervisors' | 'disableService'> = {
    listComputeServices: async (host?: string) => state.services.filter((s) => host === undefined || s.host === host),
    listServersOnHost: async (host: string) => state.servers.filter((s) => s.host === host),
    listHypervisors: async (): Promise<NovaHypervisor[]> =>
      state.services.map((s) => ({
        id: `rp-${s.host}`,
        hostname: s.host,
        host: s.host,
        state: 'up',
        status: 'enabled',
      })),
    disableService: async (id: string, reason: string) => {
      state.disabled.push(id);
      const found = state.services.find((s) => s.id === id);
      assert.ok(found);
      return { ...found, status: 'disabled', disabledReason: reason };
    },
  };
  const placement: Pick<PlacementClient, 'allocationsOf' | 'capacityOf'> = {
    allocationsOf: async (id: string) => ({ VCPU: state.vcpus[id] ?? 0 }),
    capacityOf: async (provider: ResourceProvider): Promise<ProviderCapacity> => ({
      provider,
      generation: 1,
      inventories: {
        VCPU: { total: state.freeVcpus[provider.name] ?? 0, reserved: 0, allocationRatio: 1, maxUnit: 64 },
      },
      usages: { VCPU: 0 },
    }),
  };
  // Test doubles of the two HTTP clients: only the calls above are made (an unexpected one fails the test).
  return { nova: nova as NovaClient, placement: placement as PlacementClient };
}

const REQUEST: ResolvedRequest = {
  requestId: 'req-cmp-1',
  requester: 'ops',
  origin: 'manual',
  target: { nodeName: 'cmp-1' },
  reason: 'kernel',
  drain: {} as ResolvedRequest['drain'],
  nodeName: 'cmp-1',
};

/** `plan`'s blockers for cmp-1 and what the evacuation's prepare does, over the same cloud. */
async function planAndPrepare(state: Cloud): Promise<{ planned: Blocker[]; refused?: NovaEvacuationFailed }> {
  const { nova, placement } = clients(state);
  const planned = [...(await planNovaHost({ nova, placement }, 'cmp-1')).blockers];
  const pass = new NovaEvacuationPass({
    nova,
    store: new MemoryProgressStore(),
    refusal: (host) => refusalOf({ nova, placement }, host),
  });
  try {
    await pass.prepare(REQUEST);
    return { planned };
  } catch (error) {
    assert.ok(error instanceof NovaEvacuationFailed, `a NovaEvacuationFailed, got ${String(error)}`);
    return { planned, refused: error };
  }
}

const words = (blockers: readonly Blocker[]) => blockers.map((b) => `[${b.code}] ${b.reason}`);

describe('Nova: plan and the evacuation decide alike', () => {
  it("InsufficientCapacity: the evacuation is refused in the plan's words, the service left enabled", async () => {
    const state = cloud({ freeVcpus: { 'cmp-2': 2 } });
    const { planned, refused } = await planAndPrepare(state);
    assert.deepEqual(
      planned.map((b) => b.code),
      ['InsufficientCapacity'],
    );
    assert.ok(refused, 'prepare refuses');
    assert.deepEqual(words(refused.blockers), words(planned));
    assert.deepEqual(words(refused.passFailure.blockers), words(planned), 'recorded on the branch as the plan says');
    assert.match(refused.message, /nova-compute on host "cmp-1" left enabled: \[InsufficientCapacity\] server vm-a/);
    assert.deepEqual(state.disabled, [], 'nova-compute not disabled');
  });

  it('InsufficientCapacity with no other host up: the same sentence on both sides', async () => {
    const state = cloud({ services: [service('cmp-1')] });
    const { planned, refused } = await planAndPrepare(state);
    assert.deepEqual(words(planned), [
      '[InsufficientCapacity] no other nova-compute host is enabled and up to take the servers',
    ]);
    assert.deepEqual(words(refused?.blockers ?? []), words(planned));
    assert.deepEqual(state.disabled, []);
  });

  it('NoComputeService: the same code and sentence on both sides', async () => {
    const state = cloud({ services: [service('cmp-2')] });
    const { planned, refused } = await planAndPrepare(state);
    assert.deepEqual(words(planned), ['[NoComputeService] Nova has no nova-compute service on host "cmp-1"']);
    assert.deepEqual(words(refused?.blockers ?? []), words(planned));
    // A service gone between prepare and a pass: the pass fails with the same blocker.
    const { nova } = clients(state);
    const pass = new NovaEvacuationPass({ nova, store: new MemoryProgressStore() });
    const failed = await pass.prepare(REQUEST).catch((error: unknown) => error);
    assert.ok(failed instanceof NovaEvacuationFailed);
    assert.deepEqual(words(failed.blockers), words(planned));
    assert.match(failed.message, /on host "cmp-1" \(node cmp-1\): cannot evacuate it$/);
  });

  it('room elsewhere: no blocker planned, and prepare disables the service as before', async () => {
    const state = cloud();
    const { planned, refused } = await planAndPrepare(state);
    assert.deepEqual(planned, []);
    assert.equal(refused, undefined);
    assert.deepEqual(state.disabled, ['svc-cmp-1']);
  });

  it('a server that cannot be live-migrated blocks both without refusing the prepare (it waits, as in plan)', async () => {
    const state = cloud({
      servers: [{ id: 'srv-b', name: 'vm-b', status: 'ERROR', host: 'cmp-1', taskState: null }],
    });
    const { planned, refused } = await planAndPrepare(state);
    assert.deepEqual(
      planned.map((b) => b.code),
      ['NotLiveMigratable'],
    );
    assert.equal(refused, undefined, 'the pass reports it from the same planner (lib/branches/nova/planner.ts)');
  });
});
