/**
 * The README's workstation recipe as a user runs it: `drainbridge run --cordon-evacuates all` with nothing
 * else set (no DRAINBRIDGE_DRAIN_* variable, no drain flag) on the `demo` scenario, which has a DaemonSet
 * on every node and a bare pod on node-1 (sim/scenarios/demo.yaml). A cordon skips the DaemonSet pods,
 * as every origin does, and keeps the bare pod, as kubectl does on a node that stays up
 * (docs/drain-defaults.md).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { parse } from 'yaml';
import type { EvacuationObject } from '../../lib/clients/kube/paths.ts';
import { DrainbridgeProcess, startRun, startTestCluster, type TestCluster } from '../forwarder/harness.ts';
import { waitUntil } from '../support/wait.ts';

const DEMO = parse(readFileSync(new URL('../../sim/scenarios/demo.yaml', import.meta.url), 'utf8')) as Record<
  string,
  unknown
>;

/** The last status read of each node's record, for a timeout's message. */
const lastSeen = new Map<string, string>();

async function recordOf(cluster: TestCluster, node: string): Promise<EvacuationObject | undefined> {
  const record = (await cluster.admin.listEvacuations()).find((r) => r.spec.nodeName === node);
  lastSeen.set(node, JSON.stringify(record?.status ?? {}));
  return record;
}

async function livePodsOn(cluster: TestCluster, node: string): Promise<V1Pod[]> {
  const pods = await cluster.admin.listPods(`spec.nodeName=${node}`);
  return pods.filter((pod) => !pod.metadata?.deletionTimestamp);
}

function appOf(pod: V1Pod): string {
  return pod.metadata?.labels?.app ?? pod.metadata?.labels?.run ?? '';
}

describe('drainbridge run with shipped defaults: a cordon evacuates a node running a DaemonSet', () => {
  let cluster: TestCluster;
  let run: DrainbridgeProcess;

  before(async () => {
    cluster = await startTestCluster(DEMO);
    // No `env`: the child process gets PATH and HOME only (harness.ts), so no DRAINBRIDGE_DRAIN_* is set.
    run = await startRun(cluster, { identity: 'run-defaults', cordonEvacuates: 'all' });
  });
  after(async () => {
    run?.kill('SIGTERM');
    await run?.exited;
    await cluster?.stop();
  });

  it('kubectl cordon node-2: drained, its DaemonSet pod stays; kubectl uncordon restores it', async () => {
    const before = (await livePodsOn(cluster, 'node-2')).map(appOf).sort();
    assert.ok(before.includes('web') && before.includes('node-agent'), `node-2 runs ${before.join(', ')}`);

    assert.equal((await cluster.kubectl.run(['cordon', 'node-2'])).code, 0);
    await waitUntil(
      'node-2 drained',
      async () => (await recordOf(cluster, 'node-2'))?.status?.phase === 'NodeDrained',
      90_000,
      { context: () => lastSeen.get('node-2') ?? '' },
    );
    const record = await recordOf(cluster, 'node-2');
    assert.equal(record?.spec.origin, 'cordon');
    assert.deepEqual(
      (await livePodsOn(cluster, 'node-2')).map(appOf),
      ['node-agent'],
      'only the DaemonSet pod is left',
    );
    const codes = Object.values(record?.status?.branches ?? {}).flatMap((b) =>
      (b.blockerSpans ?? []).map((x) => x.code),
    );
    assert.deepEqual(codes, [], 'nothing blocked on the way (no DaemonSetPod)');

    assert.equal((await cluster.kubectl.run(['uncordon', 'node-2'])).code, 0);
    await waitUntil(
      'the Restore finished',
      async () => !!(await recordOf(cluster, 'node-2'))?.status?.restore?.finishedAt,
      30_000,
    );
    assert.notEqual((await cluster.admin.getNode('node-2')).spec?.unschedulable, true, 'node-2 is schedulable');
  });

  it('kubectl cordon node-1: the bare pod is kept and named as the blocker, never evicted', async () => {
    assert.equal((await cluster.kubectl.run(['cordon', 'node-1'])).code, 0);
    await waitUntil(
      'the bare pod reported',
      async () => /debug/.test((await recordOf(cluster, 'node-1'))?.status?.firstBlocker ?? ''),
      90_000,
      { context: () => lastSeen.get('node-1') ?? '' },
    );
    const pods = (await livePodsOn(cluster, 'node-1')).map(appOf);
    assert.ok(pods.includes('debug'), `the bare pod still runs on node-1 (${pods.join(', ')})`);
    const evictions = cluster.sim.requestLog
      .writes({ resource: 'pods' })
      .filter((r) => r.subresource === 'eviction' && r.name === 'debug');
    assert.deepEqual(evictions, [], 'no eviction of the bare pod was asked for');

    assert.equal((await cluster.kubectl.run(['uncordon', 'node-1'])).code, 0);
    await waitUntil(
      'the Restore finished',
      async () => !!(await recordOf(cluster, 'node-1'))?.status?.restore?.finishedAt,
      30_000,
    );
  });

  it('drainbridge run --force: the next cordon of node-1 evicts the bare pod, never deletes it', async () => {
    const first = (await recordOf(cluster, 'node-1'))?.spec.requestId;
    run.kill('SIGTERM');
    await run.exited;
    run = new DrainbridgeProcess(
      [
        'run',
        '--kubeconfig',
        await cluster.kubeconfigFor('drainbridge-run'),
        '--cordon-evacuates',
        'all',
        '--metrics-address',
        '127.0.0.1:0',
        '--retry-interval-ms',
        '100',
        '--identity',
        'run-force',
        '--force',
      ],
      {},
    );
    await run.waitForLog('leader election: this replica leads', {}, 60_000);
    const mark = cluster.sim.requestLog.mark();
    assert.equal((await cluster.kubectl.run(['cordon', 'node-1'])).code, 0);
    const second = async () =>
      (await cluster.admin.listEvacuations()).find((r) => r.spec.nodeName === 'node-1' && r.spec.requestId !== first);
    await waitUntil('node-1 drained', async () => (await second())?.status?.phase === 'NodeDrained', 90_000);
    assert.equal((await second())?.spec.drain?.force, true, "the flag won over the origin's default");
    assert.deepEqual((await livePodsOn(cluster, 'node-1')).map(appOf), ['node-agent']);
    const debug = cluster.sim.requestLog.writes({ since: mark, resource: 'pods' }).filter((r) => r.name === 'debug');
    assert.ok(
      debug.some((r) => r.subresource === 'eviction'),
      'the bare pod was evicted',
    );
    assert.deepEqual(
      debug.filter((r) => r.verb === 'delete' && r.subresource === ''),
      [],
      'and never deleted',
    );
    assert.equal((await cluster.kubectl.run(['uncordon', 'node-1'])).code, 0);
  });
});
