/** One execution at a time per request: the pure ownership decision (lib/workflow/ownership.ts). */
import assert from 'node:assert/strict';
import { hostname } from 'node:os';
import { describe, it } from 'node:test';
import {
  driverOf,
  isLiveOwner,
  OWNER_REFRESH_SECONDS,
  OWNER_TTL_SECONDS,
  planOwnership,
} from '../../lib/workflow/ownership.ts';

const NOW = new Date('2026-11-21T10:00:00.000Z');
const secondsAgo = (seconds: number) => new Date(NOW.getTime() - seconds * 1000).toISOString();

describe('planOwnership', () => {
  it('claims a request nobody owns', () => {
    assert.deepEqual(planOwnership(undefined, 'exec-a', NOW), {
      action: 'claim',
      owner: { executionId: 'exec-a', seen: NOW.toISOString() },
    });
  });

  it('keeps its own fresh mark without writing, and refreshes it once it is older than the refresh interval', () => {
    assert.deepEqual(planOwnership({ executionId: 'exec-a', seen: secondsAgo(5) }, 'exec-a', NOW), { action: 'keep' });
    const refreshed = planOwnership(
      { executionId: 'exec-a', seen: secondsAgo(OWNER_REFRESH_SECONDS + 1) },
      'exec-a',
      NOW,
    );
    assert.equal(refreshed.action, 'claim');
  });

  it('yields to another live execution (a duplicate delivery waits)', () => {
    const decision = planOwnership({ executionId: 'exec-a', seen: secondsAgo(OWNER_TTL_SECONDS - 1) }, 'exec-b', NOW);
    assert.equal(decision.action, 'yield');
    if (decision.action === 'yield') assert.equal(decision.owner.executionId, 'exec-a');
  });

  it('takes over from an execution that stopped refreshing (killed and re-run)', () => {
    const decision = planOwnership({ executionId: 'exec-a', seen: secondsAgo(OWNER_TTL_SECONDS + 1) }, 'exec-b', NOW);
    assert.deepEqual(decision, { action: 'claim', owner: { executionId: 'exec-b', seen: NOW.toISOString() } });
  });

  it('takes over at once from the execution it continues (continue-as-new hands the claim over)', () => {
    const fresh = { executionId: 'exec-a', seen: secondsAgo(1) };
    assert.deepEqual(planOwnership(fresh, 'exec-b', NOW, 'exec-a'), {
      action: 'claim',
      owner: { executionId: 'exec-b', seen: NOW.toISOString() },
    });
    assert.equal(planOwnership(fresh, 'exec-b', NOW, 'exec-c').action, 'yield', 'only from its own predecessor');
  });

  it('claims at once a mark that was handed back, even a fresh one (Ctrl-C, then the same command again)', () => {
    const released = { executionId: 'exec-a', seen: secondsAgo(1), released: secondsAgo(0) };
    assert.equal(planOwnership(released, 'exec-b', NOW).action, 'claim');
    assert.equal(isLiveOwner(released, NOW), false);
    assert.equal(isLiveOwner({ executionId: 'exec-a', seen: secondsAgo(1) }, NOW), true);
  });

  it('names the process that drives an embedded execution (pid@host); on AWS the ARN says it', () => {
    const local = 'arn:aws:states:local:000000000000:execution:drainbridge-evacuate:x';
    assert.equal(driverOf(local), `${process.pid}@${hostname()}`);
    assert.equal(driverOf('arn:aws:states:eu-west-1:123456789012:execution:drainbridge-evacuate:x'), undefined);
    const claim = planOwnership(undefined, local, NOW);
    assert.equal(claim.action === 'claim' ? claim.owner.driver : undefined, `${process.pid}@${hostname()}`);
  });
});
