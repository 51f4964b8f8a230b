/**
 * Issue 12, item 4: a person's cordon over drainbridge's. With the real kubectl against the simulator
 * (which records managedFields as the apiserver does): a cordon written after drainbridge's is told from
 * drainbridge's own and kept by Restore; `kubectl cordon` on a node drainbridge already cordoned writes
 * nothing, so it cannot be told and Restore uncordons — documented in lib/node/field-owner.ts. Without
 * kubectl the cases skip, except under CI=true, where that fails.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { findKubectl, Kubectl } from '../fidelity/kubectl-runner.ts';
import {
  DRAINBRIDGE_USER,
  eventsOf,
  failureOf,
  maintenanceEnded,
  maintenanceRequested,
  openSpareNodes,
  readNodeAsAdmin,
  startWorkflowSim,
  type WorkflowSim,
} from './harness.ts';
import { IDLE_NODES_SCENARIO } from './scenario.ts';

async function evacuate(w: WorkflowSim, node: string, requestId: string): Promise<void> {
  await w.runtime.put('Maintenance Requested', maintenanceRequested(node, { requestId }));
  const [execution] = w.runtime.executionsFor(requestId);
  assert.ok(execution);
  const outcome = await execution.outcome;
  assert.equal(outcome.ok, true, `${failureOf(outcome).name}: ${failureOf(outcome).message}`);
}

async function restore(w: WorkflowSim, node: string, requestId: string): Promise<Record<string, unknown>> {
  await w.runtime.put('Maintenance Ended', maintenanceEnded(node, requestId));
  const execution = w.runtime.executions.filter((e) => e.machine === 'restore' && e.requestId === requestId).at(-1);
  assert.ok(execution);
  const outcome = await execution.outcome;
  assert.equal(outcome.ok, true, `${failureOf(outcome).name}: ${failureOf(outcome).message}`);
  const [restored] = eventsOf(w, 'Node Restored', requestId);
  assert.ok(restored);
  return restored;
}

describe('issue 12 item 4: a person cordons over drainbridge (real kubectl, managedFields)', () => {
  const binary = findKubectl();
  // Without kubectl these cases skip on a developer's machine; under CI=true that is a failure: the case
  // for item 4 must run where the suite is trusted.
  if (!binary && process.env.CI === 'true') {
    it('kubectl is present in CI', () => assert.fail('kubectl not found and CI=true: the cordon-owner cases must run'));
  }
  let w: WorkflowSim;
  let kubectl: Kubectl;
  before(async () => {
    w = await startWorkflowSim(IDLE_NODES_SCENARIO);
    await openSpareNodes(w);
    kubectl = new Kubectl(binary ?? 'kubectl', w.sim.kubeconfig());
  });
  after(async () => {
    kubectl?.close();
    await w?.stop();
  });

  it('drainbridge cordons as field manager "drainbridge"', { skip: !binary }, async () => {
    await evacuate(w, 'node-1', 'req-owner-1');
    const node = await readNodeAsAdmin(w, 'node-1');
    const owner = node.metadata?.managedFields?.find((e) => JSON.stringify(e.fieldsV1).includes('"f:unschedulable"'));
    assert.equal(owner?.manager, 'drainbridge');
  });

  it('issue 12 item 4: uncordoned and cordoned again by a person after drainbridge: Restore keeps the cordon and says why', {
    skip: !binary,
  }, async () => {
    assert.equal((await kubectl.run(['uncordon', 'node-1'])).code, 0);
    assert.equal((await kubectl.run(['cordon', 'node-1'])).code, 0);
    const restored = await restore(w, 'node-1', 'req-owner-1');
    assert.equal(restored.lastHold, true);
    assert.equal(restored.uncordoned, false, "the person's cordon is not undone");
    assert.match(JSON.stringify(restored.leftAlone), /kubectl cordoned it after drainbridge did/);
    assert.equal((await readNodeAsAdmin(w, 'node-1')).spec?.unschedulable, true, 'node-1 stays cordoned');
  });

  it('cannot be told: `kubectl cordon` on a node drainbridge cordoned writes nothing; Restore uncordons (documented)', {
    skip: !binary,
  }, async () => {
    await evacuate(w, 'node-2', 'req-owner-2');
    const mark = w.sim.requestLog.mark();
    const cordon = await kubectl.run(['cordon', 'node-2']);
    assert.equal(cordon.code, 0);
    assert.match(cordon.stdout, /already cordoned/);
    const writes = w.sim.requestLog.writes({ since: mark, resource: 'nodes' });
    assert.deepEqual(writes, [], 'the person left no trace in the API');
    const restored = await restore(w, 'node-2', 'req-owner-2');
    assert.equal(restored.uncordoned, true);
    assert.equal(
      w.sim.requestLog.writes({ since: mark, user: DRAINBRIDGE_USER, resource: 'nodes' }).length > 0,
      true,
      'drainbridge wrote the uncordon',
    );
  });
});
