/**
 * The CLI's progress lines about VMs (embedded/progress.ts), as the KubeVirt branch feeds them: a pass's
 * line with its migrations in flight, and the `Evacuation Progress` event's VMs line. Only the functions'
 * output is checked (where the lines are printed may change).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { busLine, passLine } from '../../../embedded/progress.ts';

test('a KubeVirt pass: moved of total, in flight, one clause per migration under way', () => {
  const line = passLine({
    branch: 'kubevirt',
    done: false,
    progress: { total: 6, moved: 2, inFlight: 2, skipped: 1 },
    detail: ['vms/app-3 Running node-1 → node-2 (40 s)', 'vms/app-4 Scheduling node-1 → ? (3 s)'],
  });
  assert.equal(
    line,
    'kubevirt: 2/6 VMs moved, 2 in flight, 1 skipped (vms/app-3 Running node-1 → node-2 (40 s); vms/app-4 Scheduling node-1 → ? (3 s))',
  );
  assert.equal(
    passLine({ branch: 'kubevirt', done: true, progress: { total: 6, moved: 6, inFlight: 0, skipped: 0 } }),
    'kubevirt: 6/6 VMs moved — done',
  );
  assert.equal(passLine({ branch: 'kubevirt' }), undefined, 'no counts, no line');
});

test('a branch that ended with nothing to do prints no line; one still working on nothing yet does', () => {
  const none = { total: 0, moved: 0, inFlight: 0, skipped: 0 };
  assert.equal(passLine({ branch: 'nova', done: true, progress: none }), undefined);
  assert.equal(passLine({ branch: 'pods', done: false, progress: none }), 'pods: 0/0 pods evicted');
  assert.equal(
    passLine({ branch: 'pods', done: true, progress: { ...none, skipped: 1 } }),
    'pods: 0/0 pods evicted, 1 skipped — done',
  );
});

test("an Evacuation Progress event's VMs: counts by status, then each migrating VM's phase, source and target", () => {
  const vms = [
    { name: 'vms/app-1', status: 'moved', sourceNode: 'node-1', targetNode: 'node-3' },
    { name: 'vms/app-2', status: 'migrating', phase: 'Running', sourceNode: 'node-1', targetNode: 'node-2' },
    { name: 'vms/app-3', status: 'migrating', sourceNode: 'node-1' },
    { name: 'vms/legacy', status: 'blocked', sourceNode: 'node-1' },
  ];
  assert.equal(
    busLine('Evacuation Progress', { nodeName: 'node-1', vms }),
    'VMs: 1 moved, 2 migrating, 1 blocked (vms/app-2 Running node-1 → node-2; vms/app-3 Pending node-1 → ?)',
  );
  assert.equal(
    busLine('Evacuation Progress', { nodeName: 'node-1', vms: vms.slice(0, 1) }),
    'VMs: 1 moved',
    'nothing migrating: no parenthesis',
  );
  assert.equal(
    busLine('Evacuation Progress', { nodeName: 'node-1', phase: 'NodeDraining' }),
    'phase NodeDraining (node node-1)',
  );
});
