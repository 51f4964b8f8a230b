/**
 * Host evacuation against a real Nova (the lab of lab/lab.sh: Nova 26, three fake-driver computes
 * whose live migrations stay `running` ≈ 5 s). Run by `npm run test:e2e` (run.sh), never by `npm test`.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { NovaEvacuationFailed, NovaEvacuationPass } from '../../../lib/nova/evacuate.ts';
import type { NovaEvacuationOptions } from '../../../lib/nova/model.ts';
import { planNovaHost } from '../../../lib/nova/plan.ts';
import { cancelNovaMigrations, restoreNovaHost } from '../../../lib/nova/restore.ts';
import { MemoryProgressStore } from '../../../lib/progress/memory-store.ts';
import { assertNovaInvariants, novaStart } from './invariants.ts';
import {
  bootServers,
  compute,
  connect,
  deleteAllServers,
  drive,
  HOSTS,
  type Lab,
  labCtl,
  migrationsInFlightFrom,
  request,
  setServiceEnabled,
  waitFor,
  waitForStatus,
} from './support.ts';

let lab: Lab;
let counter = 0;
const requestId = (what: string) => `e2e-${what}-${Date.now().toString(36)}-${++counter}`;

function newPass(store: MemoryProgressStore, options: Partial<NovaEvacuationOptions> = {}) {
  return new NovaEvacuationPass({ nova: lab.nova, store, options });
}

function report(what: string, seconds: number, extra = ''): void {
  console.log(`# timing: ${what}: ${seconds.toFixed(1)} s${extra ? ` (${extra})` : ''}`);
}

async function resetLab(): Promise<void> {
  await deleteAllServers(lab);
  for (const host of HOSTS) await setServiceEnabled(lab, host, true);
}

/** Every server ACTIVE and on an enabled host other than `source`. */
async function assertMovedOff(ids: readonly string[], source: string): Promise<void> {
  const enabled = new Set(
    (await lab.nova.listComputeServices()).filter((s) => s.status === 'enabled').map((s) => s.host),
  );
  for (const id of ids) {
    const server = await lab.nova.getServer(id);
    assert.equal(server?.status, 'ACTIVE', `server ${id} status`);
    assert.notEqual(server?.host, source, `server ${server?.name} left ${source}`);
    assert.ok(enabled.has(server?.host ?? ''), `server ${server?.name} is on enabled host (${server?.host})`);
  }
}

before(async () => {
  lab = await connect();
  await resetLab();
});

after(async () => {
  await resetLab();
});

describe('Nova host evacuation (real Nova)', { concurrency: false }, () => {
  beforeEach(resetLab);

  test('12 servers: host emptied within the concurrency limit, service disabled with our reason, restore re-enables', async () => {
    const ids = await bootServers(lab, 'compute-1', 12, 'twelve');
    const store = new MemoryProgressStore();
    const req = request(requestId('twelve'), 'compute-1');
    const limit = 2;
    let maxSeen = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        maxSeen = Math.max(maxSeen, await migrationsInFlightFrom(lab, 'compute-1', ids));
        await sleep(250);
      }
    })();
    const outcome = await drive(newPass(store, { maxConcurrentMigrations: limit }), req, {
      afterPass: (result) => {
        assert.ok(result.progress.inFlight <= limit, `pass reports ${result.progress.inFlight} in flight`);
      },
    });
    sampling = false;
    await sampler;
    report(
      'evacuate 12 servers (limit 2)',
      outcome.seconds,
      `${outcome.passes} passes, max ${maxSeen} in flight seen in Nova`,
    );
    assert.equal(outcome.result.done, true, JSON.stringify(outcome.result));
    assert.equal(outcome.result.progress.moved, 12);
    assert.ok(maxSeen >= 1 && maxSeen <= limit, `in flight observed in Nova: ${maxSeen}`);
    assert.deepEqual(await lab.nova.listServersOnHost('compute-1'), []);
    const [service] = await lab.nova.listComputeServices('compute-1');
    assert.equal(service?.status, 'disabled');
    assert.match(service?.disabledReason ?? '', new RegExp(`^drainbridge:${req.requestId}:`));
    await assertMovedOff(ids, 'compute-1');

    const restored = await restoreNovaHost({ nova: lab.nova, store }, [req.requestId]);
    assert.equal(restored.action, 'enabled');
    const [after] = await lab.nova.listComputeServices('compute-1');
    assert.equal(after?.status, 'enabled');
  });

  test('a host disabled beforehand by someone else stays disabled after restore', async () => {
    const ids = await bootServers(lab, 'compute-2', 2, 'foreign');
    await setServiceEnabled(lab, 'compute-2', false, 'ops: replacing a DIMM');
    const store = new MemoryProgressStore();
    const req = request(requestId('foreign'), 'compute-2');
    const outcome = await drive(newPass(store), req);
    report('evacuate 2 servers from a host disabled by someone else', outcome.seconds);
    assert.equal(outcome.result.done, true);
    await assertMovedOff(ids, 'compute-2');
    const restored = await restoreNovaHost({ nova: lab.nova, store }, [req.requestId]);
    assert.equal(restored.action, 'left-disabled');
    const [service] = await lab.nova.listComputeServices('compute-2');
    assert.equal(service?.status, 'disabled');
    assert.equal(service?.disabledReason, 'ops: replacing a DIMM');
  });

  test("no valid host: the evacuation fails with Nova's reason, every server stays ACTIVE on the source", async () => {
    const ids = await bootServers(lab, 'compute-1', 3, 'novalid');
    await setServiceEnabled(lab, 'compute-2', false, 'e2e: no room');
    await setServiceEnabled(lab, 'compute-3', false, 'e2e: no room');
    const store = new MemoryProgressStore();
    const start = await novaStart(lab, ids);
    const req = request(requestId('novalid'), 'compute-1');
    const started = Date.now();
    await assert.rejects(drive(newPass(store, { maxAttempts: 2 }), req), (error: unknown) => {
      assert.ok(error instanceof NovaEvacuationFailed, String(error));
      assert.equal(error.name, 'EvacuationFailed');
      assert.match(error.message, /No valid host was found/);
      assert.ok(error.blockers.every((b) => b.code === 'NoValidHost'));
      return true;
    });
    report('evacuation failing with no valid host (3 servers, 2 attempts each)', (Date.now() - started) / 1000);
    await assertNovaInvariants(lab, start, { source: 'compute-1', service: 'ours', requestId: req.requestId });
    for (const id of ids) {
      const server = await lab.nova.getServer(id);
      assert.equal(server?.status, 'ACTIVE');
      assert.equal(server?.host, 'compute-1');
    }
  });

  test('a node whose host has no nova-compute service fails, never skips', async () => {
    const store = new MemoryProgressStore();
    await assert.rejects(
      newPass(store).run({
        request: request(requestId('nohost'), 'worker-9'),
        now: new Date(),
        startedAt: new Date().toISOString(),
      }),
      (error: unknown) =>
        error instanceof Error &&
        error.name === 'EvacuationFailed' &&
        /no nova-compute service on host "worker-9"/.test(error.message),
    );
    const plan = await planNovaHost({ nova: lab.nova, placement: lab.placement }, 'worker-9');
    assert.deepEqual(
      plan.blockers.map((b) => b.code),
      ['NoComputeService'],
    );
  });

  test('a SHUTOFF server is a blocker by default and is left alone', async () => {
    const [running, stopped] = await bootServers(lab, 'compute-1', 2, 'shutoff');
    await compute(lab, 'POST', `/servers/${stopped}/action`, { 'os-stop': null });
    await waitForStatus(lab, stopped as string, 'SHUTOFF');
    const outcome = await drive(newPass(new MemoryProgressStore()), request(requestId('shutoff'), 'compute-1'));
    report('evacuate 1 ACTIVE + 1 SHUTOFF server', outcome.seconds);
    assert.equal(outcome.result.done, false);
    assert.deepEqual(
      outcome.result.blockers.map((b) => [b.code, b.item?.uid]),
      [['NotLiveMigratable', stopped]],
    );
    const left = await lab.nova.getServer(stopped as string);
    assert.equal(left?.status, 'SHUTOFF');
    assert.equal(left?.host, 'compute-1');
    await assertMovedOff([running as string], 'compute-1');
  });

  test('opt-in: a SHUTOFF server is cold-migrated and confirmed, and stays SHUTOFF', async () => {
    const [stopped] = await bootServers(lab, 'compute-1', 1, 'cold');
    await compute(lab, 'POST', `/servers/${stopped}/action`, { 'os-stop': null });
    await waitForStatus(lab, stopped as string, 'SHUTOFF');
    const pass = newPass(new MemoryProgressStore(), { shutoffPolicy: 'cold-migrate' });
    const outcome = await drive(pass, request(requestId('cold'), 'compute-1'));
    report('cold-migrate 1 SHUTOFF server', outcome.seconds);
    assert.equal(outcome.result.done, true, JSON.stringify(outcome.result));
    const moved = await waitForStatus(lab, stopped as string, 'SHUTOFF');
    assert.notEqual(moved.host, 'compute-1');
  });

  test('capacity short on the other hosts: the plan says so before anything moves', async () => {
    const ids = await bootServers(lab, 'compute-1', 2, 'capacity');
    const providers = (await lab.nova.listHypervisors()).filter((h) => h.host !== 'compute-1');
    const original = new Map<string, number>();
    try {
      for (const hypervisor of providers) {
        const provider = { uuid: hypervisor.id, name: hypervisor.host };
        const capacity = await lab.placement.capacityOf(provider);
        const memory = capacity.inventories.MEMORY_MB;
        assert.ok(memory, 'memory inventory');
        original.set(hypervisor.id, memory.reserved);
        // Leave less than one m1.tiny (512 MB) free after the allocation ratio.
        await lab.placement.setReserved(provider, 'MEMORY_MB', memory.total - Math.floor(256 / memory.allocationRatio));
      }
      const plan = await planNovaHost({ nova: lab.nova, placement: lab.placement }, 'compute-1');
      assert.equal(plan.toMove.length, 2);
      assert.equal(plan.capacity?.fits, false);
      const shortages = plan.blockers.filter((b) => b.code === 'InsufficientCapacity');
      assert.equal(shortages.length, 2, JSON.stringify(plan.blockers));
      assert.match(shortages[0]?.reason ?? '', /MEMORY_MB=512/);
      for (const id of ids) assert.equal((await lab.nova.getServer(id))?.host, 'compute-1');
      const [service] = await lab.nova.listComputeServices('compute-1');
      assert.equal(service?.status, 'enabled', 'planning changes nothing');
    } finally {
      for (const hypervisor of providers) {
        const reserved = original.get(hypervisor.id);
        if (reserved !== undefined)
          await lab.placement.setReserved({ uuid: hypervisor.id, name: hypervisor.host }, 'MEMORY_MB', reserved);
      }
    }
    const plan = await planNovaHost({ nova: lab.nova, placement: lab.placement }, 'compute-1');
    assert.equal(plan.capacity?.fits, true, 'room again once the reservation is lifted');
  });

  test('Keystone token revoked mid-run: re-authenticate and continue', async () => {
    const ids = await bootServers(lab, 'compute-1', 3, 'revoke');
    const store = new MemoryProgressStore();
    const start = await novaStart(lab, ids);
    const req = request(requestId('revoke'), 'compute-1');
    const authsBefore = lab.session.authCount;
    let revoked = false;
    const outcome = await drive(newPass(store), req, {
      afterPass: async (_result, n) => {
        if (n !== 1) return;
        const victim = await lab.session.token();
        const other = await connect();
        await other.session.request({
          service: `${lab.credentials.authUrl}`,
          method: 'DELETE',
          path: '/auth/tokens',
          headers: { 'X-Subject-Token': victim },
        });
        revoked = true;
      },
    });
    report('evacuate 3 servers with the token revoked after pass 1', outcome.seconds);
    assert.ok(revoked);
    assert.equal(outcome.result.done, true);
    assert.ok(lab.session.authCount > authsBefore, 'authenticated again');
    await assertMovedOff(ids, 'compute-1');
    await assertNovaInvariants(lab, start, { source: 'compute-1', service: 'ours', requestId: req.requestId });
  });

  test('a migration running past the abort timeout is aborted; the server stays ACTIVE on the source', async () => {
    const [id] = await bootServers(lab, 'compute-1', 1, 'abort');
    const start = await novaStart(lab, [id as string]);
    const req = request(requestId('abort'), 'compute-1');
    const started = Date.now();
    await assert.rejects(
      drive(newPass(new MemoryProgressStore(), { abortAfterSeconds: 1, maxAttempts: 1 }), req),
      (error: unknown) => error instanceof NovaEvacuationFailed && /cancelled|aborted/.test(error.message),
    );
    report('abort of a stuck migration', (Date.now() - started) / 1000);
    const server = await waitForStatus(lab, id as string, 'ACTIVE');
    assert.equal(server.host, 'compute-1');
    await assertNovaInvariants(lab, start, { source: 'compute-1', service: 'ours', requestId: req.requestId });
  });

  test('force-complete finishes a long migration early', async () => {
    const [id] = await bootServers(lab, 'compute-1', 1, 'force');
    const outcome = await drive(
      newPass(new MemoryProgressStore(), { forceCompleteAfterSeconds: 1 }),
      request(requestId('force'), 'compute-1'),
    );
    report('evacuation with force-complete after 1 s', outcome.seconds);
    assert.equal(outcome.result.done, true);
    await assertMovedOff([id as string], 'compute-1');
  });

  test("cancel aborts drainbridge's in-flight migration; the server keeps running where it is", async () => {
    const [id] = await bootServers(lab, 'compute-1', 1, 'cancel');
    const store = new MemoryProgressStore();
    const req = request(requestId('cancel'), 'compute-1');
    const pass = newPass(store);
    await pass.run({ request: req, now: new Date(), startedAt: new Date().toISOString() });
    await waitFor(
      'migration running',
      async () => (await lab.nova.listMigrations(id as string, 'live-migration')).at(-1)?.status === 'running',
      30,
    );
    const cancelled = await cancelNovaMigrations({ nova: lab.nova, store }, req.requestId);
    assert.deepEqual(cancelled.aborted, [id]);
    const migration = await waitFor('migration cancelled', async () => {
      const last = (await lab.nova.listMigrations(id as string, 'live-migration')).at(-1);
      return last?.status === 'cancelled' ? last : undefined;
    });
    assert.equal(migration.status, 'cancelled');
    const server = await waitForStatus(lab, id as string, 'ACTIVE');
    assert.equal(server.host, 'compute-1');
  });

  test('destination compute killed mid-evacuation: every server ends ACTIVE, moved or a blocker on the source', async () => {
    const ids = await bootServers(lab, 'compute-1', 4, 'killed');
    const store = new MemoryProgressStore();
    const start = await novaStart(lab, ids);
    const req = request(requestId('killed'), 'compute-1');
    let killedAt = 0;
    try {
      const outcome = await drive(newPass(store, { maxAttempts: 3 }), req, {
        maxSeconds: 400,
        afterPass: async (_result, n) => {
          if (n !== 1) return;
          await labCtl('stop', 'nova-compute-2');
          killedAt = Date.now();
        },
      }).catch((error: unknown) => {
        if (error instanceof NovaEvacuationFailed)
          return { blockers: error.blockers, seconds: (Date.now() - killedAt) / 1000 };
        throw error;
      });
      const blockers = 'result' in outcome ? outcome.result.blockers : outcome.blockers;
      report(
        'evacuate 4 servers with compute-2 killed after the first pass',
        outcome.seconds,
        `${blockers.length} blockers`,
      );
      const blocked = new Set(blockers.map((b) => b.item?.uid));
      for (const id of ids) {
        const server = await lab.nova.getServer(id);
        assert.equal(server?.status, 'ACTIVE', `server ${server?.name} is ${server?.status}`);
        if (server?.host === 'compute-1')
          assert.ok(blocked.has(id), `server ${server.name} on the source is a blocker`);
        else
          assert.ok(
            ['compute-2', 'compute-3'].includes(server?.host ?? ''),
            `server ${server?.name} on ${server?.host}`,
          );
      }
    } finally {
      await labCtl('start', 'nova-compute-2');
    }
    await assertNovaInvariants(lab, start, { source: 'compute-1', service: 'ours', requestId: req.requestId });
  });
});
