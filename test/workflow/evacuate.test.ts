import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { maintenanceRequested, startWorkflowSim, type WorkflowSim } from './harness.ts';
import { WORKFLOW_SCENARIO } from './scenario.ts';

async function podsOn(w: WorkflowSim, node: string): Promise<V1Pod[]> {
  const list = await w.admin.core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${node}` });
  return list.items.filter((pod) => !pod.metadata?.deletionTimestamp);
}

async function node(w: WorkflowSim, name: string): Promise<V1Node> {
  return w.admin.core.readNode({ name });
}

async function openSpareNodes(w: WorkflowSim): Promise<void> {
  for (const name of ['node-2', 'node-3']) {
    await w.admin.patchNode(name, { spec: { unschedulable: false } });
  }
}

describe('Evacuate and Restore through the packaged state machines', () => {
  let w: WorkflowSim;
  before(async () => {
    w = await startWorkflowSim(WORKFLOW_SCENARIO);
  });
  after(async () => {
    await w?.stop();
  });

  it('evacuates node-1 through PDB waits, then restores it', async () => {
    await openSpareNodes(w);
    await w.runtime.put('Maintenance Requested', maintenanceRequested('node-1'));
    const [execution] = w.runtime.executionsFor('req-node-1');
    assert.ok(execution, 'the bus rule started an Evacuate execution');
    const outcome = await execution.outcome;
    assert.equal(outcome.ok, true, outcome.ok ? '' : `${outcome.error.name}: ${outcome.error.message}`);

    const drained = await node(w, 'node-1');
    assert.equal(drained.spec?.unschedulable, true);
    assert.equal(drained.metadata?.annotations?.['drainbridge.io/phase'], 'NodeDrained');
    const left = await podsOn(w, 'node-1');
    assert.deepEqual(
      left.map((pod) => pod.metadata?.labels?.app),
      ['agent'],
      'only the DaemonSet pod stays',
    );
    const types = w.busEvents.map((e) => `${e.detailType}${e.detail.phase ? `:${e.detail.phase}` : ''}`);
    assert.deepEqual(
      types.filter((t) => t.startsWith('Evacuation')),
      [
        'Evacuation Progress:NodeCordoned',
        'Evacuation Progress:NodeDraining',
        'Evacuation Progress:NodeDrained',
        'Evacuation Succeeded',
      ],
    );
    console.log(
      `evacuation of node-1: ${execution.stats.stateTransitions} state transitions, ${execution.stats.lambdaInvocations} Lambda invocations (${execution.stats.lambdaErrors} NotYetDone/errors)`,
    );

    await w.runtime.put('Maintenance Ended', {
      version: '1',
      requestId: 'req-node-1',
      requester: 'test',
      origin: 'manual',
      target: { nodeName: 'node-1' },
    });
    await w.runtime.settle();
    const restore = w.runtime.executions.find((e) => e.machine === 'restore');
    assert.ok(restore);
    const restored = await restore.outcome;
    assert.equal(restored.ok, true, restored.ok ? '' : `${restored.error.name}: ${restored.error.message}`);
    const back = await node(w, 'node-1');
    assert.notEqual(back.spec?.unschedulable, true, 'node-1 is schedulable again');
    assert.equal(back.metadata?.annotations?.['drainbridge.io/phase'], 'NodeUncordoned');
    const restoredEvent = w.busEvents.find((e) => e.detailType === 'Node Restored');
    assert.equal(restoredEvent?.detail.uncordoned, true);
    assert.equal(restoredEvent?.detail.lastHold, true);
  });
});
