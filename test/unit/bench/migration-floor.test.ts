/** The floor of a node's live migrations under KubeVirt's limits (bench/lib/migration-floor.ts). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { migrationFloor, migrationSeconds } from '../../../bench/lib/migration-floor.ts';

const steps = {
  podStartupSeconds: 2,
  targetPreparationSeconds: 1,
  migrationStartSeconds: 0.5,
  transferBaseSeconds: 2,
  transferSecondsPerGiB: 1,
};

const job = (key: string, seconds: number) => ({ key, memoryGiB: 0, seconds });

describe('migrationFloor', () => {
  it('a migration takes the fixed steps plus the transfer, proportional to memory', () => {
    assert.equal(migrationSeconds(1, steps), 6.5);
    assert.equal(migrationSeconds(16, steps), 21.5);
  });

  it('longest first over two slots: the big VMs start at once and the small ones fill in', () => {
    const floor = migrationFloor([job('a', 2), job('b', 10), job('c', 3), job('d', 7), job('e', 2)], 2);
    assert.deepEqual(floor.schedule, [
      ['b', 'a'],
      ['d', 'c', 'e'],
    ]);
    assert.equal(floor.seconds, 12);
    assert.equal(floor.lowerBoundSeconds, 12);
  });

  it('one VM longer than the rest together bounds it from below', () => {
    const floor = migrationFloor([job('big', 30), job('x', 5), job('y', 5)], 2);
    assert.equal(floor.seconds, 30);
    assert.equal(floor.lowerBoundSeconds, 30);
  });

  it('one slot: the migrations one after another', () => {
    assert.equal(migrationFloor([job('a', 4), job('b', 6)], 1).seconds, 10);
  });

  it('refuses a slot count that is not a positive integer', () => {
    assert.throws(() => migrationFloor([job('a', 1)], 0), /positive integer/);
  });
});
