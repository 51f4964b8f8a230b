/**
 * A process killed mid-step: the embedded execution is aborted in the middle of the pod branch, then a
 * new execution with the same input (same requestId) resumes from the cluster's state.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TaskCall } from '../../embedded/executor.ts';
import type { TrackedExecution } from '../../embedded/runtime.ts';
import { readLedger } from '../../lib/node/ledger.ts';
import { PHASE_ANNOTATION } from '../../lib/node/phase.ts';
import { waitUntil } from '../support/wait.ts';
import {
  evictionsSince,
  failureOf,
  maintenanceRequested,
  openSpareNodes,
  readNodeAsAdmin,
  startWorkflowSim,
  type WorkflowSim,
} from './harness.ts';
import { WORKFLOW_SCENARIO } from './scenario.ts';

const REQUEST = 'req-node-1';

interface PassOutputSeen {
  readonly branch?: string;
  readonly done?: boolean;
  readonly progress?: { moved: number; inFlight: number };
}

/** True for a pods pass that evicted something and is not done: the middle of the pod branch. */
function isMidPodBranch(call: TaskCall): boolean {
  const output = call.output as PassOutputSeen | undefined;
  return (
    call.functionKey === 'pass' &&
    output?.branch === 'pods' &&
    output.done === false &&
    (output.progress?.inFlight ?? 0) > 0
  );
}

describe('an execution killed mid-step and re-run with the same input', () => {
  let w: WorkflowSim;
  before(async () => {
    w = await startWorkflowSim(WORKFLOW_SCENARIO);
    await openSpareNodes(w);
  });
  after(async () => {
    await w?.stop();
  });

  it('resumes from cluster state: its own hold, no second slot, no pod evicted twice, node drained', async () => {
    await w.runtime.put('Maintenance Requested', maintenanceRequested('node-1'));
    const [crashed] = w.runtime.executionsFor(REQUEST);
    assert.ok(crashed);
    await waitUntil('the pod branch is under way', () => w.taskCalls.some(isMidPodBranch));
    crashed.abort();
    const crashedOutcome = await crashed.outcome;
    assert.equal(crashedOutcome.ok, false, 'the first execution was killed');
    const evictedBeforeCrash = evictionsSince(w);
    assert.ok(evictedBeforeCrash.length >= 1, 'a pod was evicted before the crash');
    assert.deepEqual(Object.keys(readLedger(await readNodeAsAdmin(w, 'node-1')).holds), [REQUEST]);

    const rerun: TrackedExecution = w.runtime.startExecution('evacuate', crashed.input);
    const outcome = await rerun.outcome;
    assert.equal(outcome.ok, true, `${failureOf(outcome).name}: ${failureOf(outcome).message}`);

    // The killed execution's owner mark is fresh at first: the re-run waits until it expires, then takes over.
    const admits = w.taskCalls.filter((call) => call.executionId === rerun.id && call.functionKey === 'admit');
    assert.match(admits[0]?.error?.message ?? '', new RegExp(`is being evacuated by execution ${crashed.id}`));
    assert.deepEqual(admits.at(-1)?.output, { why: 'this request already holds the node', acquired: false });
    const node = await readNodeAsAdmin(w, 'node-1');
    assert.deepEqual(Object.keys(readLedger(node).holds), [REQUEST], 'still one hold: no second slot');
    assert.equal(node.metadata?.annotations?.[PHASE_ANNOTATION], 'NodeDrained');
    const evictions = evictionsSince(w);
    assert.deepEqual(
      evictions.filter((key, index) => evictions.indexOf(key) !== index),
      [],
      `no pod evicted twice (${evictions.join(', ')})`,
    );
    for (const key of evictedBeforeCrash) {
      assert.equal(evictions.filter((k) => k === key).length, 1, `${key} was evicted once, before the crash`);
    }
    const pods = await w.admin.core.listPodForAllNamespaces({ fieldSelector: 'spec.nodeName=node-1' });
    assert.deepEqual(
      pods.items.filter((pod) => !pod.metadata?.deletionTimestamp).map((pod) => pod.metadata?.labels?.app),
      ['agent'],
      'node-1 is drained: only the DaemonSet pod stays',
    );
  });
});
