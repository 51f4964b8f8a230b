import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EmbeddedExecutor, type MachineDefinition, timestampWaits } from '../../../embedded/executor.ts';
import { LOCAL_ARN_PREFIX } from '../../../embedded/extract.ts';

/** A task computes a start time; a Wait waits for it; a second task records when it ran. */
const TIMED: MachineDefinition = {
  StartAt: 'Plan',
  States: {
    Plan: { Type: 'Task', Resource: `${LOCAL_ARN_PREFIX}plan`, ResultPath: '$.start', Next: 'WaitForStart' },
    WaitForStart: { Type: 'Wait', TimestampPath: '$.start.at', Next: 'Go' },
    Go: { Type: 'Task', Resource: `${LOCAL_ARN_PREFIX}go`, End: true },
  } as MachineDefinition['States'],
};

describe('Wait states on a timestamp, on a simulated clock', () => {
  it('finds the task that writes the timestamp and the path inside its result', () => {
    assert.deepEqual(timestampWaits(TIMED), [{ wait: 'WaitForStart', writers: [{ task: 'Plan', path: ['at'] }] }]);
  });

  it('waits until the simulated clock reaches the timestamp, at its speed', async () => {
    const speed = 600; // 10 simulated minutes per real second
    const realStart = performance.now();
    const simStart = Date.parse('2026-11-21T10:00:00Z');
    const clock = { speed, now: () => simStart + (performance.now() - realStart) * speed };
    const startAt = simStart + 5 * 60_000; // 5 simulated minutes: 0.5 s real
    let ranAt: number | undefined;
    const executor = new EmbeddedExecutor(
      { timed: TIMED },
      {
        plan: async () => ({ at: new Date(startAt).toISOString() }),
        go: async () => {
          ranAt = clock.now();
          return {};
        },
      },
      { waitMs: 0, waitClock: clock },
    );
    await executor.start('timed', {}).result;
    assert.ok(ranAt !== undefined && ranAt >= startAt, 'ran no earlier than the timestamp');
    // Late by at most 5 simulated minutes (0.5 s of real time, room for a loaded machine's scheduling): a
    // wait on the real clock instead would take 5 real minutes and time the test out.
    assert.ok(
      (ranAt ?? 0) - startAt < 5 * 60_000,
      `ran within five simulated minutes of it (${(ranAt ?? 0) - startAt} ms late)`,
    );
  });
});
