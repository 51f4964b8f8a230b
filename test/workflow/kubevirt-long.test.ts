/**
 * An evacuation of any length (issue 11 §3): three VMs whose live migrations take 10 simulated hours each,
 * one at a time, through the packaged Evacuate machine. The execution continues as new before Step
 * Functions' history limit — same requestId, the ownership handed over, the chain's start kept — and
 * the evacuation finishes after 30 simulated hours. History events are counted from the interpreter's
 * event log (not from the state machine's own count).
 *
 * How many polls fit in 30 simulated hours depends on how fast this machine runs them, so an External
 * VMI (`gate`) keeps the evacuation open until both have happened — 30 hours and a continuation — and
 * then its "external controller" (the test) moves it: the test cannot pass or fail by the machine's speed.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TaskCall } from '../../embedded/executor.ts';
import { branchesOf } from '../../lib/branches/registry.ts';
import { HISTORY_LIMIT, parallelShare } from '../../lib/workflow/history-budget.ts';
import { waitUntil } from '../support/wait.ts';
import { eventsOf, failureOf, maintenanceRequested, startWorkflowSim, type WorkflowSim } from './harness.ts';
import { byDrainbridge, kubeVirtScenario, vmis } from './kubevirt-scenario.ts';

const TEN_HOURS = 36_000;

describe('an evacuation that runs 30 simulated hours', () => {
  let w: WorkflowSim;
  before(async () => {
    // Thousands of polls: their log lines would only slow the run down.
    process.env.POWERTOOLS_LOG_LEVEL = 'ERROR';
    w = await startWorkflowSim(
      kubeVirtScenario({
        vms: [
          ...['slow-1', 'slow-2', 'slow-3'].map((name) => ({
            name,
            strategy: 'LiveMigrate' as const,
            migrationSeconds: TEN_HOURS,
          })),
          { name: 'gate', strategy: 'External' as const },
        ],
      }),
      {
        // Polls a few simulated seconds apart, as the real backoff's cap does (its jitter averages 15 s).
        speed: 5000,
        // The longest allowed maximum: on a slow or busy machine fewer polls fit in a simulated hour, and the
        // continuation (which counts polls, not hours) must come before any deadline does.
        env: { DRAINBRIDGE_KUBEVIRT_MAX_MIGRATIONS_PER_NODE: '1', DRAINBRIDGE_MAX_EVACUATION_HOURS: '720' },
        runtime: { retryIntervalMs: 1 },
      },
    );
  });
  after(async () => {
    await w?.stop();
  });

  it('continues as new, no execution exceeds the history limit, and it finishes', async () => {
    const startedAtSim = w.sim.clock.now();
    await w.runtime.put('Maintenance Requested', maintenanceRequested('node-1', { drain: { ignoreDaemonSets: true } }));
    const [first] = w.runtime.executionsFor('req-node-1');
    assert.ok(first);
    await waitUntil(
      '30 simulated hours and a continuation',
      () => w.sim.clock.now() - startedAtSim >= 30 * 3_600_000 && w.runtime.executionsFor('req-node-1').length >= 2,
      300_000,
    );
    await w.admin.custom.createNamespacedCustomObject({
      group: 'kubevirt.io',
      version: 'v1',
      plural: 'virtualmachineinstancemigrations',
      namespace: 'vms',
      body: {
        apiVersion: 'kubevirt.io/v1',
        kind: 'VirtualMachineInstanceMigration',
        metadata: { name: 'external-moves-gate', namespace: 'vms' },
        spec: { vmiName: 'gate' },
      },
    });
    const chain = await w.runtime.chainOf(first);
    assert.equal(chain.outcome.ok, true, failureOf(chain.outcome).message);
    const hours = (w.sim.clock.now() - startedAtSim) / 3_600_000;
    const events = chain.executions.map((execution) => execution.stats.historyEvents);
    console.log(
      `30 h evacuation: ${hours.toFixed(1)} simulated hours, ${chain.executions.length} executions, history events ${events.join(', ')} (limit ${HISTORY_LIMIT})`,
    );
    assert.ok(hours >= 30, `it ran ${hours.toFixed(1)} simulated hours`);
    assert.ok(chain.executions.length >= 2, 'it continued as new');
    for (const count of events) assert.ok(count < HISTORY_LIMIT, `an execution wrote ${count} history events`);
    // The KubeVirt loop leaves at its share of the history, counted as an upper bound (every retry of both
    // retriers); a real poll round writes about two thirds of that bound, so an execution that continued
    // because it polled long enough wrote more than half of the share.
    const share = parallelShare(branchesOf('parallel').length);
    assert.ok(
      Math.max(...events) > share / 2,
      `the executions did poll long enough to need continuing (share ${share})`,
    );

    const calls = (execution: { id: string }, key: string): TaskCall[] =>
      w.taskCalls.filter((call) => call.executionId === execution.id && call.functionKey === key);
    // One chain: the same requestId and start; each successor took the request over at once (no waiting).
    const starts = chain.executions.map(
      (execution) => (calls(execution, 'resolveTarget')[0]?.output as { startedAt?: string })?.startedAt,
    );
    assert.equal(new Set(starts).size, 1, `every execution counts from the chain's start (${starts.join(', ')})`);
    for (const execution of chain.executions.slice(1)) {
      assert.equal(execution.requestId, 'req-node-1');
      const admits = calls(execution, 'admit');
      assert.equal(admits.filter((call) => call.error).length, 0, 'the successor did not wait for the predecessor');
    }

    const now = await vmis(w);
    for (const name of ['slow-1', 'slow-2', 'slow-3']) {
      assert.notEqual(now.get(`vms/${name}`)?.nodeName, 'node-1');
      const own = w.sim.kubevirt?.history.forVmi(`vms/${name}`).filter(byDrainbridge) ?? [];
      assert.equal(own.length, 1, `vms/${name}: one migration across the chain`);
    }
    const [succeeded] = eventsOf(w, 'Evacuation Succeeded', 'req-node-1') as { durationSeconds: number }[];
    assert.ok((succeeded?.durationSeconds ?? 0) >= 30 * 3600, 'the duration counts from the chain’s start');
    assert.equal(eventsOf(w, 'Evacuation Succeeded', 'req-node-1').length, 1);
  });
});
