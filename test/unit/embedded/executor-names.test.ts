/**
 * As on AWS, starting an execution again under its name returns the one that has it — for as long as
 * the executor remembers it: every running execution, and the newest ENDED_NAMES_KEPT that ended. Older
 * ended ones are forgotten with their interpreters (`drainbridge run` lives for weeks).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EmbeddedExecutor, ENDED_NAMES_KEPT, type MachineDefinition } from '../../../embedded/executor.ts';
import { LOCAL_ARN_PREFIX } from '../../../embedded/extract.ts';

const ONE_TASK: MachineDefinition = {
  StartAt: 'Do',
  States: { Do: { Type: 'Task', Resource: `${LOCAL_ARN_PREFIX}do`, End: true } } as MachineDefinition['States'],
};

describe('execution names', () => {
  it('an ended execution answers its name until ENDED_NAMES_KEPT newer ones ended', async () => {
    let calls = 0;
    const executor = new EmbeddedExecutor({ one: ONE_TASK }, { do: async () => ({ call: ++calls }) }, {});
    const first = executor.start('one', {}, 'first');
    await first.settled;
    const again = executor.start('one', {}, 'first');
    assert.equal(again, first, 'the same execution, not a second run');
    assert.equal(calls, 1);
    for (let n = 0; n < ENDED_NAMES_KEPT; n++) await executor.start('one', {}, `other-${n}`).settled;
    await new Promise((resolve) => setImmediate(resolve));
    const later = executor.start('one', {}, 'first');
    assert.notEqual(later, first, 'forgotten: the name starts a new execution');
    assert.deepEqual(await later.result, { call: ENDED_NAMES_KEPT + 2 });
    // The newest ended names still answer.
    assert.equal(
      executor.start('one', {}, `other-${ENDED_NAMES_KEPT - 1}`).id.endsWith(`other-${ENDED_NAMES_KEPT - 1}`),
      true,
    );
    assert.equal(calls, ENDED_NAMES_KEPT + 2);
  });
});
