/**
 * The `busy-node` scenario (110 pods of every kind) through the packaged Evacuate machine with
 * `--ignore-daemonsets --delete-emptydir-data --force`. KubeVirt launcher pods are never evicted: with
 * them selected the evacuation stops on LauncherPod blockers until its deadline; without them
 * (`--pod-selector kubevirt.io!=virt-launcher`) it drains. Prints state transitions and Lambda
 * invocations per evacuation, and checks the pass loop progresses no more often than items change state.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { estimateHistoryEvents } from '../../embedded/executor.ts';
import type { TrackedExecution } from '../../embedded/runtime.ts';
import { PHASE_ANNOTATION } from '../../lib/node/phase.ts';
import {
  eventsOf,
  failureOf,
  maintenanceRequested,
  readNodeAsAdmin,
  simInstant,
  startWorkflowSim,
  type WorkflowSim,
} from './harness.ts';

const KUBECTL_FLAGS = { ignoreDaemonSets: true, deleteEmptyDirData: true, force: true };

interface PassOutputSeen {
  readonly branch?: string;
  readonly progressed?: boolean;
  readonly progress?: { total: number };
}

function printStats(label: string, execution: TrackedExecution): void {
  const { stats } = execution;
  console.log(
    `busy-node ${label}: ${stats.stateTransitions} state transitions, ${stats.lambdaInvocations} Lambda invocations ` +
      `(${stats.lambdaErrors} errors incl. NotYetDone, ${stats.retries} retries), ` +
      `estimateHistoryEvents ${estimateHistoryEvents(stats)}`,
  );
}

describe('busy-node through the Evacuate machine', () => {
  let w: WorkflowSim;
  before(async () => {
    // 1000× real time: the PDB-paced drain (api: one pod at a time) takes simulated minutes.
    w = await startWorkflowSim('busy-node', { speed: 1000 });
  });
  after(async () => {
    await w?.stop();
  });

  it('drains everything but the launcher pods with --pod-selector kubevirt.io!=virt-launcher', async () => {
    const drain = { ...KUBECTL_FLAGS, podSelector: 'kubevirt.io!=virt-launcher' };
    await w.runtime.put('Maintenance Requested', maintenanceRequested('busy-node', { requestId: 'req-busy', drain }));
    const [execution] = w.runtime.executionsFor('req-busy');
    assert.ok(execution);
    const outcome = await execution.outcome;
    assert.equal(outcome.ok, true, `${failureOf(outcome).name}: ${failureOf(outcome).message}`);
    printStats('evacuation (launcher pods deselected)', execution);
    assert.equal((await readNodeAsAdmin(w, 'busy-node')).metadata?.annotations?.[PHASE_ANNOTATION], 'NodeDrained');
    const pods = await w.admin.core.listPodForAllNamespaces({ fieldSelector: 'spec.nodeName=busy-node' });
    const left = pods.items.filter((pod) => !pod.metadata?.deletionTimestamp && pod.status?.phase !== 'Succeeded');
    const owners = left.map((pod) => pod.metadata?.ownerReferences?.[0]?.kind);
    assert.deepEqual(
      owners.filter((kind) => kind !== 'DaemonSet' && kind !== 'Node' && kind !== 'VirtualMachineInstance'),
      [],
      'only DaemonSet, mirror and launcher pods stay',
    );
    assert.equal(owners.filter((kind) => kind === 'VirtualMachineInstance').length, 5, 'the launcher pods stay');

    // A pass progresses only when an item changes state (eviction accepted, pod gone): at most twice per item.
    const passes = w.taskCalls.filter((call) => call.executionId === execution.id && call.functionKey === 'pass');
    const outputs = passes.map((call) => call.output as PassOutputSeen | undefined);
    const progressed = outputs.filter((output) => output?.progressed).length;
    const items = outputs.reduce((most, output) => Math.max(most, output?.progress?.total ?? 0), 0);
    console.log(`busy-node: ${progressed} progressing passes for ${items} pods`);
    assert.ok(items > 0);
    assert.ok(progressed <= 2 * items, `${progressed} progressing passes for ${items} items`);
  });

  it('stops on LauncherPod blockers when launcher pods are selected, failing at the deadline with them named', async () => {
    const request = maintenanceRequested('busy-node', {
      requestId: 'req-busy-launchers',
      drain: KUBECTL_FLAGS,
      deadline: simInstant(w, 600),
    });
    await w.runtime.put('Maintenance Requested', request);
    const [execution] = w.runtime.executionsFor('req-busy-launchers');
    assert.ok(execution);
    const outcome = await execution.outcome;
    assert.equal(failureOf(outcome).name, 'EvacuationFailed');
    printStats('evacuation (launcher pods selected, deadline)', execution);
    const [failed] = eventsOf(w, 'Evacuation Failed', 'req-busy-launchers') as {
      error: { name: string };
      blockers: { reason: string }[];
    }[];
    assert.ok(failed);
    assert.equal(failed.error.name, 'DeadlineExceeded');
    const launchers = failed.blockers.filter((b) => /KubeVirt launcher pod/.test(b.reason));
    assert.equal(launchers.length, 5, `the five launcher pods are named: ${JSON.stringify(failed.blockers)}`);
  });
});
