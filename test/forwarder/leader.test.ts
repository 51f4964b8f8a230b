/**
 * Leader election (lib/sources/forwarder/leader.ts) against the simulator's Leases, two electors in this process
 * with the ServiceAccounts of two replicas (so that a fault can hit one of them): a leader whose renewals
 * hang or fail steps down at its renew deadline — before its Lease can expire elsewhere — however long the
 * API server takes; a stopped leader releases the Lease and the candidate takes it at its next read; a
 * leader that stops renewing is replaced no sooner than a lease duration after its last renewal and within
 * a lease duration plus a retry period of its death.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import type { KubeHttpClient } from '../../lib/clients/kube/http/client.ts';
import { createLogger } from '../../lib/log/logger.ts';
import {
  type ElectionTimings,
  electionTimings,
  LeaderElector,
  takeoverBoundMs,
} from '../../lib/sources/forwarder/leader.ts';
import { waitUntil } from '../support/wait.ts';
import { connectForwarderKube } from './connect.ts';
import { FORWARDER_USER, RUN_USER, startTestCluster, type TestCluster } from './harness.ts';

const NAMESPACE = 'drainbridge';
const TIMINGS: ElectionTimings = electionTimings(3000);
/** What a step-down or takeover may take beyond its bound on this shared machine (a request or two, a late timer). */
const SLACK_MS = 1000;

interface Candidate {
  readonly elector: LeaderElector;
  readonly client: KubeHttpClient;
  /** Date.now() at each onStartedLeading / onStoppedLeading. */
  readonly started: number[];
  readonly stopped: number[];
}

describe('leader election on a Lease', () => {
  let cluster: TestCluster;
  const candidates: Candidate[] = [];
  let heal: (() => void) | undefined;
  let leaseNumber = 0;

  before(async () => {
    cluster = await startTestCluster({ name: 'leader', nodes: [{ name: 'node-1' }] });
  });
  afterEach(async () => {
    heal?.();
    heal = undefined;
    for (const candidate of candidates.splice(0)) {
      await candidate.elector.stop(1000);
      candidate.client.close();
    }
  });
  after(async () => {
    await cluster?.stop();
  });

  /** A candidate for `lease` as ServiceAccount drainbridge/`account` (one Lease per test). */
  async function candidate(
    identity: string,
    account: 'drainbridge-forwarder' | 'drainbridge-run',
    lease: string,
  ): Promise<Candidate> {
    const { client } = await connectForwarderKube(await cluster.kubeconfigFor(account));
    const started: number[] = [];
    const stopped: number[] = [];
    const elector = new LeaderElector({
      client,
      namespace: NAMESPACE,
      name: lease,
      identity,
      ...TIMINGS,
      logger: createLogger('leader-test', 'ERROR'),
      onStartedLeading: () => started.push(Date.now()),
      onStoppedLeading: () => stopped.push(Date.now()),
    });
    const made = { elector, client, started, stopped };
    candidates.push(made);
    elector.start();
    return made;
  }

  const nextLease = (): string => `leader-test-${++leaseNumber}`;
  const holderOf = async (lease: string): Promise<string | undefined> =>
    (await cluster.admin.getLease(NAMESPACE, lease)).spec?.holderIdentity;
  /** Arrival times of `user`'s successful updates of `lease` (its renewals). */
  const writesOf = (user: string, lease: string): number[] =>
    cluster.sim.requestLog
      .all({ user, resource: 'leases', verb: 'update', succeeded: true })
      .filter((r) => r.name === lease)
      .map((r) => r.at);

  for (const fault of ['hang', 'fail'] as const) {
    it(`renewals that ${fault === 'hang' ? 'hang' : 'fail with 500'}: the leader steps down at its renew deadline, before its Lease expires`, async () => {
      const lease = nextLease();
      const a = await candidate('replica-a', 'drainbridge-forwarder', lease);
      await waitUntil('replica-a leads', () => a.elector.isLeader);
      // Two renewals seen: the leader is in its renewing rhythm.
      const firstWrites = writesOf(FORWARDER_USER, lease).length;
      await waitUntil('two renewals', () => writesOf(FORWARDER_USER, lease).length >= firstWrites + 2, 10_000);
      const match = { user: FORWARDER_USER, verbs: ['update'], resources: ['leases'] };
      heal = fault === 'hang' ? cluster.sim.faults.holdRequests(match) : cluster.sim.faults.failRequests(match);
      const faultAt = Date.now();
      await waitUntil('replica-a steps down', () => !a.elector.isLeader, TIMINGS.leaseDurationMs + 20_000);
      const lastRenewal = Math.max(...writesOf(FORWARDER_USER, lease).filter((at) => at <= faultAt));
      const downAfter = (a.stopped[0] ?? 0) - lastRenewal;
      assert.ok(
        downAfter <= TIMINGS.renewDeadlineMs + SLACK_MS,
        `stepped down ${downAfter} ms after its last renewal (renew deadline ${TIMINGS.renewDeadlineMs} ms)`,
      );
      assert.ok(
        downAfter < TIMINGS.leaseDurationMs,
        `stepped down before the Lease could expire (${downAfter} ms < ${TIMINGS.leaseDurationMs} ms)`,
      );
    });
  }

  it('a stopped leader releases the Lease; the candidate takes it at its next read, not after the lease duration', async () => {
    const lease = nextLease();
    const a = await candidate('replica-a', 'drainbridge-forwarder', lease);
    await waitUntil('replica-a leads', () => a.elector.isLeader);
    const b = await candidate('replica-b', 'drainbridge-run', lease);
    // replica-b has read the Lease held by replica-a (and stayed a candidate).
    const mark = cluster.sim.requestLog.mark();
    await waitUntil(
      'replica-b read the Lease',
      () => cluster.sim.requestLog.all({ since: mark, user: RUN_USER, resource: 'leases', verb: 'get' }).length >= 1,
    );
    assert.equal(b.elector.isLeader, false);

    await a.elector.stop(2000);
    const releasedAt = Date.now();
    assert.equal(await holderOf(lease), '', 'the Lease is released (no holder)');
    await waitUntil('replica-b leads', () => b.elector.isLeader, TIMINGS.leaseDurationMs + 10_000);
    const tookMs = (b.started[0] ?? 0) - releasedAt;
    assert.ok(
      tookMs <= TIMINGS.retryEveryMs + SLACK_MS,
      `taken ${tookMs} ms after the release (retry period ${TIMINGS.retryEveryMs} ms)`,
    );
    assert.ok(tookMs < TIMINGS.leaseDurationMs, `sooner than the lease duration (${TIMINGS.leaseDurationMs} ms)`);
    assert.equal(await holderOf(lease), 'replica-b');
  });

  it('a leader that stops renewing is replaced within lease duration + retry period of its death, not before its Lease expired', async () => {
    const lease = nextLease();
    const a = await candidate('replica-a', 'drainbridge-forwarder', lease);
    await waitUntil('replica-a leads', () => a.elector.isLeader);
    const b = await candidate('replica-b', 'drainbridge-run', lease);
    const before = writesOf(FORWARDER_USER, lease).length;
    await waitUntil('replica-a renewed twice while replica-b watched', () => {
      return writesOf(FORWARDER_USER, lease).length >= before + 2;
    });
    // replica-a dies as far as the Lease knows: none of its requests gets through any more.
    heal = cluster.sim.faults.failRequests({ user: FORWARDER_USER, resources: ['leases'] });
    const diedAt = Date.now();
    await waitUntil('replica-b leads', () => b.elector.isLeader, takeoverBoundMs(TIMINGS) + 20_000);
    const lastRenewal = Math.max(...writesOf(FORWARDER_USER, lease));
    const takeover = b.started[0] ?? 0;
    assert.ok(
      takeover - lastRenewal >= TIMINGS.leaseDurationMs,
      `taken ${takeover - lastRenewal} ms after replica-a's last renewal: not before the lease duration (${TIMINGS.leaseDurationMs} ms)`,
    );
    assert.ok(
      takeover - diedAt <= takeoverBoundMs(TIMINGS) + SLACK_MS,
      `replaced ${takeover - diedAt} ms after its death (bound: lease duration + retry period = ${takeoverBoundMs(TIMINGS)} ms)`,
    );
    assert.ok(a.stopped.length >= 1 && (a.stopped[0] ?? 0) <= takeover, 'replica-a had stepped down before');
    assert.equal(await holderOf(lease), 'replica-b');
  });
});
