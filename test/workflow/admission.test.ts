/**
 * Admission slots (DRAINBRIDGE_MAX_HELD_NODES, default 1): a request for a second node waits
 * (SlotUnavailable retries next in line, WaitingInLine further back) until the first node is restored; waiting requests are admitted oldest
 * first; a re-run of an admitted request takes no second slot.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TrackedExecution } from '../../embedded/runtime.ts';
import { withHolder } from '../../lib/admission/mutex.ts';
import { ADMISSION_LEASE, ADMITTED_ANNOTATION } from '../../lib/admission/records.ts';
import { isSlotWait } from '../../lib/errors/registry.ts';
import { HELD_LABEL, isHeld, readLedger } from '../../lib/node/ledger.ts';
import { waitUntil } from '../support/wait.ts';
import {
  DRAINBRIDGE_USER,
  failureOf,
  maintenanceEnded,
  maintenanceRequested,
  readNodeAsAdmin,
  startWorkflowSim,
  type WorkflowSim,
} from './harness.ts';
import { IDLE_NODES_SCENARIO } from './scenario.ts';

async function heldNodes(w: WorkflowSim): Promise<string[]> {
  const nodes = await w.admin.listNodes();
  return nodes.filter((node) => isHeld(readLedger(node))).map((node) => node.metadata?.name ?? '');
}

function slotWaits(w: WorkflowSim, execution: TrackedExecution): number {
  return w.taskCalls.filter((call) => call.executionId === execution.id && isSlotWait(call.error?.name)).length;
}

async function request(w: WorkflowSim, node: string): Promise<TrackedExecution> {
  await w.runtime.put('Maintenance Requested', maintenanceRequested(node));
  const execution = w.runtime.executionsFor(`req-${node}`).at(-1);
  assert.ok(execution, `an Evacuate started for ${node}`);
  return execution;
}

async function succeeds(execution: TrackedExecution): Promise<void> {
  const outcome = await execution.outcome;
  assert.equal(outcome.ok, true, `${failureOf(outcome).name}: ${failureOf(outcome).message}`);
}

async function restore(w: WorkflowSim, node: string): Promise<void> {
  await w.runtime.put('Maintenance Ended', maintenanceEnded(node));
  await waitUntil(`${node} is released`, async () => !(await heldNodes(w)).includes(node));
}

/** Whether `execution` is still running (its outcome has not settled). */
async function isRunning(execution: TrackedExecution): Promise<boolean> {
  const pending = Symbol('pending');
  return (await Promise.race([execution.outcome, Promise.resolve(pending)])) === pending;
}

describe('admission slots (one held node by default)', () => {
  let w: WorkflowSim;
  before(async () => {
    w = await startWorkflowSim(IDLE_NODES_SCENARIO);
    assert.equal(w.runtime.deps.config.maxHeldNodes, 1, 'the default is one held node');
  });
  after(async () => {
    await w?.stop();
  });

  it('queues other nodes behind the held one and admits the oldest waiting request first', async () => {
    const first = await request(w, 'node-1');
    await succeeds(first);

    const second = await request(w, 'node-2');
    await waitUntil('node-2 waits for a slot', () => slotWaits(w, second) >= 2);
    const third = await request(w, 'node-3');
    await waitUntil('node-3 waits for a slot', () => slotWaits(w, third) >= 2);

    // A re-run of the admitted request finds its own hold: no second slot, and the others keep waiting.
    const rerun = w.runtime.startExecution('evacuate', first.input);
    await rerun.outcome;
    assert.equal(slotWaits(w, rerun), 0, 'the re-run did not wait for a slot');
    assert.deepEqual(await heldNodes(w), ['node-1']);
    assert.equal((await readNodeAsAdmin(w, 'node-2')).spec?.unschedulable, undefined, 'node-2 is not cordoned');

    await restore(w, 'node-1');
    await succeeds(second);
    assert.deepEqual(await heldNodes(w), ['node-2'], 'the oldest waiting request got the slot');
    const waitsBefore = slotWaits(w, third);
    await waitUntil('node-3 keeps waiting', () => slotWaits(w, third) > waitsBefore);
    assert.equal(await isRunning(third), true);

    await restore(w, 'node-2');
    await succeeds(third);
    assert.deepEqual(await heldNodes(w), ['node-3']);
    await restore(w, 'node-3');
    await w.runtime.settle();
  });
});

describe('a released slot, seen from the admission Lease', () => {
  let w: WorkflowSim;
  before(async () => {
    w = await startWorkflowSim(IDLE_NODES_SCENARIO);
  });
  after(async () => {
    await w?.stop();
  });

  it('next in line waits on the Lease and its record only; the release takes the node off the Lease', async () => {
    await succeeds(await request(w, 'node-1'));
    const admitted = async () =>
      JSON.parse(
        (await w.admin.getLease('drainbridge', ADMISSION_LEASE)).metadata?.annotations?.[ADMITTED_ANNOTATION] ?? '[]',
      ) as string[];
    assert.deepEqual(await admitted(), ['node-1'], 'the Lease records the admitted node');
    const second = await request(w, 'node-2');
    await waitUntil('node-2 has its place in line', () => slotWaits(w, second) >= 1);
    const mark = w.sim.requestLog.mark();
    const before = slotWaits(w, second);
    await waitUntil('node-2 asked twice more', () => slotWaits(w, second) >= before + 2);
    const reads = w.sim.requestLog.reads({ since: mark, user: DRAINBRIDGE_USER });
    assert.deepEqual(
      [...new Set(reads.map((r) => r.resource))].sort(),
      ['leases'],
      'while no slot is free it reads the admission Lease alone: no node, not its record',
    );
    assert.match(
      w.taskCalls.filter((c) => c.executionId === second.id && isSlotWait(c.error?.name)).at(-1)?.error?.message ?? '',
      /node node-2: all 1 maintenance slot\(s\) are in use \(held: node-1; a slot frees when that maintenance ends: drainbridge restore node-1\); 0 request\(s\) ahead/,
    );

    await restore(w, 'node-1');
    await succeeds(second);
    assert.deepEqual(await admitted(), ['node-2'], 'released, node-1 left the Lease; admitted, node-2 joined it');
    await restore(w, 'node-2');
    // The release's last step writes the Lease, after the node's hold is gone.
    await waitUntil('the last release leaves no node on the Lease', async () => (await admitted()).length === 0);
    await w.runtime.settle();
  });
});

describe('the admission lock held for a moment by another request', () => {
  let w: WorkflowSim;
  before(async () => {
    w = await startWorkflowSim(IDLE_NODES_SCENARIO);
  });
  after(async () => {
    await w?.stop();
  });

  it("Admit asks again itself (AdmissionBusy, jittered), not behind WaitForSlot's 10 s; admitted once the lock frees", async () => {
    // Another request's lock, as its Admit writes it, left to expire (a crashed holder's): held for two seconds
    // of real time, longer than Admit's six attempts take at the harness's retry interval; the simulator's
    // clock, which the lock's expiry is read on, runs `speed` times faster.
    const held = withHolder(undefined, 'another-request', new Date(w.sim.clock.now()));
    const leaseDurationSeconds = Math.ceil(2 * w.sim.clock.speed);
    await w.admin.createLease('drainbridge', { ...held, spec: { ...held.spec, leaseDurationSeconds } });
    const execution = await request(w, 'node-1');
    await succeeds(execution);
    const calls = w.taskCalls.filter((c) => c.executionId === execution.id);
    const firstWait = calls.findIndex((c) => c.stateName !== 'ResolveTarget' && c.stateName !== 'Admit');
    const admits = calls.filter((c) => c.stateName === 'Admit');
    assert.equal(admits[0]?.error?.name, 'AdmissionBusy', admits[0]?.error?.message);
    assert.match(admits[0]?.error?.message ?? '', /admission is busy \(held by another-request\)/);
    // Admit's own Retry: the first attempt and its five retries, all told the lock is busy, before any wait.
    const beforeWait = calls.slice(0, firstWait).filter((c) => c.stateName === 'Admit');
    assert.ok(beforeWait.length >= 6, `${beforeWait.length} Admit attempts before the first wait`);
    for (const call of beforeWait.slice(0, 6)) assert.equal(call.error?.name, 'AdmissionBusy');
    assert.deepEqual(await heldNodes(w), ['node-1']);
    await restore(w, 'node-1');
    await w.runtime.settle();
  });
});

describe('a held node without the held label (held by a version before the label, or the label removed, even uncordoned)', () => {
  let w: WorkflowSim;
  before(async () => {
    w = await startWorkflowSim(IDLE_NODES_SCENARIO);
  });
  after(async () => {
    await w?.stop();
  });

  it('still takes its slot: a request for another node waits until it is restored', async () => {
    await succeeds(await request(w, 'node-1'));
    await w.admin.patchNode('node-1', { metadata: { labels: { [HELD_LABEL]: null } } });
    assert.equal((await readNodeAsAdmin(w, 'node-1')).metadata?.labels?.[HELD_LABEL], undefined);

    const second = await request(w, 'node-2');
    await waitUntil('node-2 waits for a slot', () => slotWaits(w, second) >= 2);
    assert.deepEqual(await heldNodes(w), ['node-1'], 'node-2 was not admitted beside the unlabelled held node');

    // A person uncordons it too: neither the label nor the cordon finds it now, the Lease's memory does.
    await w.admin.patchNode('node-1', { spec: { unschedulable: null } });
    const waits = slotWaits(w, second);
    await waitUntil('node-2 keeps waiting', () => slotWaits(w, second) >= waits + 2);
    assert.deepEqual(await heldNodes(w), ['node-1'], 'node-2 was not admitted beside the uncordoned held node');

    await restore(w, 'node-1');
    await succeeds(second);
    assert.deepEqual(await heldNodes(w), ['node-2']);
    await restore(w, 'node-2');
    await w.runtime.settle();
  });
});

const FOUR_IDLE_NODES = {
  ...IDLE_NODES_SCENARIO,
  name: 'workflow-idle-four',
  nodes: [...IDLE_NODES_SCENARIO.nodes, { name: 'node-4', providerID: 'aws:///eu-west-1b/i-0aaaaaaaaaaaaaaa4' }],
};

describe('a request far back in line (two or more older requests per slot ahead of it)', () => {
  let w: WorkflowSim;
  before(async () => {
    w = await startWorkflowSim(FOUR_IDLE_NODES);
  });
  after(async () => {
    await w?.stop();
  });

  it('waits reading only the admission Lease, says why, and is admitted in its turn', async () => {
    await succeeds(await request(w, 'node-1'));
    const second = await request(w, 'node-2');
    await waitUntil('node-2 waits for a slot', () => slotWaits(w, second) >= 1);
    const third = await request(w, 'node-3');
    await waitUntil('node-3 waits for a slot', () => slotWaits(w, third) >= 1);
    const fourth = await request(w, 'node-4');
    await waitUntil('node-4 has its place in line', () => slotWaits(w, fourth) >= 1);

    const mark = w.sim.requestLog.mark();
    const before = slotWaits(w, fourth);
    await waitUntil('node-4 asked twice more', () => slotWaits(w, fourth) >= before + 2);
    const later = w.taskCalls.filter((c) => c.executionId === fourth.id && isSlotWait(c.error?.name));
    assert.equal(later.at(-1)?.error?.name, 'WaitingInLine', 'far back, it sleeps in WaitInLine (no token parked)');
    assert.match(later.at(-1)?.error?.message ?? '', /behind 2 older request\(s\) for 1 maintenance slot\(s\)/);
    const reads = w.sim.requestLog.reads({ since: mark, user: DRAINBRIDGE_USER });
    assert.deepEqual(
      reads.filter((r) => r.resource === 'nodes' && r.name === 'node-4'),
      [],
      'no read of node-4 while it waits far back',
    );
    assert.deepEqual(
      reads.filter((r) => r.resource === 'evacuations' && r.name === 'req-node-4'),
      [],
      'no read of its record either (drainbridge abort takes it off the line)',
    );
    // The log does record this user's reads by resource and name (the check can fail).
    assert.ok(
      reads.some((r) => r.resource === 'leases' && r.name === ADMISSION_LEASE),
      'the waiting requests read the admission Lease',
    );
    assert.equal(
      w.taskCalls.filter((c) => c.executionId === second.id && isSlotWait(c.error?.name)).at(-1)?.error?.name,
      'SlotUnavailable',
      'next in line, it parks a wake-up token (WaitForSlot)',
    );

    await restore(w, 'node-1');
    await succeeds(second);
    await restore(w, 'node-2');
    await succeeds(third);
    // A long wait may have continued as new (each round of the Admit loop counts toward the history): the request's latest execution waits.
    const waiting = w.runtime.executionsFor('req-node-4').at(-1) ?? fourth;
    assert.equal(await isRunning(waiting), true, 'node-4 still waits for node-3');
    await restore(w, 'node-3');
    await succeeds(waiting);
    assert.deepEqual(await heldNodes(w), ['node-4']);
    await restore(w, 'node-4');
    await w.runtime.settle();
  });
});
