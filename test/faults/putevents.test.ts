/**
 * Fault injection: PutEvents failing as EventBridge fails — whole calls (HTTP 500), entries refused inside
 * an HTTP 200 (a partial failure the SDK does not retry), and a permanent AccessDenied. Outcome events go
 * through the EventBridgePublisher and the real AWS SDK to a local PutEvents endpoint feeding the bus.
 * Transient failures are retried and the outcome arrives once; a permanent one ends the execution naming
 * it, with the node in the safe state.
 */
import assert from 'node:assert/strict';
import { after, describe } from 'node:test';
import { EventBridgePublisher } from '../../lib/bus/eventbridge-publisher.ts';
import type { InProcessBus } from '../../lib/bus/in-process-bus.ts';
import { type EventBridgeEndpoint, startEventBridgeEndpoint } from '../support/eventbridge-endpoint.ts';
import { waitUntil } from '../support/wait.ts';
import {
  evacuate,
  eventsOf,
  expectEndedWith,
  expectSucceeded,
  IDLE_NODES_SCENARIO,
  scenario,
  WORKFLOW_SCENARIO,
} from './harness.ts';

const NODES = { group: '', resource: 'nodes' };
let bus: InProcessBus | undefined;
const endpoints: EventBridgeEndpoint[] = [];
after(async () => {
  for (const endpoint of endpoints) await endpoint.close();
});

/** A fresh endpoint, and runtime options that publish through it with the real SDK. */
async function viaEventBridge() {
  const endpoint = await startEventBridgeEndpoint(() => {
    if (!bus) throw new Error('no bus yet');
    return bus;
  });
  endpoints.push(endpoint);
  const publisherFor = (created: InProcessBus) => {
    bus = created;
    return new EventBridgePublisher(endpoint.client(), 'drainbridge', {
      timeoutMs: 2_000,
      retry: { attempts: 4, baseDelayMs: 5, maxDelayMs: 20 },
    });
  };
  return { endpoint, runtime: { publisherFor } };
}

describe('fault injection: PutEvents failures', async () => {
  const partial = await viaEventBridge();
  scenario(
    'PutEvents refuses the entry (ThrottlingException in an HTTP 200) twice: retried, the outcome arrives once',
    { cluster: IDLE_NODES_SCENARIO, runtime: partial.runtime },
    async (w) => {
      partial.endpoint.refuseEntries(2);
      await expectSucceeded(w, await evacuate(w, 'node-1'));
      assert.ok(partial.endpoint.calls.filter((c) => c.refused > 0).length >= 2, 'the refusals happened');
      assert.equal(eventsOf(w, 'Evacuation Succeeded', 'req-node-1').length, 1);
    },
  );

  const failing = await viaEventBridge();
  scenario(
    'PutEvents answers HTTP 500 twice: the SDK retries, the outcome arrives once',
    { cluster: IDLE_NODES_SCENARIO, runtime: failing.runtime },
    async (w) => {
      failing.endpoint.failCalls(2);
      await expectSucceeded(w, await evacuate(w, 'node-1'));
      assert.ok(failing.endpoint.calls.filter((c) => c.status === 500).length >= 2);
    },
  );

  const midway = await viaEventBridge();
  scenario(
    'PutEvents refuses entries mid-drain (InternalFailure): progress events retried, the drain goes on',
    { cluster: WORKFLOW_SCENARIO, runtime: midway.runtime },
    async (w) => {
      for (const name of ['node-2', 'node-3']) await w.admin.patchNode(name, { spec: { unschedulable: false } });
      const execution = await evacuate(w, 'node-1');
      await waitUntil('the first outcome event', () => midway.endpoint.calls.length > 0);
      midway.endpoint.refuseEntries(3, 'InternalFailure');
      await expectSucceeded(w, execution);
    },
  );

  const denied = await viaEventBridge();
  scenario(
    'PutEvents denied for good (AccessDeniedException): the execution ends naming it; the node stays held and cordoned',
    { cluster: IDLE_NODES_SCENARIO, runtime: denied.runtime },
    async (w) => {
      denied.endpoint.denyAll();
      const execution = await evacuate(w, 'node-1');
      await expectEndedWith(execution, 'DrainbridgeError', /PutEvents .* failed: AccessDeniedException/);
      const node = w.sim.store.get(NODES, undefined, 'node-1');
      assert.equal((node?.spec as { unschedulable?: boolean } | undefined)?.unschedulable, true);
    },
  );
});
