import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { observedSecondsPerItem } from '../../../lib/branches/contract/estimates.ts';
import type { EvacuationObject } from '../../../lib/clients/kube/paths.ts';
import { type EstimateFacts, estimateEvacuation, typicalSeconds } from '../../../lib/model/estimate.ts';
import { PLAN_ROUND_EVENTS } from '../../../lib/workflow/history-budget.ts';
import { lateWarning, planStart, REPLAN_WITHIN_SECONDS } from '../../../lib/workflow/start-time.ts';

const NOW = new Date('2026-11-21T10:00:00Z');
const minutes = (n: number) => new Date(NOW.getTime() + n * 60_000);

describe('planStart: notBefore − estimate − margin', () => {
  it('an Azure Reboot 15 min ahead, 2 min estimate, 5 min margin: starts 8 min from now', () => {
    const decision = planStart({ notBefore: minutes(15), now: NOW, estimateSeconds: 120, marginSeconds: 300 });
    assert.equal(decision.startAt.toISOString(), minutes(8).toISOString());
    assert.equal(decision.waitUntil.toISOString(), decision.startAt.toISOString());
    assert.equal(decision.final, true);
    assert.equal(decision.late, false);
  });

  it('less time left than the margin but more than the estimate: at once, not late', () => {
    const decision = planStart({ notBefore: minutes(4), now: NOW, estimateSeconds: 120, marginSeconds: 300 });
    assert.equal(decision.startAt.getTime(), NOW.getTime());
    assert.equal(decision.late, false);
  });

  it('less time left than the estimate: at once, late, with a warning that says so', () => {
    const decision = planStart({ notBefore: minutes(1), now: NOW, estimateSeconds: 120, marginSeconds: 300 });
    assert.equal(decision.startAt.getTime(), NOW.getTime());
    assert.equal(decision.late, true);
    assert.match(
      lateWarning('node-2', decision, 120),
      /estimated to take 120 s but only 60 s are left .* not finish in time/,
    );
  });

  it('a notice a week ahead is planned again on the way, halving the wait, until within the hour', () => {
    let now = NOW;
    const notBefore = minutes(7 * 24 * 60);
    const waits: number[] = [];
    for (let step = 0; step < 30; step++) {
      const decision = planStart({ notBefore, now, estimateSeconds: 600, marginSeconds: 300 });
      assert.equal(decision.startAt.toISOString(), new Date(notBefore.getTime() - 900_000).toISOString());
      if (decision.final) break;
      waits.push((decision.waitUntil.getTime() - now.getTime()) / 1000);
      assert.ok(decision.startAt.getTime() - decision.waitUntil.getTime() >= REPLAN_WITHIN_SECONDS * 1000);
      now = decision.waitUntil;
    }
    assert.ok(waits.length >= 3 && waits.length <= 10, `planned ${waits.length + 1} times`);
  });
});

const FACTS: EstimateFacts = {
  podBranches: [
    {
      branch: 'pods',
      stage: 'parallel',
      pods: [
        ...['a', 'b', 'c', 'd', 'e'].map((n) => ({ key: `shop/web-${n}`, graceSeconds: 30, budget: 'shop/web' })),
        { key: 'shop/batch', graceSeconds: 120 },
      ],
    },
    { branch: 'infra-pods', stage: 'after-vms', pods: [{ key: 'openstack/nova-compute', graceSeconds: 60 }] },
  ],
  budgets: [{ key: 'shop/web', disruptionsAllowed: 2 }],
  vmBranches: [{ branch: 'nova', count: 3, secondsPerVm: 90, observed: true }],
  podReadySeconds: 20,
};

describe('estimateEvacuation', () => {
  it('pods under a PDB go in waves; VMs count × seconds; the parallel stage takes its longest branch, then infra pods', () => {
    const estimate = estimateEvacuation(FACTS);
    // shop/web: 5 pods, 2 at a time → 3 waves: 3 × 30 + 2 × 20 = 130 s; batch alone: 120 s; nova: 270 s.
    const pods = estimate.branches.find((b) => b.branch === 'pods');
    assert.equal(pods?.seconds, 130);
    assert.match(pods?.basis ?? '', /3 wave\(s\) of 2 under PDB shop\/web/);
    assert.equal(estimate.branches.find((b) => b.branch === 'nova')?.seconds, 270);
    assert.equal(estimate.seconds, 270 + 60);
  });

  it('a budget allowing no disruption now still lets one pod go per wave', () => {
    const estimate = estimateEvacuation({
      ...FACTS,
      budgets: [{ key: 'shop/web', disruptionsAllowed: 0 }],
      vmBranches: [],
    });
    assert.equal(estimate.branches.find((b) => b.branch === 'pods')?.seconds, 5 * 30 + 4 * 20);
  });

  it('an empty node takes no time', () => {
    const estimate = estimateEvacuation({ podBranches: [], budgets: [], vmBranches: [], podReadySeconds: 30 });
    assert.equal(estimate.seconds, 0);
  });
});

function record(branch: string, entry: Record<string, unknown>): EvacuationObject {
  return {
    apiVersion: 'drainbridge.io/v1alpha1',
    kind: 'Evacuation',
    metadata: { name: `r-${Math.random()}` },
    spec: { requestId: 'r', nodeName: 'n' },
    status: { branches: { [branch]: { version: '1', state: null, ...entry } } },
  };
}

describe('seconds per VM observed on this cluster', () => {
  it('is the median of recent finished branches (time / moved), ignoring unfinished ones and those that moved nothing', () => {
    const records = [
      record('nova', { moved: 2, startedAt: '2026-11-20T10:00:00Z', finishedAt: '2026-11-20T10:04:00Z' }), // 120
      record('nova', { moved: 4, startedAt: '2026-11-19T10:00:00Z', finishedAt: '2026-11-19T10:04:00Z' }), // 60
      record('nova', { moved: 1, startedAt: '2026-11-18T10:00:00Z', finishedAt: '2026-11-18T10:15:00Z' }), // 900
      record('nova', { moved: 3, startedAt: '2026-11-21T10:00:00Z' }),
      record('nova', { moved: 0, startedAt: '2026-11-21T10:00:00Z', finishedAt: '2026-11-21T10:00:01Z' }),
      record('pods', { moved: 9, startedAt: '2026-11-21T10:00:00Z', finishedAt: '2026-11-21T10:00:09Z' }),
    ];
    assert.equal(observedSecondsPerItem(records, 'nova'), 120);
    assert.equal(observedSecondsPerItem(records, 'kubevirt'), undefined);
    assert.equal(typicalSeconds([10, 30]), 20);
  });
});

describe('the packaged Evacuate machine plans the start', () => {
  const definitions = JSON.parse(
    readFileSync(new URL('../../../state-machines/definitions.json', import.meta.url), 'utf8'),
  );
  const states = definitions.stateMachines.evacuate.States as Record<string, Record<string, unknown>>;

  it('PlanStart → startedAt → count the round → Wait on the planned timestamp → start or plan again', () => {
    assert.equal(states.PlanStart?.ResultPath, '$.start');
    assert.deepEqual(
      [states.PlanStart?.Next, states.StartsAt?.Next, states.PlanCounted?.Next, states.WaitForStart?.Next],
      ['StartsAt', 'PlanCounted', 'WaitForStart', 'StartNow'],
    );
    assert.equal(states.StartsAt?.InputPath, '$.start.startAt');
    assert.equal(states.StartsAt?.ResultPath, '$.startedAt');
    assert.equal(states.WaitForStart?.TimestampPath, '$.start.waitUntil');
    assert.deepEqual(states.PlanCounted?.Parameters, {
      'events.$': `States.MathAdd($.history.events, ${PLAN_ROUND_EVENTS})`,
    });
  });
});
