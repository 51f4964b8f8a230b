/** The physical floor of a drain (bench/lib/floor.ts): waves behind budgets, grace periods, endless waits. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type FloorBudget, type FloorPod, physicalFloor } from '../../../bench/lib/floor.ts';

const timings = { startupSeconds: 2, readinessSeconds: 0, speed: 1 };

function pods(app: string, count: number, replacement: FloorPod['replacement'], graceSeconds = 30): FloorPod[] {
  return Array.from({ length: count }, (_, i) => ({
    key: `apps/${app}-${i}`,
    namespace: 'apps',
    labels: { app },
    graceSeconds,
    replacement,
  }));
}

function budget(app: string, disruptionsAllowed: number): FloorBudget {
  return { namespace: 'apps', name: app, selector: { matchLabels: { app } }, disruptionsAllowed };
}

describe('physicalFloor', () => {
  it("busy-node: the StatefulSet chain behind maxUnavailable 1 sets it (2 × (30 + 2) + 30 s), not api's 20 waves", () => {
    const floor = physicalFloor(
      [
        ...pods('web', 30, 'when-terminating'),
        ...pods('api', 20, 'when-terminating'),
        ...pods('queue', 3, 'when-gone'),
        ...pods('debug', 5, 'never'),
      ],
      [budget('web', 6), budget('api', 1), budget('queue', 1)],
      timings,
    );
    assert.equal(floor.simulatedSeconds, 94);
    assert.equal(floor.wallSeconds, 94);
    assert.equal(floor.critical?.what, 'PDB apps/queue');
    const api = floor.groups.find((group) => group.what === 'PDB apps/api');
    assert.deepEqual([api?.waves, api?.seconds], [20, 19 * 2 + 30]);
    const web = floor.groups.find((group) => group.what === 'PDB apps/web');
    assert.deepEqual([web?.waves, web?.seconds], [5, 4 * 2 + 30]);
  });

  it('scales with the simulator speed: 94 simulated s at speed 5 is 18.8 s', () => {
    const floor = physicalFloor(pods('db', 3, 'when-gone'), [budget('db', 1)], { ...timings, speed: 5 });
    assert.equal(floor.wallSeconds, 94 / 5);
  });

  it('pods without a budget, or all in one wave, leave within the longest grace period', () => {
    const floor = physicalFloor(
      [...pods('bare', 2, 'never', 45), ...pods('web', 3, 'when-terminating', 10)],
      [budget('web', 5)],
      timings,
    );
    assert.equal(floor.simulatedSeconds, 45);
  });

  it('has no floor when a budget allows nothing or a pod is under two budgets', () => {
    assert.equal(physicalFloor(pods('web', 2, 'when-terminating'), [budget('web', 0)], timings).wallSeconds, undefined);
    const twice = [budget('web', 1), { ...budget('web', 1), name: 'web-too' }];
    assert.equal(physicalFloor(pods('web', 1, 'when-terminating'), twice, timings).wallSeconds, undefined);
  });
});
