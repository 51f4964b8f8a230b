/**
 * The evacuation's own time limit applies across a continue-as-new chain (issue 11 §3): the maximum
 * evacuation time (DRAINBRIDGE_MAX_EVACUATION_HOURS) counts from the chain's first execution, so it can
 * run out in a continued one — which then fails with DeadlineExceeded and keeps the safe state (node
 * cordoned and held, every VM running).
 *
 * How the chain is made quickly: node-2's request holds the only slot, so node-1's request waits in the
 * Admit loop, which counts its rounds; entering the Parallel state with more than PARALLEL_ENTRY_LIMIT
 * counted, the execution continues as new at once. The continued execution then moves a VM whose
 * migration takes days. Its tasks' clock is then put forward to just past an hour after the chain's
 * start — less than an hour after the continued execution's own start — and its next step gives up.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { isSlotWait } from '../../lib/errors/registry.ts';
import { ADMIT_ITERATION_EVENTS, PARALLEL_ENTRY_LIMIT } from '../../lib/workflow/history-budget.ts';
import { waitUntil } from '../support/wait.ts';
import {
  eventsOf,
  failureOf,
  maintenanceEnded,
  maintenanceRequested,
  readNodeAsAdmin,
  startWorkflowSim,
  type WorkflowSim,
} from './harness.ts';
import { byDrainbridge, kubeVirtScenario, vmis } from './kubevirt-scenario.ts';

const DRAIN = { ignoreDaemonSets: true };
const HOUR_MS = 3_600_000;

describe('the maximum evacuation time runs out in a continued execution', () => {
  let w: WorkflowSim;
  /** How far the tasks' clock is ahead of the simulator's (0 until the test moves it). */
  let aheadMs = 0;
  let simNow: () => number = Date.now;
  before(async () => {
    w = await startWorkflowSim(
      kubeVirtScenario({ vms: [{ name: 'slow', strategy: 'LiveMigrate', migrationSeconds: 7 * 24 * 3600 }] }),
      {
        env: { DRAINBRIDGE_MAX_EVACUATION_HOURS: '1' },
        runtime: { retryIntervalMs: 1, now: () => new Date(simNow() + aheadMs) },
      },
    );
    simNow = () => w.sim.clock.now();
  });
  after(async () => {
    await w?.stop();
  });

  it('fails with DeadlineExceeded counted from the chain’s start; node cordoned and held, the VM running', {
    timeout: 120_000,
  }, async () => {
    // node-2 is held (evacuated, not restored): node-1's request waits for the only slot.
    await w.runtime.put('Maintenance Requested', maintenanceRequested('node-2', { drain: DRAIN }));
    assert.equal((await w.runtime.executionsFor('req-node-2')[0]?.outcome)?.ok, true);
    await w.runtime.put('Maintenance Requested', maintenanceRequested('node-1', { drain: DRAIN }));
    const [first] = w.runtime.executionsFor('req-node-1');
    assert.ok(first);
    const admitsWaited = () =>
      w.taskCalls.filter((c) => c.executionId === first.id && isSlotWait(c.error?.name)).length;
    // Each round of waiting (Admit refused, a wait that times out at once) counts ADMIT_ITERATION_EVENTS; one
    // more round than PARALLEL_ENTRY_LIMIT needs, and the execution must continue before the Parallel state.
    const rounds = Math.ceil(PARALLEL_ENTRY_LIMIT / ADMIT_ITERATION_EVENTS) + 1;
    await waitUntil('node-1 waited long enough in the Admit loop', () => admitsWaited() >= rounds, 120_000);
    await w.runtime.put('Maintenance Ended', maintenanceEnded('node-2'));
    await waitUntil('node-1 continued as new', () => w.runtime.executionsFor('req-node-1').length >= 2, 60_000);
    // (A moment after the continued execution began: it began no later than this.)
    const continuedAt = simNow();
    const successor = w.runtime.executionsFor('req-node-1')[1];
    assert.ok(successor);
    const calls = (id: string, key: string) => w.taskCalls.filter((c) => c.executionId === id && c.functionKey === key);
    await waitUntil(
      'the continued execution is migrating the VM',
      () =>
        calls(successor.id, 'pass').length > 0 &&
        (w.sim.kubevirt?.history.migrations(byDrainbridge).some((r) => r.phases.some((p) => p.phase === 'Running')) ??
          false),
      60_000,
    );
    const startOf = (id: string) =>
      Date.parse((calls(id, 'resolveTarget')[0]?.output as { startedAt?: string } | undefined)?.startedAt ?? '');
    const chainStart = startOf(first.id);
    const ownStart = startOf(successor.id);
    assert.ok(Number.isFinite(chainStart), 'the chain’s start is known');
    assert.equal(ownStart, chainStart, 'the continued execution keeps the chain’s start');
    const waited = continuedAt - chainStart;
    assert.ok(waited > 2_000, `the chain's first execution waited ${waited} simulated ms before it continued`);
    // Just past an hour after the chain's start; less than an hour after the continued execution began.
    const margin = Math.min(60_000, Math.floor(waited / 2));
    aheadMs = chainStart + HOUR_MS + margin - simNow();

    const chain = await w.runtime.chainOf(first);
    assert.equal(chain.executions.length, 2, 'the first execution continued as the second, which ended it');
    assert.equal(failureOf(chain.outcome).name, 'EvacuationFailed');
    const [failed] = eventsOf(w, 'Evacuation Failed', 'req-node-1') as { error: { name: string; message: string } }[];
    assert.equal(failed?.error.name, 'DeadlineExceeded');
    assert.match(failed?.error.message ?? '', /passed the maximum evacuation time of 1 h/);
    assert.equal(eventsOf(w, 'Evacuation Failed', 'req-node-1').length, 1, 'one outcome for the chain');

    const node = await readNodeAsAdmin(w, 'node-1');
    assert.equal(node.spec?.unschedulable, true, 'the safe state: cordoned');
    assert.match(node.metadata?.annotations?.['drainbridge.io/ledger'] ?? '', /"req-node-1"/, 'and held');
    assert.equal((await vmis(w)).get('vms/slow')?.phase, 'Running', 'the VM runs');
  });
});
