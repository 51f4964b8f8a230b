import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CONFLICT_RETRY, retryOnConflict } from '../../../lib/clients/kube/conflict.ts';
import { ConflictError, TransientError } from '../../../lib/errors/index.ts';

/** An attempt that fails with `errors` in turn, then returns its call count. */
function attempts(errors: readonly Error[]) {
  const state = { calls: 0 };
  const attempt = async () => {
    const error = errors[state.calls++];
    if (error) throw error;
    return state.calls;
  };
  return { state, attempt };
}

describe('retryOnConflict', () => {
  it('runs the attempt again after a 409, with a growing jittered pause between', async () => {
    const delays: number[] = [];
    const { state, attempt } = attempts([new ConflictError('a'), new ConflictError('b')]);
    const result = await retryOnConflict(attempt, { random: () => 0.999, sleep: async (ms) => void delays.push(ms) });
    assert.equal(result, 3);
    assert.equal(state.calls, 3);
    assert.deepEqual(delays, [9, 19]);
  });

  it('gives up after the bounded number of attempts with the last ConflictError', async () => {
    const conflicts = Array.from({ length: 10 }, (_, i) => new ConflictError(`conflict ${i + 1}`));
    const { state, attempt } = attempts(conflicts);
    await assert.rejects(retryOnConflict(attempt, { sleep: async () => {} }), /conflict 5/);
    assert.equal(state.calls, CONFLICT_RETRY.attempts);
    const three = attempts(conflicts);
    await assert.rejects(retryOnConflict(three.attempt, { attempts: 3, sleep: async () => {} }), /conflict 3/);
    assert.equal(three.state.calls, 3);
  });

  it('throws any other error at once', async () => {
    const { state, attempt } = attempts([new TransientError('503'), new ConflictError('never reached')]);
    await assert.rejects(retryOnConflict(attempt, { sleep: async () => {} }), TransientError);
    assert.equal(state.calls, 1);
  });
});
