/**
 * Waiting in line costs nothing: a request near the front parks its task token on its place (WaitForSlot)
 * and sleeps; the watch of the admission Lease (SlotWaker, as `drainbridge run` runs it) sends the token
 * back when the slot frees. A wake-up is an optimisation: lost (no watch), the wait's fallback
 * (TimeoutSeconds) still ends in admission; sent for a request no longer waiting, it changes nothing.
 * At the simulator's real speed, so that the fallback (10 s) is far longer than a wake-up takes.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { TrackedExecution } from '../../embedded/runtime.ts';
import { SlotWaker } from '../../lib/admission/index.ts';
import { ADMISSION_LEASE, readQueue, recordAnnotations } from '../../lib/admission/records.ts';
import type { KubeHttpClient } from '../../lib/clients/kube/http/client.ts';
import { loadConfig } from '../../lib/config/index.ts';
import { createLogger } from '../../lib/log/logger.ts';
import { isHeld, readLedger } from '../../lib/node/ledger.ts';
import { connectKube } from '../../lib/sources/forwarder/kube.ts';
import { waitUntil } from '../support/wait.ts';
import { failureOf, maintenanceEnded, maintenanceRequested, startWorkflowSim, type WorkflowSim } from './harness.ts';
import { IDLE_NODES_SCENARIO } from './scenario.ts';

const NAMESPACE = 'drainbridge';

async function heldNodes(w: WorkflowSim): Promise<string[]> {
  return (await w.admin.listNodes()).filter((node) => isHeld(readLedger(node))).map((n) => n.metadata?.name ?? '');
}

async function request(w: WorkflowSim, node: string, requestId = `req-${node}`): Promise<TrackedExecution> {
  await w.runtime.put('Maintenance Requested', maintenanceRequested(node, { requestId }));
  const execution = w.runtime.executionsFor(requestId).at(-1);
  assert.ok(execution, `an Evacuate started for ${node}`);
  return execution;
}

async function succeeds(execution: TrackedExecution): Promise<void> {
  const outcome = await execution.outcome;
  assert.equal(outcome.ok, true, `${failureOf(outcome).name}: ${failureOf(outcome).message}`);
}

/** The wake-up token parked on `node`'s request's place in line, once there is one. */
async function parkedToken(w: WorkflowSim, node: string, requestId = `req-${node}`): Promise<string> {
  let token: string | undefined;
  await waitUntil(`${requestId} parks a wake-up token`, async () => {
    const lease = await w.admin.getLease(NAMESPACE, ADMISSION_LEASE);
    token = (readQueue(lease)[requestId] as { wake?: string } | undefined)?.wake;
    return token !== undefined;
  });
  return token as string;
}

describe('a request waiting in line is woken when the slot frees', () => {
  let w: WorkflowSim;
  let lean: KubeHttpClient;
  let kubeconfigText = '';
  before(async () => {
    w = await startWorkflowSim(IDLE_NODES_SCENARIO, {
      speed: 1,
      // The definitions' own waits, not the suite's 20 ms: the fallback is WaitForSlot's TimeoutSeconds (10 s).
      runtime: { retryIntervalMs: undefined },
      kubeconfigFor: async (sim, token) => {
        kubeconfigText = sim.kubeconfig(token);
        return kubeconfigText;
      },
    });
    const path = join(mkdtempSync(join(tmpdir(), 'drainbridge-wake-')), 'kubeconfig');
    writeFileSync(path, kubeconfigText);
    lean = await connectKube(loadConfig({ KUBECONFIG: path }));
  });
  after(async () => {
    lean?.close();
    await w?.stop();
  });

  /** The Lease watch as `drainbridge run` runs it, leading, once it has read the Leases. */
  async function startWaker(): Promise<SlotWaker> {
    const waker = new SlotWaker({
      client: lean,
      namespace: NAMESPACE,
      logger: createLogger('wake-up-test', 'ERROR'),
      deliver: (token) => w.runtime.executor.sendTaskSuccess(token),
      leading: () => true,
    });
    waker.start();
    await waker.leases.whenSynced();
    return waker;
  }

  it('the watch sends the parked token back as the slot frees: the Task it wakes was still waiting', async () => {
    const waker = await startWaker();
    try {
      await succeeds(await request(w, 'node-1'));
      const second = await request(w, 'node-2');
      await parkedToken(w, 'node-2');
      await w.runtime.put('Maintenance Ended', maintenanceEnded('node-1'));
      await succeeds(second);
      assert.deepEqual(await heldNodes(w), ['node-2']);
      // Found waiting: the Task woke on the token, not on its fallback (which would have left no waiter).
      assert.deepEqual(waker.delivered, { woken: 1, notWaiting: 0, failed: 0 });
    } finally {
      await waker.stop();
    }
  });

  it('a lost wake-up (nothing watches) still ends in admission through the fallback', async () => {
    const third = await request(w, 'node-3');
    const token = await parkedToken(w, 'node-3');
    await w.runtime.put('Maintenance Ended', maintenanceEnded('node-2'));
    await succeeds(third);
    assert.deepEqual(await heldNodes(w), ['node-3']);
    assert.equal(w.runtime.executor.waitingForTokens, 0, 'no Task waits for a token any more');

    // The lost wake-up arriving late, for a request no longer waiting: nothing waits with it, nothing changes.
    const callsBefore = w.taskCalls.length;
    assert.equal(w.runtime.executor.sendTaskSuccess(token), false);
    await w.runtime.settle();
    assert.equal(w.taskCalls.length, callsBefore, 'no task ran because of it');
    assert.deepEqual(await heldNodes(w), ['node-3']);
    assert.equal((await third.outcome).ok, true);
    await w.runtime.put('Maintenance Ended', maintenanceEnded('node-3'));
    await waitUntil('node-3 is released', async () => (await heldNodes(w)).length === 0);
    await w.runtime.settle();
  });

  it('an admission in flight that ends without a hold wakes nobody: the requests in line stay asleep', async () => {
    // Every locked Admit writes its intent on the Lease and removes it at its unlock, admitted or not.
    // Counted as a slot taken and freed, each such round trip woke the front of the line, whose own Admit
    // did the same again: a chain of Admits for as long as requests waited.
    const waker = await startWaker();
    try {
      await succeeds(await request(w, 'node-1', 'again-node-1'));
      const second = await request(w, 'node-2', 'again-node-2');
      await parkedToken(w, 'node-2', 'again-node-2');
      const admitsBefore = w.taskCalls.filter((c) => c.stateName === 'Admit').length;
      for (let round = 0; round < 3; round++) {
        const lease = await w.admin.getLease(NAMESPACE, ADMISSION_LEASE);
        const since = new Date().toISOString();
        const intents = { 'someone-else': { node: 'node-3', since, requester: 'someone' } };
        const annotations = lease.metadata?.annotations ?? {};
        const locked = await w.admin.replaceLease(NAMESPACE, {
          ...lease,
          metadata: { ...lease.metadata, annotations: { ...annotations, ...recordAnnotations({ intents }) } },
        });
        await w.admin.replaceLease(NAMESPACE, {
          ...locked,
          metadata: { ...locked.metadata, annotations: { ...annotations, ...recordAnnotations({ intents: {} }) } },
        });
      }
      await new Promise((resolve) => setTimeout(resolve, 1500));
      assert.deepEqual(waker.delivered, { woken: 0, notWaiting: 0, failed: 0 }, 'no slot freed, nobody woken');
      const admits = w.taskCalls.filter((c) => c.stateName === 'Admit').length;
      assert.equal(admits, admitsBefore, 'no Admit ran while nothing changed for the requests in line');
      await w.runtime.put('Maintenance Ended', maintenanceEnded('node-1', 'again-node-1'));
      await succeeds(second);
      assert.deepEqual(waker.delivered, { woken: 1, notWaiting: 0, failed: 0 }, 'the real release woke node-2');
      await w.runtime.put('Maintenance Ended', maintenanceEnded('node-2', 'again-node-2'));
      await waitUntil('node-2 is released', async () => (await heldNodes(w)).length === 0);
      await w.runtime.settle();
    } finally {
      await waker.stop();
    }
  });

  it('a request ended while it waits in line leaves the line at once: the one behind it is next', async () => {
    // A withdrawn notice's Restore wrote the tombstone, but the request kept its place until its Evacuate
    // looked again, and those behind it waited on it (soak seed 71945).
    await succeeds(await request(w, 'node-1', 'line-node-1'));
    const withdrawn = await request(w, 'node-2', 'line-node-2');
    await parkedToken(w, 'node-2', 'line-node-2');
    const behind = await request(w, 'node-3', 'line-node-3');
    await waitUntil('line-node-3 waits in line', async () => {
      const lease = await w.admin.getLease(NAMESPACE, ADMISSION_LEASE);
      return readQueue(lease)['line-node-3'] !== undefined;
    });
    const restoredAt = Date.now();
    await w.runtime.put('Maintenance Ended', maintenanceEnded('node-2', 'line-node-2'));
    await waitUntil('line-node-2 has left the line', async () => {
      const lease = await w.admin.getLease(NAMESPACE, ADMISSION_LEASE);
      return readQueue(lease)['line-node-2'] === undefined;
    });
    assert.ok(Date.now() - restoredAt < 5_000, 'left with its Restore, not at its next look (10 s or 60 s later)');
    assert.equal(readLedger(await w.admin.getNode('node-2')).released['line-node-2'] !== undefined, true);
    await w.runtime.put('Maintenance Ended', maintenanceEnded('node-1', 'line-node-1'));
    await succeeds(behind);
    assert.deepEqual(await heldNodes(w), ['node-3'], 'the request behind took the slot; node-2 was never cordoned');
    assert.equal((await withdrawn.outcome).ok, true, 'the withdrawn Evacuate ends (Skipped) without cordoning');
    await w.runtime.put('Maintenance Ended', maintenanceEnded('node-3', 'line-node-3'));
    await waitUntil('node-3 is released', async () => (await heldNodes(w)).length === 0);
    await w.runtime.settle();
  });
});
