/**
 * The Nova pass following its migrations within one pass (NOVA_PASS_WAIT, as the workflow wires it),
 * against the real Nova of lab/lab.sh (fake-driver live migrations stay `running` ≈ 5 s). Run by
 * `npm run test:e2e`, never by `npm test`.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { NovaEvacuationPass, type NovaPassWait } from '../../../lib/branches/nova/evacuate.ts';
import { NOVA_PASS_WAIT } from '../../../lib/branches/nova/index.ts';
import { cancelNovaMigrations, restoreNovaHost } from '../../../lib/branches/nova/restore.ts';
import { EvacuationCancelled } from '../../../lib/errors/index.ts';
import { MemoryProgressStore } from '../../../lib/progress/memory-store.ts';
import { bootServers, connect, deleteAllServers, HOSTS, type Lab, request, setServiceEnabled } from './support.ts';

let lab: Lab;
let counter = 0;
const requestId = (what: string) => `e2e-wait-${what}-${Date.now().toString(36)}-${++counter}`;

function passWith(store: MemoryProgressStore, wait: NovaPassWait) {
  return new NovaEvacuationPass({ nova: lab.nova, store, options: { maxConcurrentMigrations: 1 }, wait });
}

async function resetLab(): Promise<void> {
  await deleteAllServers(lab);
  for (const host of HOSTS) await setServiceEnabled(lab, host, true);
}

before(async () => {
  lab = await connect();
  await resetLab();
});

after(async () => {
  await resetLab();
});

describe('Nova pass: follows its migrations within the pass (real Nova)', { concurrency: false }, () => {
  beforeEach(resetLab);

  test('one pass moves three servers one after another, starting each as the previous one lands', async () => {
    const ids = await bootServers(lab, 'compute-1', 3, 'wait-three');
    const store = new MemoryProgressStore();
    const req = request(requestId('three'), 'compute-1');
    let asked = 0;
    const started = performance.now();
    // The deployed cadence, with room for three migrations however loaded the lab's machine is.
    const wait = { waitMs: 180_000, pollMs: NOVA_PASS_WAIT.pollMs };
    const result = await passWith(store, wait).run({
      request: req,
      now: new Date(),
      startedAt: new Date().toISOString(),
      stillWanted: async () => {
        asked++;
      },
    });
    const seconds = (performance.now() - started) / 1000;
    console.log(`# timing: one pass, 3 servers, 1 at a time: ${seconds.toFixed(1)} s`);
    assert.equal(result.done, true, JSON.stringify(result));
    assert.equal(result.progressed, true);
    assert.equal(result.progress.moved, 3);
    assert.deepEqual(await lab.nova.listServersOnHost('compute-1'), []);
    for (const id of ids) assert.equal((await lab.nova.getServer(id))?.status, 'ACTIVE');
    // The first start is the workflow's own check's; the second and third asked first.
    assert.equal(asked, 2, 'the pass asked whether it is still wanted before each later start');
    assert.ok(seconds < wait.waitMs / 1000, `within the pass's bound (${seconds.toFixed(1)} s)`);
    await restoreNovaHost({ nova: lab.nova, store }, [req.requestId]);
  });

  test('a request no longer wanted (a Restore meanwhile) stops the pass before its next start', async () => {
    await bootServers(lab, 'compute-2', 3, 'wait-cancel');
    const store = new MemoryProgressStore();
    const req = request(requestId('cancel'), 'compute-2');
    const pass = passWith(store, NOVA_PASS_WAIT);
    await assert.rejects(
      pass.run({
        request: req,
        now: new Date(),
        startedAt: new Date().toISOString(),
        stillWanted: async () => {
          throw new EvacuationCancelled(`request ${req.requestId} was restored meanwhile`);
        },
      }),
      { name: 'EvacuationCancelled' },
    );
    // Only the first round's migration was ever started: two servers never left, none was asked to.
    const migrated = await Promise.all(
      (await lab.nova.listServersOnHost('compute-2')).map((s) => lab.nova.listMigrations(s.id, 'live-migration')),
    );
    assert.equal(
      migrated.filter((records) => records.length > 0).length,
      0,
      'no migration of a server still on the host',
    );
    assert.equal((await lab.nova.listServersOnHost('compute-2')).length, 2);
    await cancelNovaMigrations({ nova: lab.nova, store }, req.requestId);
    await restoreNovaHost({ nova: lab.nova, store }, [req.requestId]);
  });

  test('without a wait (waitMs 0) a pass is one round and returns at once', async () => {
    await bootServers(lab, 'compute-3', 2, 'wait-none');
    const store = new MemoryProgressStore();
    const req = request(requestId('none'), 'compute-3');
    const started = performance.now();
    const result = await passWith(store, { waitMs: 0, pollMs: 1000 }).run({
      request: req,
      now: new Date(),
      startedAt: new Date().toISOString(),
    });
    assert.equal(result.done, false);
    assert.equal(result.progress.inFlight, 1);
    assert.ok(performance.now() - started < 4000, 'returned without waiting for the migration');
    await cancelNovaMigrations({ nova: lab.nova, store }, req.requestId);
    await restoreNovaHost({ nova: lab.nova, store }, [req.requestId]);
  });
});
