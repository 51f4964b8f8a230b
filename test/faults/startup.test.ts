/**
 * Found by the soak (`npm run soak`, seed 5): a `drainbridge run` replica started into a burst of 429s
 * exited 1 at its preflight ("ask who the credentials are (SelfSubjectReview): 429") — the client's four
 * quick attempts spent in a second — leaving the cluster with one replica until a restart policy's
 * backoff. A starting service now waits out 429/5xx answers (up to a minute) and starts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  type DrainbridgeProcess,
  RUN_USER,
  spreadScenario,
  startRun,
  startTestCluster,
  type TestCluster,
} from '../forwarder/harness.ts';
import { watchInvariants } from '../support/invariants.ts';

describe('fault injection: drainbridge run starting into an overloaded API server', () => {
  let cluster: TestCluster;
  let run: DrainbridgeProcess | undefined;

  before(async () => {
    cluster = await startTestCluster(spreadScenario(2));
  });
  after(async () => {
    run?.kill('SIGTERM');
    await run?.exited;
    await cluster?.stop();
  });

  it('its preflight answered 429 ten times: it waits, starts and leads', { timeout: 120_000 }, async () => {
    const invariants = watchInvariants(cluster.sim, { maxHeldNodes: 1 });
    const heal = cluster.sim.faults.failRequests(
      { user: RUN_USER, resources: ['selfsubjectreviews'] },
      429,
      'injected: too many requests',
      10,
    );
    try {
      run = await startRun(cluster, { identity: 'run-a', leadWithinMs: 90_000 });
    } finally {
      heal();
    }
    assert.ok(run.logs('preflight: the API server answered a transient error; asking again').length >= 1);
    const answered = cluster.sim.requestLog
      .all({ user: RUN_USER })
      .filter((r) => r.resource === 'selfsubjectreviews' && r.status === 429);
    assert.equal(answered.length, 10, 'every injected 429 was met, and the preflight asked again after them');
    invariants.assertHeld();
    invariants.stop();
  });
});
