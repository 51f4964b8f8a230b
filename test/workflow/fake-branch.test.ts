/**
 * A branch needs nothing but its definition: the power-off fixture (fixtures/power-off-branch.ts), one
 * module registered here, is planned by `drainbridge plan` and timed by its own estimate, gets its loop in the generated Evacuate
 * machine, is prepared by PrepareBranches, passed by the pass task, shown in `drainbridge status` and
 * the report, left out of a NodeMaintenance's pod counts, and cancelled and restored by RestoreBranches —
 * with no file of drainbridge's naming it. docs/development.md ("Add a branch") lists what a real one adds.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { parse } from 'yaml';
import { timelineOf } from '../../cli/output/timeline.ts';
import { statusReport } from '../../cli/status/model.ts';
import { renderReport } from '../../cli/status/render.ts';
import { readSnapshot } from '../../cli/status/snapshot.ts';
import { planEvacuation } from '../../lib/branches/plan.ts';
import { BRANCH_REGISTRY, registerBranch } from '../../lib/branches/registry.ts';
import { renderPlanText } from '../../lib/branches/render.ts';
import { createLogger } from '../../lib/log/logger.ts';
import { KUBECTL_DRAIN_DEFAULTS, type ResolvedRequest } from '../../lib/model/request.ts';
import { statusFromRecord } from '../../lib/sources/node-maintenance/status.ts';
import { estimateNode } from '../../lib/workflow/estimate-observe.ts';
import { passTask } from '../../lib/workflow/tasks/evacuate-steps.ts';
import { generateEvacuateAsl } from '../../scripts/asl-branches.ts';
import { POWER_OFF, type PowerOffBranch, powerOffBranch } from './fixtures/power-off-branch.ts';
import {
  eventsOf,
  failureOf,
  maintenanceEnded,
  maintenanceRequested,
  openSpareNodes,
  readRecord,
  startWorkflowSim,
  type WorkflowSim,
} from './harness.ts';
import { WORKFLOW_SCENARIO } from './scenario.ts';

interface Resolved {
  readonly request: ResolvedRequest;
  readonly executionId: string;
  readonly startedAt: string;
}

describe('a branch added by registering one module', () => {
  let branch: PowerOffBranch;
  let unregister: () => void;
  let w: WorkflowSim;
  before(async () => {
    branch = powerOffBranch();
    unregister = registerBranch(branch.definition);
    w = await startWorkflowSim(WORKFLOW_SCENARIO);
    await openSpareNodes(w);
  });
  after(async () => {
    await w?.stop();
    unregister?.();
  });

  it('is planned by drainbridge plan, with its words and its own lines', async () => {
    const { deps } = w.runtime;
    const planned = await planEvacuation(deps.config, deps.kube, 'node-1', {
      options: { ...KUBECTL_DRAIN_DEFAULTS, ignoreDaemonSets: true },
      infraPodSelector: deps.config.infraPodSelector,
    });
    const own = planned.plan.branches.find((b) => b.branch === POWER_OFF);
    assert.deepEqual(
      own?.toMove.map((item) => item.name),
      ['bmc-node-1'],
    );
    const text = renderPlanText(planned);
    assert.match(text, /Branch power-off:\n {2}BMC: bmc-node-1\n {2}to power off \(1\):\n {4}bmc-node-1/);
    // The start-time estimate asks the branch for its own time, beside the others of the parallel stage.
    const estimate = await estimateNode(deps.config, deps.kube, {
      name: 'node-1',
      options: { ...KUBECTL_DRAIN_DEFAULTS, ignoreDaemonSets: true },
      planned,
    });
    assert.deepEqual(
      estimate.branches.find((b) => b.branch === POWER_OFF),
      { branch: POWER_OFF, seconds: 60, basis: 'power-off: 1 machine(s) × 60 s at the BMC' },
    );
    const pods = estimate.branches.find((b) => b.branch === 'pods');
    assert.ok(
      pods && estimate.seconds >= Math.max(60, pods.seconds),
      `the parallel stage's longest: ${estimate.seconds} s`,
    );
  });

  it('gets its own loop in the generated Evacuate machine, beside the other parallel branches', () => {
    const asl = readFileSync(new URL('../../state-machines/evacuate.asl.yml', import.meta.url), 'utf8');
    const machine = parse(generateEvacuateAsl(asl, BRANCH_REGISTRY)) as {
      States: Record<string, { Branches?: { StartAt: string; States: Record<string, { Parameters?: object }> }[] }>;
    };
    const starts = machine.States.Evacuate?.Branches?.map((b) => b.StartAt);
    assert.deepEqual(starts, ['PodsPass', 'NovaPass', 'KubevirtPass', 'PowerOffPass']);
    const pass = machine.States.Evacuate?.Branches?.[3]?.States.PowerOffPass;
    assert.equal((pass?.Parameters as { branch?: string } | undefined)?.branch, POWER_OFF);
  });

  it('is prepared, passed, shown in status and the report, and restored', async () => {
    await w.runtime.put('Maintenance Requested', maintenanceRequested('node-1'));
    const [evacuate] = w.runtime.executionsFor('req-node-1');
    assert.ok(evacuate);
    const evacuated = await evacuate.outcome;
    assert.equal(evacuated.ok, true, `${failureOf(evacuated).name} ${failureOf(evacuated).message}`);
    assert.deepEqual(branch.calls, ['prepare node-1'], 'the packaged PrepareBranches step ran its prepare');

    // The packaged machine has the built-in branches' loops only (it is generated from the registry at
    // build time): the branch's pass runs through the pass task itself, as its loop would call it.
    const resolved = w.taskCalls.find((c) => c.stateName === 'ResolveTarget' && c.executionId === evacuate.id)
      ?.output as Resolved;
    const now = () => new Date(w.sim.clock.now());
    const passed = await passTask.run(
      {
        branch: POWER_OFF,
        request: resolved.request,
        executionId: resolved.executionId,
        startedAt: resolved.startedAt,
      },
      w.runtime.deps,
      { now, logger: createLogger('test') },
    );
    assert.equal(passed.done, true);
    assert.deepEqual(branch.calls.at(-1), 'pass node-1');

    const record = await readRecord(w, 'req-node-1');
    const report = timelineOf(record);
    assert.deepEqual(
      report.branches.filter((b) => b.name === POWER_OFF).map((b) => [b.moved, b.total]),
      [[1, 1]],
    );
    assert.deepEqual(
      report.items.filter((item) => item.branch === POWER_OFF).map((item) => [item.name, item.state]),
      [['bmc-node-1', 'gone']],
    );

    const { deps } = w.runtime;
    const snapshot = await readSnapshot(
      { client: deps.kube, namespace: deps.config.namespace, recordTtlHours: deps.config.recordTtlHours },
      'node-1',
    );
    const status = statusReport(snapshot);
    const request = status.requests.find((r) => r.requestId === 'req-node-1');
    assert.deepEqual(
      request?.branches.find((b) => b.branch === POWER_OFF),
      { branch: POWER_OFF, moved: 1, total: 1, inFlight: 0, skipped: 0, done: true },
    );
    const table = renderReport(status, 'table');
    const header = table.find((line) => line.startsWith('REQUEST'));
    assert.match(header ?? '', /PODS +VMS +SERVERS +POWERED-OFF +BLOCKERS/);
    assert.match(table.find((line) => line.startsWith('req-node-1')) ?? '', / 1\/1 +0$/);

    // A NodeMaintenance counts pods only, as node-maintenance-operator does: the machine is not one.
    const pods = (record.status?.branches?.pods?.total ?? 0) + (record.status?.branches?.['infra-pods']?.total ?? 0);
    assert.equal(statusFromRecord(record).evictionPods, pods);

    await w.runtime.put('Maintenance Ended', maintenanceEnded('node-1', 'req-node-1'));
    const restore = w.runtime.executions.find((e) => e.machine === 'restore' && e.requestId === 'req-node-1');
    assert.ok(restore);
    const restored = await restore.outcome;
    assert.equal(restored.ok, true, `${failureOf(restored).name} ${failureOf(restored).message}`);
    assert.deepEqual(
      branch.calls.slice(-2),
      ['cancel node-1', 'restore node-1'],
      'RestoreBranches cancelled, then restored',
    );
    const [event] = eventsOf(w, 'Node Restored', 'req-node-1');
    assert.ok(
      (event?.leftAlone as string[] | undefined)?.includes('bmc-node-1 stays powered off: the operator powers it on'),
      `Node Restored names what the branch left alone: ${JSON.stringify(event?.leftAlone)}`,
    );
  });
});
