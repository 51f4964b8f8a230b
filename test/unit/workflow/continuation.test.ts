/** Continue-as-new's input: `continuedFrom` split off, checked, and turned into the execution's chain. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InvalidInput } from '../../../lib/errors/index.ts';
import { chainOf, splitContinuation } from '../../../lib/workflow/continuation.ts';
import { ResolveInput } from '../../../lib/workflow/state.ts';

const EVENT = {
  'detail-type': 'Maintenance Requested',
  detail: {
    version: '1',
    requestId: 'req-1',
    requester: 'ops',
    origin: 'manual',
    target: { nodeName: 'node-1' },
    reason: 'kernel',
  },
};
const FROM = {
  executionId: 'arn:aws:states:eu-west-1:1:execution:drainbridge-evacuate-dev:x',
  startedAt: '2026-11-21T10:00:00Z',
  generation: 2,
};

describe('continue-as-new input', () => {
  it('an execution started by an event has no chain', () => {
    assert.deepEqual(splitContinuation('evacuate', EVENT), { event: EVENT });
    assert.deepEqual(chainOf(undefined), { generation: 0 });
  });

  it('a continued execution keeps the event as it was and knows its predecessor and the chain’s start', () => {
    const split = splitContinuation('evacuate', { ...EVENT, continuedFrom: FROM });
    assert.deepEqual(split, { event: EVENT, continuedFrom: FROM });
    assert.deepEqual(chainOf(split.continuedFrom), { generation: 2, previousExecutionId: FROM.executionId });
    assert.ok(
      ResolveInput.safeParse({
        machine: 'evacuate',
        input: { ...EVENT, continuedFrom: FROM },
        executionId: 'e',
        startedAt: 's',
      }).success,
    );
  });

  it('refuses a bad continuedFrom naming the field, and continuedFrom on Restore', () => {
    const bad = () =>
      splitContinuation('evacuate', { ...EVENT, continuedFrom: { ...FROM, startedAt: 'yesterday', extra: 1 } });
    assert.throws(bad, (error: unknown) => {
      assert.ok(error instanceof InvalidInput);
      assert.deepEqual(error.problems.map((p) => p.path).sort(), ['continuedFrom.extra', 'continuedFrom.startedAt']);
      assert.match(error.message, /continuedFrom\.startedAt: must be an ISO 8601 instant/);
      return true;
    });
    assert.throws(
      () => splitContinuation('restore', { ...EVENT, continuedFrom: FROM }),
      /continuedFrom: only an Evacuate execution continues as new/,
    );
  });
});
