/**
 * The KubeVirt pass waits on a watch of its own migrations (lib/branches/kubevirt/wait.ts): with one
 * outbound slot per node, the next migration is created within about a second of the previous one
 * succeeding, by the same pass — no NotYetDone return and Step Functions retry between, which left the
 * freed slot idle for the retry's backoff. At the simulator's real speed (1), so that its timestamps are
 * wall-clock time.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { failureOf, maintenanceRequested, startWorkflowSim, type WorkflowSim } from './harness.ts';
import { byDrainbridge, kubeVirtScenario } from './kubevirt-scenario.ts';

describe('KubeVirt: a freed migration slot is used within the same pass', () => {
  let w: WorkflowSim;
  before(async () => {
    w = await startWorkflowSim(
      kubeVirtScenario({
        vms: ['vm-1', 'vm-2', 'vm-3'].map((name) => ({ name, strategy: 'LiveMigrate' as const, migrationSeconds: 2 })),
        migrations: { parallelOutboundMigrationsPerNode: 1 },
      }),
      { speed: 1 },
    );
  });
  after(async () => {
    await w?.stop();
  });

  it('creates the next migration within a second of the last one succeeding, without a NotYetDone retry', async () => {
    await w.runtime.put('Maintenance Requested', maintenanceRequested('node-1', { drain: { ignoreDaemonSets: true } }));
    const execution = w.runtime.executionsFor('req-node-1')[0];
    const outcome = await execution?.outcome;
    assert.equal(outcome?.ok, true, outcome ? failureOf(outcome).message : 'no execution');

    const migrations = (w.sim.kubevirt?.history.migrations(byDrainbridge) ?? []).toSorted(
      (a, b) => a.createdAtMs - b.createdAtMs,
    );
    assert.equal(migrations.length, 3, 'one migration per VM');
    const succeededAt = (i: number) => migrations[i]?.phases.find((p) => p.phase === 'Succeeded')?.atMs;
    const gaps = migrations.slice(1).map((next, i) => next.createdAtMs - (succeededAt(i) ?? Number.NaN));
    const passes = w.taskCalls.filter(
      (call) => call.executionId === execution?.id && call.stateName === 'KubevirtPass',
    );
    const retried = passes.filter((call) => call.error?.name === 'NotYetDone');
    console.log(
      `slot freed → next migration created (ms): ${gaps.map((gap) => Math.round(gap)).join(', ')}; ` +
        `${passes.length} KubeVirt passes, ${retried.length} NotYetDone`,
    );
    for (const gap of gaps)
      assert.ok(gap >= 0 && gap <= 1_000, `next migration ${Math.round(gap)} ms after the slot freed`);
    assert.equal(retried.length, 0, 'no pass returned NotYetDone while its migrations ran: it waited for them');
  });
});
