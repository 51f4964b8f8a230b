/**
 * Found by the soak (`npm run soak`, seed 5): a `drainbridge run` replica started into a burst of 429s
 * exited 1 at its preflight ("ask who the credentials are (SelfSubjectReview): 429") — the client's four
 * quick attempts spent in a second — leaving the cluster with one replica until a restart policy's
 * backoff. A starting service now waits out 429/5xx answers (up to a minute) and starts. The 60-minute
 * soak (seed 79462) then restarted both replicas into a 30 s API outage (every connection cut): both
 * exited 4 at the same question, and the cluster had no replica for the rest of the hour. Connections cut
 * are now waited out the same way.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  type DrainbridgeProcess,
  RUN_USER,
  spreadScenario,
  startRun,
  startTestCluster,
  type TestCluster,
} from '../forwarder/harness.ts';
import { startFaultProxy } from '../support/fault-proxy.ts';
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

describe('fault injection: drainbridge run starting while the API server restarts', () => {
  let cluster: TestCluster;
  let run: DrainbridgeProcess | undefined;
  let closeProxy: (() => Promise<void>) | undefined;

  before(async () => {
    cluster = await startTestCluster(spreadScenario(2));
  });
  after(async () => {
    run?.kill('SIGTERM');
    await run?.exited;
    await closeProxy?.();
    await cluster?.stop();
  });

  it('its preflight connection cut five times: it waits, starts and leads', { timeout: 120_000 }, async () => {
    const invariants = watchInvariants(cluster.sim, { maxHeldNodes: 1 });
    const proxy = await startFaultProxy(cluster.sim);
    closeProxy = () => proxy.close();
    const cut = proxy.add({ path: /selfsubjectreviews/, action: 'reset', times: 5 });
    const kubeconfig = join(cluster.dir, 'run-through-proxy.kubeconfig');
    writeFileSync(kubeconfig, proxy.kubeconfig(await cluster.sim.tokenFor('drainbridge/drainbridge-run')), {
      mode: 0o600,
    });
    run = await startRun(cluster, { identity: 'run-a', kubeconfig, leadWithinMs: 90_000 });
    assert.equal(cut.hits, 5, 'every cut was met, and the preflight asked again after them');
    assert.ok(run.logs('preflight: the API server answered a transient error; asking again').length >= 1);
    invariants.assertHeld();
    invariants.stop();
  });
});
