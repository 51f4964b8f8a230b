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

describe('EmbeddedExecutor abort', () => {
  it('calls no task after abort, even inside a Retry loop', async () => {
    let calls = 0;
    const executor = new EmbeddedExecutor(
      { polling: POLLING },
      {
        poll: async () => {
          calls++;
          throw Object.assign(new Error('nothing changed'), { name: 'NotYetDone' });
        },
      },
      { retryIntervalMs: 5 },
    );
    const execution = executor.start('polling', {});
    const settled = execution.result.catch((error: unknown) => error);
    while (calls < 3) await new Promise((resolve) => setTimeout(resolve, 5));
    execution.abort();
    await settled;
    const atAbort = calls;
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.ok(calls <= atAbort + 1, `the task was called ${calls - atAbort} more time(s) after abort`);
  });
});
