/**
 * Issue 12, item 2: an abort for a request that does not exist is refused (it poisoned that request's
 * future: a later evacuation with the id failed at once as aborted). An abort of a request waiting in
 * line stops it before it touches the node; an abort of one that ended and holds nothing is refused, and
 * so is one of a request a Restore cancelled (its record still says NodeDraining: the phase alone does
 * not tell).
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { isSlotWait } from '../../lib/errors/registry.ts';
import { abortRequest } from '../../lib/workflow/abort.ts';
import { type DrainbridgeCluster, startDrainbridgeCluster } from '../../sim/drainbridge.ts';
import { assertCleanError } from '../support/clean-error.ts';
import { drainbridge } from '../support/cli.ts';
import { assertNoWrites, DRAINBRIDGE_SA } from '../support/request-log.ts';
import { waitUntil } from '../support/wait.ts';
import {
  eventsOf,
  failureOf,
  maintenanceEnded,
  maintenanceRequested,
  readRecord,
  startWorkflowSim,
  type WorkflowSim,
} from './harness.ts';
import { IDLE_NODES_SCENARIO, WORKFLOW_SCENARIO } from './scenario.ts';

describe('issue 12 item 2: drainbridge abort (CLI, embedded)', () => {
  let cluster: DrainbridgeCluster;
  before(async () => {
    cluster = await startDrainbridgeCluster({ scenario: 'small', speed: 100 });
  });
  after(async () => {
    await cluster?.stop();
  });
  const cli = (args: string[]) => drainbridge([...args, '--kubeconfig', cluster.kubeconfigPath]);

  it('issue 12 item 2: abort of a request that does not exist is refused, writes nothing, and the request later runs', async () => {
    const mark = cluster.sim.requestLog.mark();
    const abort = await cli(['abort', 'node-2', '--request-id', 'FUTURE']);
    assert.equal(abort.code, 5, abort.stdout); // refused: nothing was changed
    assertCleanError(abort.stderr, ['refused', 'no running or held request "FUTURE"']);
    assertNoWrites(cluster.sim, mark, 'the refused abort');

    const evacuate = await cli(['evacuate', 'node-2', '--request-id', 'FUTURE', '--ignore-daemonsets', '--force']);
    assert.equal(evacuate.code, 0, `${evacuate.stdout}\n${evacuate.stderr}`);
    assert.match(evacuate.stdout, /evacuation of node-2 succeeded/);
    const restore = await cli(['restore', 'node-2', '--request-id', 'FUTURE']);
    assert.equal(restore.code, 0, restore.stderr);
  });

  it('abort of a request that ended and holds nothing is refused', async () => {
    const mark = cluster.sim.requestLog.mark();
    const abort = await cli(['abort', 'node-2', '--request-id', 'FUTURE']);
    assert.equal(abort.code, 5);
    assertCleanError(abort.stderr, ['its evacuation ended (NodeDrained) and it holds node node-2 no more']);
    assertNoWrites(cluster.sim, mark, 'the refused abort', DRAINBRIDGE_SA);
  });
});

describe('abort of a request waiting for a slot (packaged state machines)', () => {
  let w: WorkflowSim | undefined;
  afterEach(async () => {
    await w?.stop();
    w = undefined;
  });

  it('stops it before it touches the node: never cordoned, Evacuation Failed names the abort', async () => {
    const sim = await startWorkflowSim(IDLE_NODES_SCENARIO);
    w = sim;
    // node-1 takes the only slot and stays held (evacuated, not restored); node-2 waits.
    await sim.runtime.put('Maintenance Requested', maintenanceRequested('node-1'));
    assert.equal((await sim.runtime.executionsFor('req-node-1')[0]?.outcome)?.ok, true);
    await sim.runtime.put('Maintenance Requested', maintenanceRequested('node-2'));
    const [waiting] = sim.runtime.executionsFor('req-node-2');
    assert.ok(waiting);
    await waitUntil('node-2 waits for a slot', () =>
      sim.taskCalls.some((call) => call.functionKey === 'admit' && isSlotWait(call.error?.name)),
    );
    const mark = sim.sim.requestLog.mark();
    const { kube, progress, config } = sim.runtime.deps;
    await abortRequest(
      { kube, progress, namespace: config.namespace },
      { requestId: 'req-node-2', by: 'operator@example.com', at: new Date() },
    );
    assert.equal(failureOf(await waiting.outcome).name, 'EvacuationFailed');
    const [failed] = eventsOf(sim, 'Evacuation Failed', 'req-node-2');
    const error = failed?.error as { name?: string; message?: string } | undefined;
    assert.equal(error?.name, 'EvacuationAborted');
    assert.match(error?.message ?? '', /aborted by operator@example\.com while it waited for a slot/);
    const nodeWrites = sim.sim.requestLog.writes({ since: mark, user: DRAINBRIDGE_SA, resource: 'nodes' });
    assert.deepEqual(nodeWrites, [], 'node-2 was never cordoned');
    await sim.runtime.put('Maintenance Ended', maintenanceEnded('node-1'));
    await sim.runtime.settle();
  });
});

describe('abort of a request a Restore cancelled (packaged state machines)', () => {
  let w: WorkflowSim | undefined;
  afterEach(async () => {
    await w?.stop();
    w = undefined;
  });

  it('is refused and writes nothing, although its record still says NodeDraining', async () => {
    const sim = await startWorkflowSim(WORKFLOW_SCENARIO);
    w = sim;
    // The web budget blocks the drain (node-2 and node-3 are cordoned): the Evacuate waits in NodeDraining.
    await sim.runtime.put('Maintenance Requested', maintenanceRequested('node-1'));
    const [evacuation] = sim.runtime.executionsFor('req-node-1');
    assert.ok(evacuation);
    await waitUntil('the drain is blocked by the budget', () =>
      sim.taskCalls.some((call) => call.error?.name === 'NotYetDone' && /PodDisruptionBudget/.test(call.error.message)),
    );
    await sim.runtime.put('Maintenance Ended', maintenanceEnded('node-1'));
    assert.equal(failureOf(await evacuation.outcome).name, 'EvacuationCancelled');
    await sim.runtime.settle();
    const record = await readRecord(sim, 'req-node-1');
    assert.equal(record.status?.phase, 'NodeDraining', 'a cancelled Evacuate keeps its phase');
    assert.ok(record.status?.restore?.finishedAt, 'the Restore is marked on the record');

    const mark = sim.sim.requestLog.mark();
    await assert.rejects(
      sim.runtime.deps.progress.requestAbort('req-node-1', 'operator@example.com', new Date(), 'node-1'),
      (error: Error) => {
        assert.equal(error.name, 'InvalidInput');
        assert.match(
          `${error.message} ${JSON.stringify(error)}`,
          /no running or held request "req-node-1": a Restore of it ran/,
        );
        return true;
      },
    );
    assertNoWrites(sim.sim, mark, 'the refused abort', DRAINBRIDGE_SA);
  });
});
