/**
 * Fault injection: the admission Lease lost mid-admission under a limit narrower than the cluster-wide
 * one — a maintenance window's own slots, a label-selector limit. node-1's hold write stalls at the
 * server past the mutex's expiry; node-2's request (same window, same zone) takes the lost mutex and
 * decides before node-1's hold lands. node-1's admission in flight (its intent on the Lease) must count
 * against the window's and the zone's limit as it does against the cluster-wide one, or both nodes end
 * up held — the same for a spread limit per zone. The cluster-wide limit is 3 here so that only the
 * narrower limit can hold node-2 back.
 */
import assert from 'node:assert/strict';
import { describe } from 'node:test';
import { isSlotWait } from '../../lib/errors/registry.ts';
import type { WindowOccurrence } from '../../lib/model/window.ts';
import { windowRequester } from '../../lib/model/window.ts';
import { readLedger } from '../../lib/node/ledger.ts';
import { waitUntil } from '../support/wait.ts';
import { delayWrites, evacuate, type FaultWorld, IDLE_NODES_SCENARIO, scenario } from './harness.ts';

const NODES = { group: '', resource: 'nodes' };
const ZONE = 'topology.kubernetes.io/zone';

const heldNodes = (w: FaultWorld) =>
  ['node-1', 'node-2', 'node-3'].filter(
    (node) => Object.keys(readLedger(w.sim.store.get(NODES, undefined, node) as never).holds).length > 0,
  );
const admitCalls = (w: FaultWorld, requestId: string) =>
  w.taskCalls.filter(
    (c) => c.functionKey === 'admit' && w.runtime.executionsFor(requestId).some((e) => e.id === c.executionId),
  );

/**
 * node-1's hold write stalls until node-2's request has decided (admitted, or told to wait twice);
 * returns what is held once both requests ran admission.
 */
async function secondDecidesWhileFirstStalls(
  w: FaultWorld,
  overrides: (node: string) => Parameters<typeof evacuate>[2],
): Promise<string[]> {
  let second: Awaited<ReturnType<typeof evacuate>> | undefined;
  delayWrites(
    w,
    { verb: 'patch', resource: 'nodes', name: 'node-1', body: (b) => JSON.stringify(b).includes('ledger') },
    async () => {
      second = await evacuate(w, 'node-2', overrides('node-2'));
      await waitUntil('node-2 took the lost mutex and decided', () => {
        const calls = admitCalls(w, 'req-node-2');
        // Told to wait twice: each wait is a WaitForSlot round (its 10 s fallback on the simulated clock), and
        // node-1's intent must still be on the Lease when node-2 decides — it counts for two simulated
        // minutes (a stalled write longer than that is not what this scenario is about).
        return calls.some((c) => !c.error) || calls.filter((c) => isSlotWait(c.error?.name)).length >= 2;
      });
    },
  );
  const first = await evacuate(w, 'node-1', overrides('node-1'));
  await waitUntil('both requests ran admission', () => second !== undefined && admitCalls(w, 'req-node-1').length > 0);
  const held = heldNodes(w);
  first.abort();
  second?.abort();
  return held;
}

describe('fault injection: the Lease lost mid-admission, under a window, a label-selector or a spread limit', () => {
  scenario(
    "a window's one slot: never two of its nodes held",
    { cluster: IDLE_NODES_SCENARIO, env: { DRAINBRIDGE_MAX_HELD_NODES: '3' } },
    async (w) => {
      const opensAt = new Date(w.sim.clock.now());
      const window: WindowOccurrence = {
        name: 'weekly',
        opensAt: opensAt.toISOString(),
        closesAt: new Date(opensAt.getTime() + 4 * 3600_000).toISOString(),
        maxNodes: 1,
        endsOn: 'operator',
      };
      const held = await secondDecidesWhileFirstStalls(w, () => ({
        requester: windowRequester('weekly'),
        origin: 'schedule',
        window,
      }));
      assert.deepEqual(held, ['node-1'], `held now: ${held.join(', ')}`);
    },
  );

  scenario(
    'one node of zone a at a time (DRAINBRIDGE_SLOT_LIMITS): never two of its nodes held',
    {
      cluster: {
        ...IDLE_NODES_SCENARIO,
        nodes: IDLE_NODES_SCENARIO.nodes.map((node) => ({
          ...node,
          labels: { [ZONE]: node.name === 'node-3' ? 'b' : 'a' },
        })),
      },
      env: { DRAINBRIDGE_MAX_HELD_NODES: '3', DRAINBRIDGE_SLOT_LIMITS: `${ZONE}=a=1` },
    },
    async (w) => {
      const held = await secondDecidesWhileFirstStalls(w, () => ({}));
      assert.deepEqual(held, ['node-1'], `held now: ${held.join(', ')}`);
    },
  );

  scenario(
    'one node per zone (DRAINBRIDGE_SPREAD_LIMITS): never two of a zone held',
    {
      cluster: {
        ...IDLE_NODES_SCENARIO,
        nodes: IDLE_NODES_SCENARIO.nodes.map((node) => ({
          ...node,
          labels: { [ZONE]: node.name === 'node-3' ? 'b' : 'a' },
        })),
      },
      env: { DRAINBRIDGE_MAX_HELD_NODES: '3', DRAINBRIDGE_SPREAD_LIMITS: `${ZONE}=1` },
    },
    async (w) => {
      const held = await secondDecidesWhileFirstStalls(w, () => ({}));
      assert.deepEqual(held, ['node-1'], `held now: ${held.join(', ')}`);
    },
  );
});
