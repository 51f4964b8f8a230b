/**
 * Fault injection (issue 24, found by the soak): requests that end before they ever hold their node —
 * a window request still waiting when its window closes, a cordon request whose cordon a person lifts
 * while it waits. Their Evacuate ends without failing, and before this their record showed no end at all
 * (`kubectl get evacuations` listed them waiting for ever, and they never expired). Each record must
 * say how and why it ended, and the request must leave the admission line.
 */
import assert from 'node:assert/strict';
import { describe } from 'node:test';
import { type EvacuationObject, evacuationName } from '../../lib/clients/kube/paths.ts';
import { isSlotWait } from '../../lib/errors/registry.ts';
import { windowRequester } from '../../lib/model/window.ts';
import { readLedger } from '../../lib/node/ledger.ts';
import { waitUntil } from '../support/wait.ts';
import { evacuate, type FaultWorld, IDLE_NODES_SCENARIO, scenario } from './harness.ts';

const NODES = { group: '', resource: 'nodes' };
const LEASES = { group: 'coordination.k8s.io', resource: 'leases' };
const EVACUATIONS = { group: 'drainbridge.io', resource: 'evacuations' };

const recordOf = (w: FaultWorld, requestId: string) =>
  w.sim.store.get(EVACUATIONS, undefined, evacuationName(requestId)) as EvacuationObject | undefined;

/** Whether `requestId` still has a place on the admission Lease (its annotations name it). */
const inLine = (w: FaultWorld, requestId: string) =>
  JSON.stringify(w.sim.store.get(LEASES, 'drainbridge', 'drainbridge-admission')?.metadata.annotations ?? {}).includes(
    requestId,
  );

/** node-1 held by req-node-1 (the one slot), then `requestId` for node-2 told to wait at least once. */
async function secondWaits(w: FaultWorld, requestId: string, overrides: Parameters<typeof evacuate>[2]) {
  const first = await evacuate(w, 'node-1');
  await waitUntil('node-1 is held', () =>
    Object.hasOwn(readLedger(w.sim.store.get(NODES, undefined, 'node-1') as never).holds, 'req-node-1'),
  );
  const second = await evacuate(w, 'node-2', { requestId, ...overrides });
  await waitUntil(`${requestId} waits for a slot`, () =>
    w.taskCalls.some(
      (c) => isSlotWait(c.error?.name) && w.runtime.executionsFor(requestId).some((e) => e.id === c.executionId),
    ),
  );
  return { first, second };
}

/** The outcome of the last execution of `execution`'s chain (a long wait for a slot continues as new). */
async function untilChainEnds(w: FaultWorld, execution: Awaited<ReturnType<typeof evacuate>>) {
  return (await w.runtime.chainOf(execution)).outcome;
}

function assertEnded(w: FaultWorld, requestId: string, outcome: string, why: RegExp): void {
  const status = recordOf(w, requestId)?.status;
  assert.ok(status, `${requestId} has a record`);
  assert.equal(status.outcome, outcome, `its record says how it ended: ${JSON.stringify(status)}`);
  assert.ok(status.endedAt && Number.isFinite(Date.parse(status.endedAt)), 'and when');
  assert.match(status.outcomeReason ?? '', why);
  assert.equal(recordOf(w, requestId)?.metadata.labels?.['drainbridge.io/ended'], 'true', 'it expires as ended');
  assert.equal(inLine(w, requestId), false, `${requestId} left the admission line`);
  const node2 = readLedger(w.sim.store.get(NODES, undefined, 'node-2') as never);
  assert.equal(Object.hasOwn(node2.holds, requestId), false, 'it never held node-2');
}

describe('fault injection: requests that end before they hold their node say so on their record', () => {
  scenario(
    'a window request still waiting when its window closes: not-started',
    { cluster: IDLE_NODES_SCENARIO },
    async (w) => {
      const opensAt = w.sim.clock.now();
      const window = {
        name: 'short',
        opensAt: new Date(opensAt).toISOString(),
        // Simulated time runs 300× real: the window closes within a second of real time.
        closesAt: new Date(opensAt + 120_000).toISOString(),
        maxNodes: 2,
        endsOn: 'operator' as const,
      };
      const requestId = 'window-node-2';
      const { first, second } = await secondWaits(w, requestId, {
        requester: windowRequester('short'),
        origin: 'schedule',
        window,
      });
      const outcome = await untilChainEnds(w, second);
      assert.equal(outcome.ok, true, 'the request ends without failing (it is not started)');
      assert.ok(w.sim.clock.now() >= Date.parse(window.closesAt), 'it ended once the window closed');
      assertEnded(w, requestId, 'not-started', /window short closed .* it is not started/);
      first.abort();
    },
  );

  scenario(
    'a cordon request for a node no longer cordoned when it reaches admission: withdrawn',
    { cluster: IDLE_NODES_SCENARIO },
    async (w) => {
      const requestId = 'cordon-node-2';
      // The cordon that asked for it was lifted before the request reached admission (node-2 is not
      // cordoned): admission drops it, and its Maintenance Ended may never come (a leader restarted).
      const second = await evacuate(w, 'node-2', { requestId, origin: 'cordon' });
      const outcome = await untilChainEnds(w, second);
      assert.equal(outcome.ok, true, 'the request ends without failing (its cordon was lifted)');
      assertEnded(w, requestId, 'withdrawn', /no longer cordoned/);
    },
  );
});
