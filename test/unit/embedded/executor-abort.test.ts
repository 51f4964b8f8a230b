/**
 * Abort of an embedded execution: no task handler runs after it, even inside a Retry loop. Checked by
 * waiting for observable events (issue 12 item 7: a fixed sleep followed by "nothing happened" proves
 * nothing): the interpreter coming back to the task and being refused, and the execution settling with
 * no handler still running.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EmbeddedExecutor, type MachineDefinition } from '../../../embedded/executor.ts';
import { LOCAL_ARN_PREFIX } from '../../../embedded/extract.ts';

/** A pass that never finishes, retried the way the Evacuate machine retries NotYetDone. */
const POLLING: MachineDefinition = {
  StartAt: 'Poll',
  States: {
    Poll: {
      Type: 'Task',
      Resource: `${LOCAL_ARN_PREFIX}poll`,
      Retry: [{ ErrorEquals: ['NotYetDone'], IntervalSeconds: 1, BackoffRate: 1.5, MaxAttempts: 5000 }],
      End: true,
    },
  } as MachineDefinition['States'],
};

/** A promise and the function that resolves it: an event to wait for. */
function signal(): { wait: Promise<void>; fire: () => void } {
  let fire = () => {};
  const wait = new Promise<void>((resolve) => {
    fire = resolve;
  });
  return { wait, fire };
}

describe('EmbeddedExecutor abort', () => {
  it('issue 12 item 7: calls no task after abort, even inside a Retry loop (waits for the refusal, not a timer)', {
    timeout: 10_000,
  }, async () => {
    let calls = 0;
    const third = signal();
    const refused = signal();
    const executor = new EmbeddedExecutor(
      { polling: POLLING },
      {
        poll: async () => {
          calls++;
          if (calls === 3) third.fire();
          throw Object.assign(new Error('nothing changed'), { name: 'NotYetDone' });
        },
      },
      { retryIntervalMs: 5, onRefused: () => refused.fire() },
    );
    const execution = executor.start('polling', {});
    const settled = execution.result.catch((error: unknown) => error);
    await third.wait;
    execution.abort();
    const atAbort = calls;
    // The interpreter comes back to the task (its Retry loop) and is refused: no handler runs.
    await refused.wait;
    await settled;
    await execution.settled;
    assert.equal(calls, atAbort, `the task was called ${calls - atAbort} more time(s) after abort`);
  });
});
