/**
 * Host evacuation against a real Nova (the lab of lab/lab.sh: Nova 26, three fake-driver computes
 * whose live migrations stay `running` ≈ 5 s), driving NovaEvacuationPass directly. Run by `npm run
 * test:e2e` (run.sh), never by `npm test`. The Nova faults (Keystone token revoked or expiring, no valid
 * host, destination compute down, a migration stuck `running`, nova-api down) go through the packaged
 * state machines in faults.e2e.ts.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { NovaEvacuationPass } from '../../../lib/branches/nova/evacuate.ts';
import type { NovaEvacuationOptions } from '../../../lib/branches/nova/model.ts';
import { planNovaHost } from '../../../lib/branches/nova/plan.ts';
import { cancelNovaMigrations, restoreNovaHost } from '../../../lib/branches/nova/restore.ts';
import { MemoryProgressStore } from '../../../lib/progress/memory-store.ts';
import { waitUntil } from '../../support/wait.ts';
import {
  bootServers,
  compute,
  connect,
  deleteAllServers,
  drive,
  HOSTS,
  type Lab,
  migrationsInFlightFrom,
  request,
  setServiceEnabled,
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
    await waitUntil(
      'migration running',
      async () => (await lab.nova.listMigrations(id as string, 'live-migration')).at(-1)?.status === 'running',
      30_000,
      { everyMs: 500 },
    );
    const cancelled = await cancelNovaMigrations({ nova: lab.nova, store }, req.requestId);
    assert.deepEqual(cancelled.aborted, [id]);
    const migration = await waitUntil(
      'migration cancelled',
      async () => {
        const last = (await lab.nova.listMigrations(id as string, 'live-migration')).at(-1);
        return last?.status === 'cancelled' ? last : undefined;
      },
      90_000,
      { everyMs: 500 },
    );
    assert.equal(migration.status, 'cancelled');
    const server = await waitForStatus(lab, id as string, 'ACTIVE');
    assert.equal(server.host, 'compute-1');
  });
});
