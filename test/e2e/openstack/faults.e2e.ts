/**
 * Nova faults through the whole product: the packaged Evacuate and Restore state machines (embedded, with
 * the definition's own retry backoff) against the real Nova lab and the Kubernetes simulator, asserting
 * the fault suite's safety invariants on both sides (test/support/invariants.ts for the cluster,
 * ./invariants.ts for Nova) and that the outcome names the cause: nova-api down, the Keystone token
 * revoked and expiring mid-run, no valid host, the destination compute down, a migration stuck
 * `running`. drainbridge reaches Keystone through a tap (keystone-tap.ts) that shows which tokens it was
 * issued.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { V1Node } from '@kubernetes/client-node';
import type { TaskCall } from '../../../embedded/executor.ts';
import { EmbeddedRuntime, type TrackedExecution } from '../../../embedded/runtime.ts';
import { novaPortFor } from '../../../lib/branches/nova/wiring.ts';
import { loadConfig } from '../../../lib/config/index.ts';
import { readLedger } from '../../../lib/node/ledger.ts';
import { type DrainbridgeCluster, startDrainbridgeCluster } from '../../../sim/drainbridge.ts';
import { uncleanParts } from '../../support/clean-error.ts';
import { type WatchedRun, watchInvariants } from '../../support/invariants.ts';
import { waitUntil } from '../../support/wait.ts';
import { assertNovaInvariants, type NovaStart, novaStart } from './invariants.ts';
import { type KeystoneTap, startKeystoneTap } from './keystone-tap.ts';
import {
  bootServers,
  compute,
  connect,
  deleteAllServers,
  HOSTS,
  LAB_DIR,
  type Lab,
  labCtl,
  migrationsInFlightFrom,
  setServiceEnabled,
  waitForStatus,
} from './support.ts';

const NODE = 'compute-1';
/** How long nova-api stays down: longer than one pass's own HTTP retries, shorter than the workflow's. */
const OUTAGE_SECONDS = 12;
/** Keystone's token lifetime in the expiry case: far under drainbridge's 5-minute refresh margin. */
const SHORT_TOKEN_SECONDS = 20;
/** The migration timeout of the destination-down case: a server still migrating at twice it is given up. */
const DEST_DOWN_TIMEOUT_SECONDS = 40;

async function labEnv(): Promise<Record<string, string>> {
  const text = await readFile(join(LAB_DIR, 'openrc'), 'utf8');
  const env: Record<string, string> = {};
  for (const match of text.matchAll(/^export (OS_[A-Z_]+)=(.*)$/gm)) env[match[1] as string] = match[2] as string;
  return env;
}

/** One case's drainbridge: its runtime, what its tasks and events said, and the cluster's invariants. */
interface Run {
  readonly runtime: EmbeddedRuntime;
  readonly calls: TaskCall[];
  readonly events: { detailType: string; detail: Record<string, unknown> }[];
  readonly k8s: WatchedRun;
}

/** Whether a live migration of one of `ids` to `host` is `running` (a record Nova's API shows). */
async function runningTo(lab: Lab, host: string, ids: readonly string[]): Promise<boolean> {
  const { migrations } = await compute<{
    migrations: { status: string; instance_uuid: string; dest_compute: string }[];
  }>(lab, 'GET', `/os-migrations?migration_type=live-migration&status=running`);
  return migrations.some((m) => ids.includes(m.instance_uuid) && m.dest_compute === host && m.status === 'running');
}

/** Servers of `ids` that Nova still has migrating on `host`. */
async function stillMigratingOn(lab: Lab, host: string, ids: readonly string[]): Promise<string[]> {
  const found: string[] = [];
  for (const id of ids) {
    const server = await lab.nova.getServer(id);
    if (server?.host === host && server.taskState === 'migrating') found.push(id);
  }
  return found;
}

describe('Nova faults through the packaged state machines (real Nova)', () => {
  let lab: Lab;
  let cluster: DrainbridgeCluster;
  let tap: KeystoneTap;
  let current: Run | undefined;

  /**
   * A runtime for one case: drainbridge's configuration plus `env`, its Keystone through the tap, and
   * `migrationTimeoutSeconds` below the configuration's 30 s minimum when given (the lab's migrations
   * last ≈ 5 s). No retry override: the definition's own backoff (2 s doubling to 30 s, 6 attempts).
   */
  async function startRun(env: Record<string, string> = {}, migrationTimeoutSeconds?: number): Promise<Run> {
    // A cluster of its own: a case that fails leaves its hold behind, and the next must not inherit it.
    cluster = await startDrainbridgeCluster({
      scenario: { name: 'nova-faults', speed: 1, nodes: HOSTS.map((name) => ({ name })) },
    });
    const config = loadConfig({
      KUBECONFIG: cluster.kubeconfigPath,
      DRAINBRIDGE_NOVA: 'true',
      DRAINBRIDGE_NOVA_MAX_CONCURRENT_MIGRATIONS: '2',
      ...env,
    });
    const credentials = { ...(await labEnv()), OS_AUTH_URL: tap.authUrl };
    const calls: TaskCall[] = [];
    const events: Run['events'] = [];
    const runtime = await EmbeddedRuntime.create({
      config,
      waitMs: 0,
      connectors: {
        nova: (c, base) =>
          novaPortFor(
            migrationTimeoutSeconds === undefined ? c : { ...c, nova: { ...c.nova, migrationTimeoutSeconds } },
            { ...base, env: credentials },
          ),
      },
      onTask: (call) => calls.push(call),
      onBusEvent: (detailType, detail) => events.push({ detailType, detail: detail as Record<string, unknown> }),
    });
    current = { runtime, calls, events, k8s: watchInvariants(cluster.sim, { maxHeldNodes: 1 }) };
    return current;
  }

  async function evacuate(run: Run, requestId: string) {
    await run.runtime.put('Maintenance Requested', {
      version: '1',
      requestId,
      requester: 'e2e',
      origin: 'manual',
      target: { nodeName: NODE },
      reason: `e2e: ${requestId}`,
      drain: { ignoreDaemonSets: true },
    });
    const [execution] = run.runtime.executionsFor(requestId);
    assert.ok(execution, `an Evacuate execution for ${requestId}`);
    return execution;
  }

  /** Ends the maintenance; the Restore re-enables nova-compute (drainbridge's disable) and uncordons. */
  async function restore(run: Run, requestId: string, start: NovaStart): Promise<void> {
    await run.runtime.put('Maintenance Ended', {
      version: '1',
      requestId,
      requester: 'e2e',
      origin: 'manual',
      target: { nodeName: NODE },
    });
    await run.runtime.settle();
    await assertNovaInvariants(lab, start, { source: NODE, service: 'enabled' });
    run.k8s.assertHeld();
  }

  /** The Evacuation Failed event of `requestId`: the outcome must name the cause. */
  function failedEvent(run: Run, requestId: string): { name: string; message: string; blockers: unknown[] } {
    const failed = run.events.find(
      (e) => e.detailType === 'Evacuation Failed' && e.detail.requestId === requestId,
    )?.detail;
    assert.ok(failed, 'Evacuation Failed published');
    const error = failed.error as { name: string; message: string };
    return { ...error, blockers: (failed.blockers as unknown[]) ?? [] };
  }

  /** The node is in the safe state of a failed evacuation: cordoned, still held by the request. */
  async function assertHeldAndCordoned(requestId: string): Promise<void> {
    const node = cluster.sim.store.get({ group: '', resource: 'nodes' }, undefined, NODE);
    assert.equal(
      (node?.spec as { unschedulable?: boolean } | undefined)?.unschedulable,
      true,
      `${NODE} stays cordoned`,
    );
    const ledger = readLedger(node as V1Node);
    assert.ok(Object.hasOwn(ledger.holds, requestId), `${requestId} still holds ${NODE}`);
  }

  before(async () => {
    lab = await connect();
    await deleteAllServers(lab);
    for (const host of HOSTS) await setServiceEnabled(lab, host, true);
    tap = await startKeystoneTap((await labEnv()).OS_AUTH_URL ?? '');
  });
  afterEach(async () => {
    current?.k8s.stop();
    current?.runtime.stop();
    current = undefined;
    await cluster?.stop();
    await deleteAllServers(lab);
    for (const host of HOSTS) await setServiceEnabled(lab, host, true);
  });
  after(async () => {
    await tap?.close();
    await labCtl('start', 'nova-api').catch(() => '');
    await labCtl('start', 'nova-compute-2').catch(() => '');
    await labCtl('token-lifetime', 'default').catch(() => '');
  });

  it('nova-api down mid-evacuation: retried, the evacuation finishes; servers kept, nova-compute safe', async () => {
    const run = await startRun();
    const ids = await bootServers(lab, NODE, 3, 'api-down');
    const start = await novaStart(lab, ids);
    const execution = await evacuate(run, 'api-down');
    await waitUntil(
      'a live migration in flight',
      async () => (await migrationsInFlightFrom(lab, NODE, ids)) > 0,
      120_000,
      { everyMs: 500 },
    );
    await labCtl('stop', 'nova-api');
    const downAt = run.calls.length;
    await sleep(OUTAGE_SECONDS * 1000); // the outage's length, not a wait for an assertion
    await labCtl('start', 'nova-api');
    const outcome = await execution.outcome;
    assert.equal(outcome.ok, true, outcome.ok ? '' : outcome.error.message);

    const felt = run.calls.slice(downAt).filter((call) => call.error?.name === 'TransientError');
    assert.ok(felt.length > 0, 'the outage was felt (TransientError) and retried');
    for (const call of felt) assert.deepEqual(uncleanParts(call.error?.message ?? ''), [], call.error?.message);
    await assertNovaInvariants(lab, start, { source: NODE, service: 'ours', requestId: 'api-down' });
    for (const id of ids) assert.notEqual((await lab.nova.getServer(id))?.host, NODE, 'moved off');
    await restore(run, 'api-down', start);
  });

  it("Keystone token revoked mid-run: drainbridge's next call is refused, it authenticates again and finishes", async () => {
    const run = await startRun();
    const ids = await bootServers(lab, NODE, 3, 'revoke');
    const start = await novaStart(lab, ids);
    const execution = await evacuate(run, 'revoke');
    await waitUntil(
      'a live migration in flight',
      async () => (await migrationsInFlightFrom(lab, NODE, ids)) > 0,
      120_000,
      { everyMs: 500 },
    );
    const victim = tap.issued.at(-1);
    assert.ok(victim, 'drainbridge authenticated through the tap');
    await lab.session.request({
      service: lab.credentials.authUrl,
      method: 'DELETE',
      path: '/auth/tokens',
      headers: { 'X-Subject-Token': victim.value },
    });
    const revokedAt = Date.now();
    const outcome = await execution.outcome;
    assert.equal(outcome.ok, true, outcome.ok ? '' : outcome.error.message);
    assert.ok(
      tap.issued.some((token) => token.issuedAt > revokedAt),
      'drainbridge was issued a new token after the revocation',
    );
    await assertNovaInvariants(lab, start, { source: NODE, service: 'ours', requestId: 'revoke' });
    for (const id of ids) assert.notEqual((await lab.nova.getServer(id))?.host, NODE, 'moved off');
    await restore(run, 'revoke', start);
  });

  it(`Keystone tokens expire mid-run (lifetime ${SHORT_TOKEN_SECONDS} s): drainbridge renews them and finishes`, async () => {
    await labCtl('token-lifetime', String(SHORT_TOKEN_SECONDS));
    try {
      const run = await startRun();
      const ids = await bootServers(lab, NODE, 8, 'expiry');
      const start = await novaStart(lab, ids);
      const firstIssued = tap.issued.length;
      const execution = await evacuate(run, 'expiry');
      const outcome = await execution.outcome;
      const endedAt = Date.now();
      assert.equal(outcome.ok, true, outcome.ok ? '' : outcome.error.message);
      const ours = tap.issued.slice(firstIssued);
      const lifetime = (ours[0]?.expiresAt ?? 0) - (ours[0]?.issuedAt ?? 0);
      assert.ok(lifetime <= (SHORT_TOKEN_SECONDS + 5) * 1000, `Keystone issued short tokens (${lifetime} ms)`);
      const expired = ours.filter((token) => token.expiresAt < endedAt);
      assert.ok(expired.length > 0, 'a token drainbridge was issued expired before the evacuation ended');
      const firstExpiry = Math.min(...expired.map((token) => token.expiresAt));
      assert.ok(
        ours.some((token) => token.issuedAt > firstExpiry),
        'drainbridge was issued a new token after one of its tokens expired',
      );
      assert.deepEqual(
        run.calls.filter((call) => /401|Unauthorized|token/i.test(call.error?.message ?? '')).map((c) => c.error),
        [],
        'no step failed on an expired token',
      );
      await assertNovaInvariants(lab, start, { source: NODE, service: 'ours', requestId: 'expiry' });
      for (const id of ids) assert.notEqual((await lab.nova.getServer(id))?.host, NODE, 'moved off');
      await restore(run, 'expiry', start);
    } finally {
      await labCtl('token-lifetime', 'default');
    }
  });

  // Issue 25's one safety decision: with every other host disabled, `drainbridge plan` reports
  // InsufficientCapacity, so the Nova prepare refuses in the plan's words before it disables nova-compute
  // (Nova is never asked to migrate, so its "No valid host" is not reached).
  it('no other host enabled: the evacuation fails as plan says (InsufficientCapacity); nova-compute left enabled; every server ACTIVE on the source, node held', async () => {
    const run = await startRun({ DRAINBRIDGE_NOVA_MAX_MIGRATION_ATTEMPTS: '2' });
    const ids = await bootServers(lab, NODE, 3, 'novalid');
    await setServiceEnabled(lab, 'compute-2', false, 'e2e: no room');
    await setServiceEnabled(lab, 'compute-3', false, 'e2e: no room');
    const start = await novaStart(lab, ids);
    const execution = await evacuate(run, 'novalid');
    const outcome = await execution.outcome;
    assert.equal(outcome.ok, false, 'the evacuation failed');
    const failed = failedEvent(run, 'novalid');
    assert.match(failed.message, /\[InsufficientCapacity\] no other nova-compute host is enabled and up/);
    assert.match(JSON.stringify(failed), /no other nova-compute host is enabled and up/);
    await assertNovaInvariants(lab, start, { source: NODE, service: 'enabled', requestId: 'novalid' });
    for (const id of ids) assert.equal((await lab.nova.getServer(id))?.host, NODE, 'left on the source');
    await assertHeldAndCordoned('novalid');
    for (const host of ['compute-2', 'compute-3']) await setServiceEnabled(lab, host, true);
    await restore(run, 'novalid', start);
  });

  it('destination compute down mid-evacuation: no server stopped; each moved, or named and left to Nova', async () => {
    // compute-2 is the only destination until a migration to it runs; then it dies and compute-3 opens.
    // Nova keeps a server whose migration was running `migrating` on the source (its record turns
    // `completed`) until compute-2 returns: drainbridge must give it up at twice its migration timeout and
    // name it, not wait for the compute with it. A migration still preparing rolls back and moves again.
    const run = await startRun({ DRAINBRIDGE_NOVA_MAX_MIGRATION_ATTEMPTS: '3' }, DEST_DOWN_TIMEOUT_SECONDS);
    const ids = await bootServers(lab, NODE, 4, 'killed');
    const start = await novaStart(lab, ids);
    await setServiceEnabled(lab, 'compute-3', false, 'e2e: compute-2 takes the first migrations');
    let outcome: Awaited<TrackedExecution['outcome']>;
    let stuck: string[] = [];
    try {
      const execution = await evacuate(run, 'killed');
      await waitUntil('a live migration to compute-2 running', () => runningTo(lab, 'compute-2', ids), 120_000, {
        everyMs: 500,
      });
      await labCtl('stop', 'nova-compute-2');
      await setServiceEnabled(lab, 'compute-3', true);
      outcome = await execution.outcome;
      stuck = await stillMigratingOn(lab, NODE, ids);
      console.log(
        `# destination down: outcome ${outcome.ok ? 'ok' : 'failed'}; ${stuck.length} server(s) still migrating on the source`,
      );
      for (const id of ids) {
        const server = await lab.nova.getServer(id);
        assert.ok(
          server?.status === 'ACTIVE' || server?.status === 'MIGRATING',
          `server ${server?.name ?? id} is ${server?.status ?? 'gone'} while compute-2 is down`,
        );
      }
    } finally {
      await labCtl('start', 'nova-compute-2');
    }
    // A server Nova still has migrating on the source when the evacuation ended was given up on, by name.
    if (stuck.length > 0) {
      assert.equal(outcome.ok, false, 'a server Nova keeps migrating is given up: the evacuation fails');
      const blockers = JSON.stringify(failedEvent(run, 'killed').blockers);
      for (const id of stuck) assert.match(blockers, new RegExp(`${id}[^"]*left to Nova`), `${id} is named`);
    }
    // Nova finishes (or rolls back) what waited on compute-2 once it is back; every server ends ACTIVE.
    for (const id of ids) await waitForStatus(lab, id, 'ACTIVE', 240);
    const left: string[] = [];
    for (const id of ids) if ((await lab.nova.getServer(id))?.host === NODE) left.push(id);
    if (outcome.ok) assert.deepEqual(left, [], 'succeeded: nothing left on the source');
    else {
      const failed = failedEvent(run, 'killed');
      assert.equal(failed.name, 'EvacuationFailed');
      for (const id of left) assert.match(JSON.stringify(failed.blockers), new RegExp(id), `${id} is named`);
      await assertHeldAndCordoned('killed');
    }
    await assertNovaInvariants(lab, start, { source: NODE, service: 'ours', requestId: 'killed' });
    await restore(run, 'killed', start);
  });

  it('a migration stuck running past the timeout is aborted: the server stays ACTIVE on the source, named', async () => {
    // The lab's migrations stay `running` ≈ 5 s; a 1 s timeout makes each one stuck past it.
    const run = await startRun({ DRAINBRIDGE_NOVA_MAX_MIGRATION_ATTEMPTS: '1' }, 1);
    const [id] = await bootServers(lab, NODE, 1, 'stuck');
    const start = await novaStart(lab, [id as string]);
    const execution = await evacuate(run, 'stuck');
    const outcome = await execution.outcome;
    assert.equal(outcome.ok, false, 'the evacuation failed');
    const failed = failedEvent(run, 'stuck');
    assert.equal(failed.name, 'EvacuationFailed');
    assert.match(`${failed.message} ${JSON.stringify(failed.blockers)}`, /cancelled|aborted/);
    const server = await waitForStatus(lab, id as string, 'ACTIVE');
    assert.equal(server.host, NODE, 'the server stays on the source');
    await assertNovaInvariants(lab, start, { source: NODE, service: 'ours', requestId: 'stuck' });
    await assertHeldAndCordoned('stuck');
    await restore(run, 'stuck', start);
  });
});
