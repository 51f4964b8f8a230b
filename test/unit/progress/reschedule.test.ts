/** judgeRevision (lib/progress/reschedule.ts): what an execution does with a notice revision, against the record. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EvacuationObject } from '../../../lib/clients/kube/paths.ts';
import { KUBECTL_DRAIN_DEFAULTS, type ResolvedRequest } from '../../../lib/model/request.ts';
import { judgeRevision, MAX_RESCHEDULES, withReschedule } from '../../../lib/progress/reschedule.ts';

const NOW = new Date('2030-01-10T12:00:00.000Z');
const OLD_START = '2030-01-24T12:00:00.000Z';
const NEW_START = '2030-01-10T13:01:00.000Z';
const first = { key: `NotBefore ${OLD_START}`, at: '2030-01-10T11:00:00.000Z' };
const second = { key: `NotBefore ${NEW_START}`, at: '2030-01-10T11:59:00.000Z' };

function request(notBefore: string, revision?: ResolvedRequest['revision']): ResolvedRequest {
  return {
    requestId: 'aws-scheduled-events-node-1-e1',
    requester: 'drainbridge-node-agent/node-1',
    origin: 'aws',
    target: { nodeName: 'node-1' },
    reason: 'scheduled system-reboot',
    notBefore,
    drain: KUBECTL_DRAIN_DEFAULTS,
    nodeName: 'node-1',
    ...(revision ? { revision } : {}),
  };
}

function record(phase: string | undefined, revision?: ResolvedRequest['revision']): EvacuationObject {
  return {
    apiVersion: 'drainbridge.io/v1alpha1',
    kind: 'Evacuation',
    metadata: { name: 'r', resourceVersion: '3' },
    spec: {
      requestId: 'aws-scheduled-events-node-1-e1',
      nodeName: 'node-1',
      notBefore: OLD_START,
      ...(revision ? { revision } : {}),
    },
    status: { ...(phase ? { phase } : {}) },
  };
}

describe('judgeRevision', () => {
  it("the record's own revision, or none on either side: current", () => {
    assert.deepEqual(judgeRevision(request(OLD_START, first), record('MaintenanceScheduled', first), NOW), {
      kind: 'current',
    });
    assert.deepEqual(judgeRevision(request(OLD_START), record('MaintenanceScheduled'), NOW), { kind: 'current' });
  });

  it("an older revision than the record's: superseded, naming the live start", () => {
    const verdict = judgeRevision(request(OLD_START, first), record('MaintenanceScheduled', second), NOW);
    assert.equal(verdict.kind, 'superseded');
    assert.match(
      verdict.kind === 'superseded' ? verdict.message : '',
      /was rescheduled .* start 2030-01-24T12:00:00.000Z/,
    );
  });

  it('a request without a revision (a person resuming it by id) is never taken for a stale one', () => {
    assert.deepEqual(judgeRevision(request(OLD_START), record('NodeDraining', second), NOW), { kind: 'current' });
  });

  it('a move already noted as kept, sent again: unchanged (one note per move)', () => {
    const kept = record('NodeDrained', first);
    const third = { key: `NotBefore ${NEW_START}`, at: '2030-01-10T11:59:30.000Z' };
    const verdict = judgeRevision(request(NEW_START, second), kept, NOW);
    assert.equal(verdict.kind, 'kept');
    if (verdict.kind !== 'kept') return;
    const noted = { ...kept, status: { ...kept.status, reschedules: [verdict.reschedule] } };
    assert.equal(judgeRevision(request(NEW_START, third), noted, NOW).kind, 'unchanged');
  });

  it('a later revision with the same start (a resend, a restarted agent): unchanged', () => {
    const same = { key: `NotBefore ${OLD_START}`, at: second.at };
    assert.equal(
      judgeRevision(request('2030-01-24T12:00:00Z', same), record('MaintenanceScheduled', first), NOW).kind,
      'unchanged',
    );
  });

  it('a later revision moving the start before the evacuation started: replan, from and to recorded', () => {
    const verdict = judgeRevision(request(NEW_START, second), record('MaintenanceScheduled', first), NOW);
    assert.equal(verdict.kind, 'replan');
    if (verdict.kind !== 'replan') return;
    assert.equal(verdict.reschedule.from, OLD_START);
    assert.equal(verdict.reschedule.to, NEW_START);
    assert.equal(verdict.reschedule.outcome, 'replanned');
    assert.equal(verdict.reschedule.at, NOW.toISOString());
    // A record with no phase yet (PlanStart had not run) counts as not started.
    assert.equal(judgeRevision(request(NEW_START, second), record(undefined, first), NOW).kind, 'replan');
  });

  it('a later revision moving the start once the evacuation started: kept, the node stays drained', () => {
    for (const phase of ['NodeCordoned', 'NodeDraining', 'NodeDrained']) {
      const verdict = judgeRevision(request(NEW_START, second), record(phase, first), NOW);
      assert.equal(verdict.kind, 'kept', phase);
      if (verdict.kind === 'kept')
        assert.match(verdict.reschedule.message, /node stays drained until the maintenance ends/);
    }
  });
});

describe('judgeRevision under the restore policy (DRAINBRIDGE_NOTICE_RESTORE_GAP_SECONDS)', () => {
  const GAP = { restoreGapSeconds: 3 * 3600 };
  const drained = (start: string) => ({
    ...record('NodeDrained', first),
    spec: { ...record('NodeDrained', first).spec, notBefore: start },
  });
  const SOON = '2030-01-10T12:30:00.000Z';
  const FAR = '2030-01-13T12:00:00.000Z';

  it('a drained node whose start moved later, more than the gap away: restore, the move and the words recorded', () => {
    const verdict = judgeRevision(request(FAR, second), drained(SOON), NOW, GAP);
    assert.equal(verdict.kind, 'restore');
    if (verdict.kind !== 'restore') return;
    assert.equal(verdict.reschedule.outcome, 'restored');
    assert.equal(verdict.reschedule.from, SOON);
    assert.equal(verdict.reschedule.to, FAR);
    assert.match(
      verdict.reschedule.message,
      /^restored: maintenance moved to 2030-01-13T12:00:00.000Z \(> 10800 s away\); evacuating again from 2030-01-13T12:00:00.000Z − estimate/,
    );
  });

  it('kept drained: the policy off, the new start within the gap, moved earlier, not yet drained, or a Restore begun', () => {
    assert.equal(judgeRevision(request(FAR, second), drained(SOON), NOW).kind, 'kept', 'off by default');
    const withinGap = '2030-01-10T14:59:00.000Z';
    assert.equal(judgeRevision(request(withinGap, second), drained(SOON), NOW, GAP).kind, 'kept', 'within the gap');
    assert.equal(
      judgeRevision(request(FAR, second), drained('2030-01-20T12:00:00.000Z'), NOW, GAP).kind,
      'kept',
      'earlier',
    );
    for (const phase of ['NodeCordoned', 'NodeDraining', 'Failed']) {
      const busy = { ...drained(SOON), status: { phase } };
      assert.equal(judgeRevision(request(FAR, second), busy, NOW, GAP).kind, 'kept', phase);
    }
    const restoring = { ...drained(SOON), status: { phase: 'NodeDrained', restore: { startedAt: NOW.toISOString() } } };
    assert.equal(judgeRevision(request(FAR, second), restoring, NOW, GAP).kind, 'kept', 'a Restore begun');
  });

  it('before the evacuation started the gap changes nothing: replan', () => {
    assert.equal(judgeRevision(request(FAR, second), record('MaintenanceScheduled', first), NOW, GAP).kind, 'replan');
  });
});

describe('withReschedule', () => {
  it('keeps the last few moves, latest last', () => {
    const move = (n: number) => ({
      revision: `r${n}`,
      at: NOW.toISOString(),
      outcome: 'replanned' as const,
      message: `${n}`,
    });
    let moves = withReschedule(undefined, move(0));
    for (let n = 1; n < 8; n++) moves = withReschedule(moves, move(n));
    assert.equal(moves.length, MAX_RESCHEDULES);
    assert.equal(moves.at(-1)?.revision, 'r7');
  });
});
