/**
 * `drainbridge run`'s own metrics on its /metrics (a real process, the simulator with KubeVirt): a cordon
 * of node-1, where two live-migratable KubeVirt VMs run beside ordinary pods, shows
 * `drainbridge_evacuations_in_progress` 1 while the evacuation runs and 0 once the node is drained;
 * `drainbridge_servers_migrated_total{branch="kubevirt"}` counts the VMs the KubeVirt branch moved (every
 * VM branch of the registry is counted, not only Nova's), `drainbridge_pods_evicted_total` the pods — each
 * equal to what the Evacuation record says moved.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ADMISSION_LEASE, recordAnnotations } from '../../lib/admission/records.ts';
import { readLease } from '../../lib/clients/kube/lease.ts';
import type { EvacuationObject } from '../../lib/clients/kube/paths.ts';
import {
  type DrainbridgeProcess,
  metric,
  scrape,
  startRun,
  startTestCluster,
  type TestCluster,
} from '../forwarder/harness.ts';
import { waitUntil } from '../support/wait.ts';
import { kubeVirtScenario } from '../workflow/kubevirt-scenario.ts';

/** Two VMs whose migrations take 40 simulated seconds (2 s here): long enough to see the evacuation run. */
const SCENARIO = {
  ...kubeVirtScenario({
    pods: true,
    vms: [
      { name: 'app-1', strategy: 'LiveMigrate', migrationSeconds: 40 },
      { name: 'app-2', strategy: 'LiveMigrate', migrationSeconds: 40 },
    ],
  }),
  speed: 20,
};

/** The VMIs on `node`, as the cluster admin lists them. */
async function vmisOn(cluster: TestCluster, node: string): Promise<string[]> {
  const list = (await cluster.admin.custom.listClusterCustomObject({
    group: 'kubevirt.io',
    version: 'v1',
    plural: 'virtualmachineinstances',
  })) as { items: { metadata: { namespace: string; name: string }; status?: { nodeName?: string } }[] };
  return list.items
    .filter((vmi) => vmi.status?.nodeName === node)
    .map((vmi) => `${vmi.metadata.namespace}/${vmi.metadata.name}`);
}

describe('drainbridge run metrics: evacuations in progress, pods evicted, VMs migrated (KubeVirt)', () => {
  let cluster: TestCluster;
  let run: DrainbridgeProcess;
  let ops: string;

  before(async () => {
    cluster = await startTestCluster(SCENARIO);
    run = await startRun(cluster, { identity: 'run-metrics', cordonEvacuates: 'all' });
    ops = await run.opsUrl();
  });
  after(async () => {
    run?.kill('SIGKILL');
    await run?.exited;
    await cluster?.stop();
  });

  it('in progress while node-1 evacuates, 0 after; the KubeVirt VMs counted as migrated', async () => {
    const record = async (): Promise<EvacuationObject | undefined> =>
      (await cluster.admin.listEvacuations()).find((r) => r.spec.nodeName === 'node-1');
    const before = await scrape(ops);
    assert.equal(metric(before, 'drainbridge_evacuations_in_progress'), 0);
    // Every VM branch is there from the start, at 0.
    assert.match(before, /^drainbridge_servers_migrated_total\{branch="kubevirt"\} 0$/m);
    assert.match(before, /^drainbridge_servers_migrated_total\{branch="nova"\} 0$/m);
    assert.deepEqual(await vmisOn(cluster, 'node-1'), ['vms/app-1', 'vms/app-2'], 'both VMs start on node-1');

    assert.equal((await cluster.kubectl.run(['cordon', 'node-1'])).code, 0);
    await waitUntil(
      'the evacuation is in progress',
      async () => metric(await scrape(ops), 'drainbridge_evacuations_in_progress') === 1,
      30_000,
    );
    assert.notEqual((await record())?.status?.phase, 'NodeDrained', 'seen while the evacuation ran');
    await waitUntil('node-1 drained', async () => (await record())?.status?.phase === 'NodeDrained', 90_000);
    await waitUntil(
      'no evacuation in progress',
      async () => metric(await scrape(ops), 'drainbridge_evacuations_in_progress') === 0,
    );

    const branches = (await record())?.status?.branches ?? {};
    assert.equal(branches.kubevirt?.moved, 2, 'the record: two VMs moved');
    const text = await scrape(ops);
    assert.equal(metric(text, 'drainbridge_servers_migrated_total', { branch: 'kubevirt' }), 2);
    assert.equal(metric(text, 'drainbridge_servers_migrated_total', { branch: 'nova' }), 0);
    assert.ok((branches.pods?.moved ?? 0) >= 1, 'pods moved too');
    assert.equal(metric(text, 'drainbridge_pods_evicted_total'), branches.pods?.moved);
    assert.equal(metric(text, 'drainbridge_evacuation_duration_seconds_count', { outcome: 'succeeded' }), 1);
    assert.deepEqual(await vmisOn(cluster, 'node-1'), [], 'no VM left on node-1');
  });

  it('drainbridge_admission_paused follows the circuit breaker on the admission Lease', async () => {
    assert.equal(metric(await scrape(ops), 'drainbridge_admission_paused'), 0);
    const setBreaker = async (pausedAt?: string) => {
      const lease = await readLease(cluster.admin, 'drainbridge', ADMISSION_LEASE);
      assert.ok(lease, 'the cordon above created the admission Lease');
      const breaker = pausedAt ? { failures: [], pausedAt, reason: 'a test paused it' } : { failures: [] };
      const annotations = { ...lease.metadata?.annotations, ...recordAnnotations({ breaker }) };
      await cluster.admin.replaceLease('drainbridge', { ...lease, metadata: { ...lease.metadata, annotations } });
    };
    await setBreaker(new Date().toISOString());
    assert.equal(metric(await scrape(ops), 'drainbridge_admission_paused'), 1);
    await setBreaker(undefined);
    assert.equal(metric(await scrape(ops), 'drainbridge_admission_paused'), 0);
  });
});
