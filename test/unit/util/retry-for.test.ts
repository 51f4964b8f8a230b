/** withRetryFor: retries a retryable error until its time budget is spent, never a non-retryable one. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { withRetryFor } from '../../../lib/util/retry.ts';

/** A fake clock the sleeps advance. */
function clock() {
  let now = 0;
  const sleep = async (ms: number): Promise<void> => {
    now += ms;
  };
  return { now: () => now, sleep };
}

const failing = (times: number, error: Error) => {
  let calls = 0;
  const call = async () => {
    calls++;
    if (calls <= times) throw error;
    return 'ok';
  };
  return { call, calls: () => calls };
};

describe('withRetryFor', () => {
  const base = {
    baseDelayMs: 500,
    maxDelayMs: 4_000,
    random: () => 1,
    isRetryable: (e: unknown) => (e as Error).name === 'T',
  };
  const transient = Object.assign(new Error('429'), { name: 'T' });

  test('a fault shorter than the budget is ridden out, however many attempts it takes', async () => {
    const c = clock();
    const f = failing(8, transient);
    assert.equal(await withRetryFor(f.call, { ...base, budgetMs: 30_000, ...c }), 'ok');
    assert.equal(f.calls(), 9);
  });

  test('a fault that outlasts the budget ends it with the error', async () => {
    const c = clock();
    const f = failing(1_000, transient);
    await assert.rejects(withRetryFor(f.call, { ...base, budgetMs: 10_000, ...c }), /429/);
    assert.ok(c.now() >= 10_000 && c.now() < 14_000, `stopped once the budget was spent (${c.now()} ms)`);
  });

  test('an error that cannot pass is not retried', async () => {
    const c = clock();
    const f = failing(1, new Error('403'));
    await assert.rejects(withRetryFor(f.call, { ...base, budgetMs: 30_000, ...c }), /403/);
    assert.equal(f.calls(), 1);
  });
});
