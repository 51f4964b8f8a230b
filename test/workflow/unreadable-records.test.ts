/**
 * Issue 12, item 1, through the packaged state machines against the simulator: a damaged ledger is a
 * blocker. Mid-drain it stops that evacuation with the cause named (Evacuation Failed, a node Event, the
 * Evacuation record) and the node still counts as held, so no second node is admitted past the limit;
 * a Restore or a new request changes nothing on the node; `drainbridge repair` (with --yes) rewrites it,
 * and then Restore ends the maintenance and the waiting request is admitted.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, it } from 'node:test';
import { isSlotWait } from '../../lib/errors/registry.ts';
import { HOLD_ANNOTATIONS, LEDGER_ANNOTATION } from '../../lib/node/ledger.ts';
import { drainbridge } from '../support/cli.ts';
import { watchInvariants } from '../support/invariants.ts';
import { DRAINBRIDGE_SA } from '../support/request-log.ts';
import { waitUntil } from '../support/wait.ts';
import {
  eventsOf,
  failureOf,
  maintenanceEnded,
  maintenanceRequested,
  readNodeAsAdmin,
  readRecord,
  startWorkflowSim,
  type WorkflowSim,
} from './harness.ts';
import { WORKFLOW_SCENARIO } from './scenario.ts';

const NODES = { group: '', resource: 'nodes' };
const DAMAGE = '{"holds": "req-node-1", "released": {}}';

/** Writes the damaged ledger straight into the store (a person's bad `kubectl annotate --overwrite`). */
function damageLedger(w: WorkflowSim, node: string, text = DAMAGE): void {
  w.sim.store.mutate(NODES, { name: node }, (copy) => {
    copy.metadata.annotations = { ...copy.metadata.annotations, [LEDGER_ANNOTATION]: text };
    return copy;
  });
}

function ledgerText(w: WorkflowSim, node: string): string | undefined {
  return w.sim.store.get(NODES, undefined, node)?.metadata.annotations?.[LEDGER_ANNOTATION];
}

function nodeEvents(w: WorkflowSim, node: string, reason: string): string[] {
  return w.sim.store
    .list({ group: '', resource: 'events' }, { namespace: 'default' })
    .items.filter((e) => (e as { involvedObject?: { name?: string } }).involvedObject?.name === node)
    .filter((e) => (e as { reason?: string }).reason === reason)
    .map((e) => String((e as { message?: string }).message));
}

function adminKubeconfig(w: WorkflowSim): string {
  const path = join(mkdtempSync(join(tmpdir(), 'drainbridge-repair-')), 'admin.kubeconfig');
  writeFileSync(path, w.sim.kubeconfig(), { mode: 0o600 });
  return path;
}

describe('issue 12 item 1: an unreadable ledger is a blocker (packaged state machines, simulator)', () => {
  let w: WorkflowSim | undefined;
  afterEach(async () => {
    await w?.stop();
    w = undefined;
  });

  it('issue 12 item 1: damaged mid-drain, the evacuation fails naming the ledger, no second node is admitted; repair + restore recover', async () => {
    const sim = await startWorkflowSim(WORKFLOW_SCENARIO);
    w = sim;
    const invariants = watchInvariants(sim.sim, { maxHeldNodes: 1 });
    await sim.runtime.put('Maintenance Requested', maintenanceRequested('node-1'));
    const [evacuate] = sim.runtime.executionsFor('req-node-1');
    assert.ok(evacuate);
    await waitUntil('the pod branch is blocked by the PDB', () =>
      sim.taskCalls.some((call) => call.error?.name === 'NotYetDone' && /PodDisruptionBudget/.test(call.error.message)),
    );
    damageLedger(sim, 'node-1');
    const damagedAt = sim.sim.requestLog.mark();

    const outcome = await evacuate.outcome;
    assert.equal(failureOf(outcome).name, 'EvacuationFailed', 'the evacuation fails (it is not cancelled)');
    const [failed] = eventsOf(sim, 'Evacuation Failed', 'req-node-1');
    const error = failed?.error as { name: string; message: string } | undefined;
    assert.equal(error?.name, 'RecordUnreadable', 'the outcome event names the cause');
    assert.match(error?.message ?? '', /ledger \(node annotation drainbridge\.io\/ledger\): holds/);
    assert.match(error?.message ?? '', /drainbridge repair node-1/);
    assert.equal(ledgerText(sim, 'node-1'), DAMAGE, 'drainbridge left the damaged ledger exactly as it was');
    assert.equal((await readNodeAsAdmin(sim, 'node-1')).spec?.unschedulable, true, 'node-1 stays cordoned');
    const nodeWrites = sim.sim.requestLog
      .writes({ since: damagedAt, user: DRAINBRIDGE_SA, resource: 'nodes' })
      .map((r) => r.name);
    assert.deepEqual(nodeWrites, [], 'no node was written after the damage');
    assert.equal(nodeEvents(sim, 'node-1', 'RecordUnreadable').length, 1, 'a Warning Event on node-1');
    const record = await readRecord(sim, 'req-node-1');
    assert.equal(record.status?.blocked?.error, 'RecordUnreadable', 'the Evacuation record says so');
    assert.match(record.status?.firstBlocker ?? '', /RecordUnreadable/);

    // A second node waits: node-1 still counts as held (one slot configured).
    await sim.runtime.put('Maintenance Requested', maintenanceRequested('node-2'));
    await waitUntil('node-2 waits for a slot', () =>
      sim.taskCalls.some(
        (call) =>
          call.functionKey === 'admit' &&
          call.error !== undefined &&
          isSlotWait(call.error.name) &&
          /held: node-1/.test(call.error.message),
      ),
    );
    assert.equal(ledgerText(sim, 'node-2'), undefined, 'node-2 was not admitted');

    // Restore changes nothing on a damaged node and says why.
    const beforeRestore = sim.sim.requestLog.mark();
    await sim.runtime.put('Maintenance Ended', maintenanceEnded('node-1'));
    const restore = sim.runtime.executions.filter((e) => e.machine === 'restore').at(-1);
    assert.ok(restore);
    assert.equal(failureOf(await restore.outcome).name, 'RecordUnreadable');
    const restoreWrites = sim.sim.requestLog
      .writes({ since: beforeRestore, user: DRAINBRIDGE_SA, resource: 'nodes' })
      .map((r) => r.name);
    assert.deepEqual(restoreWrites, [], 'the Restore wrote nothing to the node');
    assert.equal(ledgerText(sim, 'node-1'), DAMAGE);

    // The operator repairs: the cordon was drainbridge's (managedFields), a hold keeps node-1 held.
    const kubeconfig = adminKubeconfig(sim);
    const repair = await drainbridge(['repair', 'node-1', '--yes', '--kubeconfig', kubeconfig], {
      env: { DRAINBRIDGE_NAMESPACE: 'drainbridge' },
    });
    assert.equal(repair.code, 0, repair.stderr);
    assert.match(repair.stdout, /holds: not a map|cannot be read: ledger/);
    assert.match(repair.stdout, /hold repaired-node-1 keeps it held/);
    assert.match(repair.stdout, /the cordon is drainbridge's \(managedFields\)/);
    for (const key of Object.keys(HOLD_ANNOTATIONS)) {
      assert.ok(repair.stdout.includes(`annotation ${key} is drainbridge's (managedFields)`), repair.stdout);
    }
    const repaired = JSON.parse(ledgerText(sim, 'node-1') ?? '{}');
    assert.deepEqual(Object.keys(repaired.holds), ['repaired-node-1']);
    assert.equal(nodeEvents(sim, 'node-1', 'RecordRepaired').length, 1);

    // Restore of the repaired hold uncordons node-1; node-2 then takes the slot.
    await sim.runtime.put('Maintenance Ended', maintenanceEnded('node-1', 'repaired-node-1'));
    const ended = sim.runtime.executions.filter((e) => e.machine === 'restore').at(-1);
    assert.ok(ended);
    assert.equal((await ended.outcome).ok, true);
    const restored = await readNodeAsAdmin(sim, 'node-1');
    assert.notEqual(restored.spec?.unschedulable, true, 'node-1 uncordoned');
    for (const key of Object.keys(HOLD_ANNOTATIONS)) {
      assert.equal(restored.metadata?.annotations?.[key], undefined, `${key} removed with the repaired hold`);
    }
    await waitUntil('node-2 is admitted', () => Boolean(ledgerText(sim, 'node-2')));
    invariants.assertHeld({ touchedByPeople: ['node-2', 'node-3'] });
    invariants.stop();
  });

  it('issue 12 item 1: a new request on a node with a damaged ledger writes nothing and names the record', async () => {
    const sim = await startWorkflowSim(WORKFLOW_SCENARIO);
    w = sim;
    damageLedger(sim, 'node-1', 'null');
    const mark = sim.sim.requestLog.mark();
    await sim.runtime.put('Maintenance Requested', maintenanceRequested('node-1', { requestId: 'late' }));
    const [execution] = sim.runtime.executionsFor('late');
    assert.ok(execution);
    assert.equal(failureOf(await execution.outcome).name, 'EvacuationFailed');
    const [failed] = eventsOf(sim, 'Evacuation Failed', 'late');
    assert.equal((failed?.error as { name?: string } | undefined)?.name, 'RecordUnreadable');
    const nodeWrites = sim.sim.requestLog.writes({ since: mark, user: DRAINBRIDGE_SA, resource: 'nodes' });
    assert.deepEqual(nodeWrites, [], 'no node was written');
    assert.equal(ledgerText(sim, 'node-1'), 'null', 'not recorded as "cordoned before drainbridge"');
  });
});
