/**
 * `drainbridge run` SIGKILLed mid-evacuation and started again (real child processes): the new process
 * takes the run Lease, finds the unfinished Evacuation record and resumes the same request — no second
 * hold, no pod evicted twice, and without waiting for the dead execution's owner mark to expire. Then
 * SIGKILLed mid-Restore (its release of the node held unanswered by the simulator, so the process dies
 * between the Restore's start and its end) and started again: it resumes the Restore, which finishes — the
 * request released, no hold left, the record's Restore finished.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { EvacuationObject } from '../../lib/clients/kube/paths.ts';
import { readLedger } from '../../lib/node/ledger.ts';
import { OWNER_TTL_SECONDS } from '../../lib/workflow/ownership.ts';
import {
  type DrainbridgeProcess,
  RUN_USER,
  spreadScenario,
  startRun,
  startTestCluster,
  type TestCluster,
} from '../forwarder/harness.ts';
import { waitUntil } from '../support/wait.ts';

/** Every web pod on node-1 (the others cordoned until the test opens them), one disruption at a time. */
const SCENARIO = {
  ...spreadScenario(3, { replicas: 6, speed: 4 }),
  name: 'resume',
  podStartupDelaySeconds: 3,
  nodes: [{ name: 'node-1' }, { name: 'node-2', unschedulable: true }, { name: 'node-3', unschedulable: true }],
  pdbs: [
    {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: 'web', namespace: 'shop' },
      spec: { maxUnavailable: 1, selector: { matchLabels: { app: 'web' } } },
    },
  ],
};

describe('drainbridge run SIGKILLed mid-evacuation, then mid-Restore, and started again each time', () => {
  let cluster: TestCluster;
  const processes: DrainbridgeProcess[] = [];
  const start = async (identity: string): Promise<DrainbridgeProcess> => {
    const run = await startRun(cluster, { identity, cordonEvacuates: 'all', leadWithinMs: 40_000 });
    processes.push(run);
    return run;
  };
  const record = async (): Promise<EvacuationObject | undefined> =>
    (await cluster.admin.listEvacuations()).find((r) => r.spec.nodeName === 'node-1');
  const evictions = (): string[] =>
    cluster.sim.requestLog
      .writes({ user: RUN_USER, resource: 'pods' })
      .filter((r) => r.subresource === 'eviction')
      .map((r) => `${r.namespace}/${r.name}`);

  before(async () => {
    cluster = await startTestCluster(SCENARIO);
    for (const name of ['node-2', 'node-3']) await cluster.admin.patchNode(name, { spec: { unschedulable: false } });
  });
  after(async () => {
    for (const run of processes) run.kill('SIGKILL');
    await Promise.all(processes.map((r) => r.exited));
    await cluster?.stop();
  });

  it('finishes the evacuation with the same request, one hold, no pod evicted twice', async () => {
    const first = await start('run-a');
    assert.equal((await cluster.kubectl.run(['cordon', 'node-1'])).code, 0);
    await waitUntil(
      'the pod branch is under way',
      async () => {
        const pods = (await record())?.status?.branches?.pods;
        return (pods?.moved ?? 0) >= 1 && (pods?.moved ?? 0) < (pods?.total ?? 0);
      },
      60_000,
    );
    first.kill('SIGKILL');
    await first.exited;
    const killed = await record();
    const requestId = killed?.spec.requestId ?? '';
    assert.match(requestId, /^cordon\.node-1\./);
    assert.notEqual(killed?.status?.phase, 'NodeDrained', 'killed mid-evacuation');
    const evictedBeforeKill = evictions();
    assert.ok(evictedBeforeKill.length >= 1);

    const restartedAt = Date.now();
    const second = await start('run-b');
    await second.waitForLog('resuming an unfinished request', { requestId, action: 'evacuate' });
    await waitUntil('node-1 drained', async () => (await record())?.status?.phase === 'NodeDrained', 90_000);
    const tookMs = Date.now() - restartedAt;
    assert.ok(tookMs < OWNER_TTL_SECONDS * 1000, `resumed at once (${tookMs} ms), not after the owner mark expired`);

    const node = await cluster.admin.getNode('node-1');
    assert.deepEqual(Object.keys(readLedger(node).holds), [requestId], 'still one hold, the same request');
    assert.equal((await cluster.admin.listEvacuations()).filter((r) => r.spec.nodeName === 'node-1').length, 1);
    const all = evictions();
    assert.deepEqual(
      all.filter((key, i) => all.indexOf(key) !== i),
      [],
      `no pod evicted twice (${all.join(', ')})`,
    );
    const pods = await cluster.admin.listPods('spec.nodeName=node-1');
    assert.deepEqual(
      pods
        .filter((p) => !p.metadata?.deletionTimestamp && p.metadata?.labels?.app === 'web')
        .map((p) => p.metadata?.name),
      [],
      'node-1 holds no web pod',
    );
  });

  it('SIGKILLed during the Restore: started again, it finishes the Restore', async () => {
    const running = processes.at(-1) as DrainbridgeProcess;
    const requestId = (await record())?.spec.requestId ?? '';
    assert.equal((await record())?.status?.phase, 'NodeDrained', 'the evacuation of the previous case is done');
    // The Restore's release of node-1 (the ledger write) will not be answered.
    const heal = cluster.sim.faults.holdRequests({ user: RUN_USER, verbs: ['patch', 'update'], resources: ['nodes'] });
    try {
      assert.equal((await cluster.kubectl.run(['uncordon', 'node-1'])).code, 0);
      await waitUntil(
        'the Restore started and its node write is held',
        async () =>
          !!(await record())?.status?.restore?.startedAt &&
          cluster.sim.faults.heldRequests({ user: RUN_USER, resources: ['nodes'] }) >= 1,
        60_000,
      );
      running.kill('SIGKILL');
      await running.exited;
      await waitUntil(
        'the held write is dropped with its client',
        () => cluster.sim.faults.heldRequests({ user: RUN_USER }) === 0,
      );
    } finally {
      heal();
    }
    const killed = await record();
    assert.equal(killed?.status?.restore?.finishedAt, undefined, 'killed mid-Restore');
    assert.ok(Object.hasOwn(readLedger(await cluster.admin.getNode('node-1')).holds, requestId), 'still held');

    const next = await start('run-c');
    await next.waitForLog('resuming an unfinished request', { requestId, action: 'restore' }, 60_000);
    await waitUntil('the Restore finished', async () => !!(await record())?.status?.restore?.finishedAt, 60_000);
    const ledger = readLedger(await cluster.admin.getNode('node-1'));
    assert.deepEqual(ledger.holds, {}, 'no hold left');
    assert.ok(Object.hasOwn(ledger.released, requestId), 'the request released');
    assert.notEqual((await cluster.admin.getNode('node-1')).spec?.unschedulable, true, 'node-1 schedulable');
    await next.waitForLog('Node Restored');
  });
});
