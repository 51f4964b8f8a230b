/**
 * Fault injection: the Kubernetes API failing per call kind — 5xx, 429 without a budget cause, a write
 * that times out on the client but is applied by the server, a permanent 403 — while an evacuation runs.
 * Transient faults are retried (by the client, then by the state machine) and the evacuation finishes
 * with nothing done twice; a permanent one ends in the safe state with the outcome naming it.
 */
import assert from 'node:assert/strict';
import { describe } from 'node:test';
import { readLedger } from '../../lib/node/ledger.ts';
import { waitUntil } from '../support/wait.ts';
import {
  CLIENT_TIMEOUT_MS,
  delayWrites,
  evacuate,
  evictions,
  expectFailed,
  expectSucceeded,
  type FaultWorld,
  failReads,
  failWrites,
  openSpareNodes,
  realMs,
  scenario,
  WORKFLOW_SCENARIO,
} from './harness.ts';

const cluster = WORKFLOW_SCENARIO;

/** Waits until a step failed with `name` at least `count` times (the fault was felt), then returns. */
async function untilFelt(w: FaultWorld, name: string, count = 1): Promise<void> {
  await waitUntil(
    `${count} task(s) failed with ${name}`,
    () => w.taskCalls.filter((c) => c.error?.name === name).length >= count,
  );
}

function holdsOf(w: FaultWorld, node: string): string[] {
  return Object.keys(readLedger(w.sim.store.get({ group: '', resource: 'nodes' }, undefined, node) as never).holds);
}

/** Every web pod was evicted at most once by a successful eviction. */
function evictedOnce(w: FaultWorld): void {
  const seen = evictions(w);
  assert.equal(new Set(seen).size, seen.length, `a pod was evicted twice: ${seen.join(', ')}`);
}

describe('fault injection: API errors per call kind', () => {
  scenario('get node answers 500 for a while: the steps retry, the evacuation finishes', { cluster }, async (w) => {
    await openSpareNodes(w);
    const heal = failReads(w, ['nodes'], 500, ['get']);
    const execution = await evacuate(w, 'node-1');
    await untilFelt(w, 'TransientError');
    heal();
    await expectSucceeded(w, execution);
    assert.deepEqual(holdsOf(w, 'node-1'), ['req-node-1']);
  });

  scenario('list pods answers 503 for a while: the pass retries, nothing is evicted twice', { cluster }, async (w) => {
    await openSpareNodes(w);
    const execution = await evacuate(w, 'node-1');
    await waitUntil('the first eviction', () => evictions(w).length > 0);
    const heal = failReads(w, ['pods'], 503, ['list']);
    await untilFelt(w, 'TransientError');
    heal();
    await expectSucceeded(w, execution);
    evictedOnce(w);
  });

  scenario(
    'get DaemonSet answers 503 for a while: retried like any transient fault, not taken for the drain refusing its pods',
    { cluster },
    async (w) => {
      await openSpareNodes(w);
      const heal = failReads(w, ['daemonsets'], 503, ['get']);
      const execution = await evacuate(w, 'node-1');
      await untilFelt(w, 'TransientError');
      heal();
      await expectSucceeded(w, execution);
    },
  );

  scenario('list PodDisruptionBudgets answers 429 (no budget cause): retried, finishes', { cluster }, async (w) => {
    await openSpareNodes(w);
    const heal = failReads(w, ['poddisruptionbudgets'], 429, ['list']);
    const execution = await evacuate(w, 'node-1');
    await untilFelt(w, 'TransientError');
    heal();
    await expectSucceeded(w, execution);
  });

  scenario('patching the node (the hold) answers 500 six times: one hold, finishes', { cluster }, async (w) => {
    await openSpareNodes(w);
    const fault = failWrites(w, { verb: 'patch', resource: 'nodes', name: 'node-1' }, 500, 6);
    const execution = await evacuate(w, 'node-1');
    await expectSucceeded(w, execution);
    assert.equal(fault.hits(), 6);
    assert.deepEqual(holdsOf(w, 'node-1'), ['req-node-1']);
  });

  scenario(
    'evictions answer 429 without a budget cause three times: retried, each pod evicted once',
    { cluster },
    async (w) => {
      await openSpareNodes(w);
      const fault = failWrites(w, { verb: 'create', resource: 'pods', subresource: 'eviction' }, 429, 3);
      const execution = await evacuate(w, 'node-1');
      await expectSucceeded(w, execution);
      assert.equal(fault.hits(), 3);
      evictedOnce(w);
    },
  );

  scenario('evictions answer 500 three times: retried, each pod evicted once, none deleted', { cluster }, async (w) => {
    await openSpareNodes(w);
    const fault = failWrites(w, { verb: 'create', resource: 'pods', subresource: 'eviction' }, 500, 3);
    const execution = await evacuate(w, 'node-1');
    await expectSucceeded(w, execution);
    assert.equal(fault.hits(), 3);
    evictedOnce(w);
  });

  scenario(
    'creating Events always answers 500: Events are best effort, the evacuation finishes',
    { cluster },
    async (w) => {
      await openSpareNodes(w);
      const fault = failWrites(w, { verb: 'create', resource: 'events' }, 500);
      const execution = await evacuate(w, 'node-1');
      await expectSucceeded(w, execution);
      assert.ok(fault.hits() > 0, 'drainbridge tried to record Events');
    },
  );

  scenario('updating the Evacuation record answers 500 six times: retried, finishes', { cluster }, async (w) => {
    await openSpareNodes(w);
    const fault = failWrites(w, { verb: 'update', resource: 'evacuations' }, 500, 6);
    const execution = await evacuate(w, 'node-1');
    await expectSucceeded(w, execution);
    assert.equal(fault.hits(), 6);
  });

  scenario('the admission Lease answers 503 six times: admission retries, one slot taken', { cluster }, async (w) => {
    await openSpareNodes(w);
    const fault = failWrites(w, { resource: 'leases' }, 503, 6);
    const execution = await evacuate(w, 'node-1');
    await expectSucceeded(w, execution);
    assert.equal(fault.hits(), 6);
    assert.deepEqual(holdsOf(w, 'node-1'), ['req-node-1']);
  });

  scenario(
    'the hold write times out on the client but the server applies it: still one hold',
    { cluster },
    async (w) => {
      await openSpareNodes(w);
      const fault = delayWrites(
        w,
        {
          verb: 'patch',
          resource: 'nodes',
          name: 'node-1',
          body: (b) => JSON.stringify(b).includes('drainbridge.io/ledger'),
        },
        () => realMs(CLIENT_TIMEOUT_MS * 2),
      );
      const execution = await evacuate(w, 'node-1');
      await expectSucceeded(w, execution);
      assert.equal(fault.hits(), 1);
      assert.deepEqual(holdsOf(w, 'node-1'), ['req-node-1']);
    },
  );

  scenario(
    'an eviction times out on the client but the server applies it: only that pod is evicted again, once',
    { cluster },
    async (w) => {
      await openSpareNodes(w);
      // The server holds the eviction past the client's timeout, then applies it. drainbridge cannot tell
      // an eviction that got no answer from one never sent: it asks again after the backoff, as it would
      // for any pod it finds still there. Both name the same pod uid: it is deleted once (the later one
      // finds it terminating, which the eviction API lets go without its budget). No other pod is asked twice.
      let held = '';
      const fault = delayWrites(w, { verb: 'create', resource: 'pods', subresource: 'eviction' }, async (request) => {
        held = `${request.namespace}/${request.name}`;
        await realMs(CLIENT_TIMEOUT_MS * 2);
      });
      const execution = await evacuate(w, 'node-1');
      await expectSucceeded(w, execution);
      assert.equal(fault.hits(), 1);
      const evicted = evictions(w);
      const again = evicted.filter((pod, index) => evicted.indexOf(pod) !== index);
      assert.ok(
        again.every((pod) => pod === held) && again.length <= 1,
        `evicted again: ${again.join(', ')} (held: ${held})`,
      );
    },
  );

  scenario(
    'a record write times out on the client but is applied: the branch version still holds',
    { cluster },
    async (w) => {
      await openSpareNodes(w);
      const fault = delayWrites(w, { verb: 'update', resource: 'evacuations' }, () => realMs(CLIENT_TIMEOUT_MS * 2), 2);
      const execution = await evacuate(w, 'node-1');
      await expectSucceeded(w, execution);
      assert.equal(fault.hits(), 2);
      evictedOnce(w);
    },
  );

  const proxied = { cluster, throughProxy: true };

  scenario(
    'get node never answers, three times mid-drain: the client times out, retries, finishes',
    proxied,
    async (w) => {
      await openSpareNodes(w);
      const execution = await evacuate(w, 'node-1');
      await waitUntil('admitted', () => w.taskCalls.some((c) => c.functionKey === 'admit' && !c.error));
      const rule = w.proxy?.add({ method: 'GET', path: /^\/api\/v1\/nodes\/node-1(\?|$)/, action: 'hang', times: 3 });
      await expectSucceeded(w, execution);
      assert.equal(rule?.hits, 3);
    },
  );

  scenario(
    'list pods never answers, twice mid-drain: timed out, retried, each pod evicted once',
    proxied,
    async (w) => {
      await openSpareNodes(w);
      const execution = await evacuate(w, 'node-1');
      await waitUntil('the first eviction', () => evictions(w).length > 0);
      const rule = w.proxy?.add({ method: 'GET', path: /^\/api\/v1\/pods\?/, action: 'hang', times: 2 });
      await expectSucceeded(w, execution);
      assert.equal(rule?.hits, 2);
      evictedOnce(w);
    },
  );

  scenario(
    'the connection resets on evictions twice: not applied, retried later, each pod evicted once',
    proxied,
    async (w) => {
      await openSpareNodes(w);
      const rule = w.proxy?.add({ method: 'POST', path: /\/eviction/, action: 'reset', times: 2 });
      const execution = await evacuate(w, 'node-1');
      await expectSucceeded(w, execution);
      assert.equal(rule?.hits, 2);
      evictedOnce(w);
    },
  );

  scenario('the Evacuation record read never answers twice: timed out, retried, finishes', proxied, async (w) => {
    await openSpareNodes(w);
    const execution = await evacuate(w, 'node-1');
    await waitUntil('admitted', () => w.taskCalls.some((c) => c.functionKey === 'admit' && !c.error));
    const rule = w.proxy?.add({ method: 'GET', path: /\/evacuations\//, action: 'hang', times: 2 });
    await expectSucceeded(w, execution);
    assert.equal(rule?.hits, 2);
  });

  scenario(
    'evictions become 403 Forbidden mid-drain (RBAC revoked): blocked until the deadline, named, safe state',
    { cluster },
    async (w) => {
      const execution = await evacuate(w, 'node-1', {
        deadline: new Date(w.sim.clock.now() + 180_000).toISOString(),
      });
      await waitUntil('the first eviction', () => evictions(w).length > 0);
      failWrites(w, { verb: 'create', resource: 'pods', subresource: 'eviction' }, 403);
      await openSpareNodes(w);
      await expectFailed(w, execution, 'DeadlineExceeded', /deadline/);
      const [failed] = w.busEvents.filter((e) => e.detailType === 'Evacuation Failed');
      assert.match(JSON.stringify(failed?.detail.blockers), /403|[Ff]orbidden/, 'the blockers name the refusal');
    },
  );
});

/**
 * 429 TooManyRequests on every kind of call drainbridge makes besides evictions (where it means a budget):
 * the apiserver's priority and fairness throttling. Retried by the client, then by the state machine; the
 * evacuation finishes with one hold and nothing done twice.
 */
describe('fault injection: 429 TooManyRequests per call kind', () => {
  const LEASES = 'leases';

  scenario('get node answers 429 for a while: retried, one hold, finishes', { cluster }, async (w) => {
    await openSpareNodes(w);
    const heal = failReads(w, ['nodes'], 429, ['get']);
    const execution = await evacuate(w, 'node-1');
    await untilFelt(w, 'TransientError');
    heal();
    await expectSucceeded(w, execution);
    assert.deepEqual(holdsOf(w, 'node-1'), ['req-node-1']);
    evictedOnce(w);
  });

  scenario('patching the node answers 429 six times: one hold, finishes', { cluster }, async (w) => {
    await openSpareNodes(w);
    const fault = failWrites(w, { verb: 'patch', resource: 'nodes', name: 'node-1' }, 429, 6);
    const execution = await evacuate(w, 'node-1');
    await expectSucceeded(w, execution);
    assert.equal(fault.hits(), 6);
    assert.deepEqual(holdsOf(w, 'node-1'), ['req-node-1']);
  });

  scenario('get Evacuation record answers 429 for a while mid-drain: retried, finishes', { cluster }, async (w) => {
    await openSpareNodes(w);
    const execution = await evacuate(w, 'node-1');
    await waitUntil('the first eviction', () => evictions(w).length > 0);
    const heal = failReads(w, ['evacuations'], 429, ['get']);
    await untilFelt(w, 'TransientError');
    heal();
    await expectSucceeded(w, execution);
    evictedOnce(w);
  });

  scenario('updating the Evacuation record answers 429 six times: retried, finishes', { cluster }, async (w) => {
    await openSpareNodes(w);
    const fault = failWrites(w, { verb: 'update', resource: 'evacuations' }, 429, 6);
    const execution = await evacuate(w, 'node-1');
    await expectSucceeded(w, execution);
    assert.equal(fault.hits(), 6);
    evictedOnce(w);
  });

  scenario('get admission Lease answers 429 for a while: admission retries, one slot taken', { cluster }, async (w) => {
    await openSpareNodes(w);
    const heal = failReads(w, [LEASES], 429, ['get']);
    const execution = await evacuate(w, 'node-1');
    await untilFelt(w, 'TransientError');
    heal();
    await expectSucceeded(w, execution);
    assert.deepEqual(holdsOf(w, 'node-1'), ['req-node-1']);
  });

  scenario(
    'updating the admission Lease answers 429 three times: admission retries, one slot taken',
    { cluster },
    async (w) => {
      await openSpareNodes(w);
      const fault = failWrites(w, { verb: 'update', resource: LEASES }, 429, 3);
      const execution = await evacuate(w, 'node-1');
      await expectSucceeded(w, execution);
      assert.equal(fault.hits(), 3);
      assert.deepEqual(holdsOf(w, 'node-1'), ['req-node-1']);
    },
  );

  scenario(
    'creating Events always answers 429: Events are best effort, the evacuation finishes',
    { cluster },
    async (w) => {
      await openSpareNodes(w);
      const fault = failWrites(w, { verb: 'create', resource: 'events' }, 429);
      const execution = await evacuate(w, 'node-1');
      await expectSucceeded(w, execution);
      assert.ok(fault.hits() > 0, 'drainbridge tried to record Events');
      evictedOnce(w);
    },
  );
});
