/**
 * The embedded executor's `lambda:invoke.waitForTaskToken`: the function runs with a fresh task token,
 * the Task waits until the token is sent back or its TimeoutSeconds pass (States.Timeout, which the
 * definition catches: the fallback), and a token sent for a Task no longer waiting changes nothing.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EmbeddedExecutor, type LocalHandler, type MachineDefinition } from '../../../embedded/executor.ts';
import { LOCAL_ARN_PREFIX } from '../../../embedded/extract.ts';

/** Park (a callback Task with a 1 s fallback) → Woken, or → TimedOut when the token never comes back. */
const DEFINITION = {
  StartAt: 'Park',
  States: {
    Park: {
      Type: 'Task',
      Resource: 'arn:aws:states:::lambda:invoke.waitForTaskToken',
      Parameters: {
        FunctionName: `${LOCAL_ARN_PREFIX}park`,
        Payload: { 'who.$': '$.who', 'taskToken.$': '$$.Task.Token' },
      },
      TimeoutSeconds: 1,
      ResultPath: '$.woken',
      Catch: [{ ErrorEquals: ['States.Timeout'], ResultPath: '$.timedOut', Next: 'TimedOut' }],
      Next: 'Woken',
    },
    Woken: { Type: 'Pass', End: true },
    TimedOut: { Type: 'Pass', End: true },
  },
} as unknown as MachineDefinition;

function parking(): { handlers: Record<string, LocalHandler>; tokens: string[] } {
  const tokens: string[] = [];
  const park: LocalHandler = async (event) => {
    tokens.push((event as { taskToken: string }).taskToken);
    return { parked: true };
  };
  return { handlers: { park }, tokens };
}

describe('embedded waitForTaskToken', () => {
  it('a token sent back ends the wait at once with its output; each Task entry gets its own token', async () => {
    const { handlers, tokens } = parking();
    const executor = new EmbeddedExecutor({ m: DEFINITION }, handlers);
    const first = executor.start('m', { who: 'a' });
    const second = executor.start('m', { who: 'b' });
    while (executor.waitingForTokens < 2) await new Promise((resolve) => setTimeout(resolve, 5));
    assert.equal(new Set(tokens).size, 2, `two fresh tokens: ${tokens.join(', ')}`);
    const started = performance.now();
    assert.equal(executor.sendTaskSuccess(tokens[0] as string, { slot: 'free' }), true);
    const output = (await first.result) as { woken?: unknown; timedOut?: unknown };
    assert.ok(performance.now() - started < 500, 'woken well before the 1 s fallback');
    assert.deepEqual(output.woken, { slot: 'free' });
    assert.equal(output.timedOut, undefined);
    assert.equal(executor.waitingForTokens, 1, 'the other execution still waits');
    executor.sendTaskSuccess(tokens[1] as string);
    await second.result;
  });

  it('a lost wake-up ends in the fallback: States.Timeout after TimeoutSeconds, caught by the definition', async () => {
    const { handlers } = parking();
    const executor = new EmbeddedExecutor({ m: DEFINITION }, handlers);
    const started = performance.now();
    const output = (await executor.start('m', { who: 'a' }).result) as { timedOut?: { Error?: string } };
    const waited = performance.now() - started;
    assert.equal(output.timedOut?.Error, 'States.Timeout');
    assert.ok(waited >= 990 && waited < 3000, `waited ${waited.toFixed(0)} ms for a 1 s TimeoutSeconds`);
    assert.equal(executor.waitingForTokens, 0);
  });

  it('a token sent for a Task no longer waiting (woken already, or an unknown one) changes nothing', async () => {
    const { handlers, tokens } = parking();
    const executor = new EmbeddedExecutor({ m: DEFINITION }, handlers);
    const execution = executor.start('m', { who: 'a' });
    while (executor.waitingForTokens < 1) await new Promise((resolve) => setTimeout(resolve, 5));
    const token = tokens[0] as string;
    assert.equal(executor.sendTaskSuccess(token, { n: 1 }), true);
    assert.equal(executor.sendTaskSuccess(token, { n: 2 }), false, 'the second wake-up finds no waiter');
    assert.equal(executor.sendTaskSuccess('no-such-token'), false);
    const output = (await execution.result) as { woken?: unknown };
    assert.deepEqual(output.woken, { n: 1 }, 'the first wake-up stands');
    assert.equal(execution.stats.lambdaInvocations, 1);
  });

  it('refuses a callback Task without TimeoutSeconds: with no fallback a lost wake-up would wait forever', () => {
    const { handlers } = parking();
    const park = { ...DEFINITION.States.Park, TimeoutSeconds: undefined };
    const definition = { ...DEFINITION, States: { ...DEFINITION.States, Park: park } } as MachineDefinition;
    assert.throws(() => new EmbeddedExecutor({ m: definition }, handlers), /needs TimeoutSeconds/);
  });
});
