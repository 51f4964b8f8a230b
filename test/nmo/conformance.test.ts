/**
 * NodeMaintenance conformance: node-maintenance-operator's documented behaviour, checked against
 * `drainbridge run` (a real child process, default settings: one maintenance slot) and the simulator,
 * objects applied with the real kubectl as NMO's tests write them. Each case names the NMO test it
 * follows (medik8s/node-maintenance-operator: test/e2e/node_maintenance_test.go, internal/controller/
 * nodemaintenance_controller_test.go, internal/webhook/v1beta1/nodemaintenance_webhook.go). Where NMO's
 * webhook rejects a request outright, drainbridge's controller (this suite runs without the webhook component;
 * test/nmo/webhook.test.ts runs with it) leaves the object Failed with NMO's message and touches nothing; where the API server can refuse (the CRD's CEL rule), either answer is checked.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CoreV1Event, V1Lease, V1Node } from '@kubernetes/client-node';
import { readLedger } from '../../lib/node/ledger.ts';
import {
  type DrainbridgeProcess,
  spreadScenario,
  startRun,
  startTestCluster,
  type TestCluster,
} from '../forwarder/harness.ts';
import { waitUntil } from '../support/wait.ts';

interface NodeMaintenanceJson {
  metadata: { name: string; finalizers?: string[]; annotations?: Record<string, string> };
  spec: { nodeName: string };
  status?: {
    phase?: string;
    lastError?: string;
    drainProgress?: number;
    totalpods?: number;
    evictionPods?: number;
    pendingPods?: string[];
    errorOnLeaseCount?: number;
  };
}

/** A NodeMaintenance as NMO's e2e test builds one (getNodeMaintenance: name, nodeName, reason). */
function manifest(name: string, nodeName: string): string {
  return [
    'apiVersion: nodemaintenance.medik8s.io/v1beta1',
    'kind: NodeMaintenance',
    'metadata:',
    `  name: ${name}`,
    'spec:',
    `  nodeName: ${nodeName}`,
    '  reason: Set maintenance on node for e2e testing',
  ].join('\n');
}

describe('NodeMaintenance as node-maintenance-operator documents it (drainbridge run)', () => {
  let cluster: TestCluster;
  let run: DrainbridgeProcess;

  const kubectl = async (...args: string[]) => cluster.kubectl.run(args);
  const apply = async (name: string, nodeName: string) => {
    const applied = await cluster.kubectl.run(['apply', '-f', '-'], { input: manifest(name, nodeName) });
    assert.equal(applied.code, 0, applied.stderr);
  };
  const get = async (name: string): Promise<NodeMaintenanceJson | undefined> => {
    const got = await kubectl('get', 'nodemaintenance', name, '-o', 'json');
    return got.code === 0 ? (JSON.parse(got.stdout) as NodeMaintenanceJson) : undefined;
  };
  const phaseIs = (name: string, phase: string) => async () => (await get(name))?.status?.phase === phase;
  const node = async (name: string): Promise<V1Node> => cluster.admin.getNode(name);
  const events = async (): Promise<CoreV1Event[]> => {
    const got = await kubectl('get', 'events', '-n', 'default', '-o', 'json');
    assert.equal(got.code, 0, got.stderr);
    return (JSON.parse(got.stdout) as { items: CoreV1Event[] }).items;
  };
  /** NMO's waitForEvent: an Event of `reason` on a `kind` whose name contains `name`. */
  const hasEvent = async (kind: string, name: string, reason: string) =>
    (await events()).some(
      (e) => e.involvedObject?.kind === kind && e.involvedObject.name === name && e.reason === reason,
    );
  const deleteAndWait = async (name: string) => {
    const deleted = await kubectl('delete', 'nodemaintenance', name, '--timeout=60s');
    assert.equal(deleted.code, 0, deleted.stderr);
  };
  const webPodsOn = async (nodeName: string) =>
    (await cluster.admin.listPods(`spec.nodeName=${nodeName}`)).filter(
      (pod) => !pod.metadata?.deletionTimestamp && pod.metadata?.labels?.app === 'web',
    );

  /** medik8s's node Lease (medik8s/common pkg/lease: `medik8s-leases/node-<node>`), undefined when absent. */
  const nodeLease = async (nodeName: string): Promise<V1Lease | undefined> => {
    const got = await kubectl('get', 'lease', '-n', 'medik8s-leases', `node-${nodeName}`, '-o', 'json');
    if (got.code !== 0) {
      assert.match(got.stderr, /NotFound|not found/, got.stderr);
      return undefined;
    }
    return JSON.parse(got.stdout) as V1Lease;
  };

  before(async () => {
    cluster = await startTestCluster(spreadScenario(5));
    run = await startRun(cluster, { identity: 'nmo-conformance' });
  });
  after(async () => {
    run?.kill('SIGTERM');
    await run?.exited;
    await cluster?.stop();
  });

  it('e2e "for a not existing node should fail": Failed, NMO\'s message, no BeginMaintenance, nothing taken', async () => {
    await apply('test-unexisting', 'doesNotExist');
    await waitUntil('test-unexisting Failed', phaseIs('test-unexisting', 'Failed'), 30_000);
    const nm = await get('test-unexisting');
    assert.match(nm?.status?.lastError ?? '', /no node with name doesNotExist found/);
    assert.deepEqual(nm?.metadata.finalizers ?? [], [], 'not taken: deleting it needs nobody');
    assert.equal(await hasEvent('NodeMaintenance', 'test-unexisting', 'BeginMaintenance'), false);
    assert.equal(await hasEvent('NodeMaintenance', 'test-unexisting', 'FailedMaintenance'), true);
    assert.equal((await cluster.admin.listEvacuations()).length, 0, 'no request was made');
    await deleteAndWait('test-unexisting');
  });

  it('e2e "for a worker node should put the node under maintenance": duplicate refused, cordon, drain, Events, reset on deletion', async () => {
    assert.ok((await webPodsOn('node-1')).length > 0, 'node-1 runs web pods to begin with');
    await apply('test-maintenance', 'node-1');
    await waitUntil('test-maintenance Succeeded', phaseIs('test-maintenance', 'Succeeded'), 60_000);

    // "Preventing the creation of another maintenance CR for the same node"
    await apply('test-duplicate', 'node-1');
    await waitUntil('test-duplicate Failed', phaseIs('test-duplicate', 'Failed'), 30_000);
    const duplicate = await get('test-duplicate');
    assert.match(duplicate?.status?.lastError ?? '', /a NodeMaintenance for node node-1 already exists/);
    assert.deepEqual(duplicate?.metadata.finalizers ?? [], []);
    await deleteAndWait('test-duplicate');

    const nm = await get('test-maintenance');
    assert.equal(nm?.status?.drainProgress, 100);
    const maintained = await node('node-1');
    assert.equal(maintained.spec?.unschedulable, true, 'node should have been unschedulable');
    assert.ok(
      maintained.spec?.taints?.some((t) => t.key === 'medik8s.io/drain' && t.effect === 'NoSchedule'),
      'node should have had the medik8s taint',
    );
    // controller test "Testing exclude remediation label"
    assert.equal(maintained.metadata?.labels?.['remediation.medik8s.io/exclude-from-remediation'], 'true');
    assert.equal((await webPodsOn('node-1')).length, 0, 'workload moved to another node');
    assert.equal(await hasEvent('NodeMaintenance', 'test-maintenance', 'BeginMaintenance'), true);
    assert.equal(await hasEvent('NodeMaintenance', 'test-maintenance', 'SucceedMaintenance'), true);

    // drainbridge's one default slot is taken: a NodeMaintenance for another node says it waits.
    await apply('test-waiting', 'node-3');
    await waitUntil(
      'test-waiting says it waits for a slot',
      async () => /^waiting for a free maintenance slot/.test((await get('test-waiting'))?.status?.lastError ?? ''),
      30_000,
    );
    assert.equal((await get('test-waiting'))?.status?.phase, 'Running');
    assert.notEqual((await node('node-3')).spec?.unschedulable, true, 'node-3 not touched while it waits');

    // "node status should be resetted after CR deletion"
    await deleteAndWait('test-maintenance');
    const reset = await node('node-1');
    assert.notEqual(reset.spec?.unschedulable, true, 'node-1 schedulable again');
    assert.equal(reset.spec?.taints?.some((t) => t.key === 'medik8s.io/drain') ?? false, false, 'taint removed');
    assert.equal(
      reset.metadata?.labels?.['remediation.medik8s.io/exclude-from-remediation'],
      undefined,
      'label removed',
    );
    assert.deepEqual(readLedger(reset).holds, {});
    assert.equal(await hasEvent('NodeMaintenance', 'test-maintenance', 'RemovedMaintenance'), true);
    assert.equal(await hasEvent('Node', 'node-1', 'UncordonNode'), true);

    // The slot freed, the waiting one goes ahead.
    await waitUntil('test-waiting Succeeded', phaseIs('test-waiting', 'Succeeded'), 60_000);
    assert.equal((await get('test-waiting'))?.status?.lastError, undefined);
    await deleteAndWait('test-waiting');
  });

  it('e2e "Preventing the update of node name": refused, and the node taken is the node restored (issue 25)', async () => {
    await apply('test-rename', 'node-2');
    await waitUntil('test-rename Succeeded', phaseIs('test-rename', 'Succeeded'), 60_000);
    const patched = await kubectl(
      'patch',
      'nodemaintenance',
      'test-rename',
      '--type=merge',
      '-p',
      '{"spec":{"nodeName":"node-3"}}',
    );
    if (patched.code !== 0) {
      // The API server evaluated the CRD's rule: NMO's webhook message.
      assert.match(patched.stderr, /updating spec.NodeName isn't allowed/);
    } else {
      await waitUntil(
        'the refusal in lastError',
        async () => (await get('test-rename'))?.status?.lastError === "updating spec.NodeName isn't allowed",
        30_000,
      );
      assert.notEqual((await node('node-3')).spec?.unschedulable, true, 'node-3 never taken');
    }
    await deleteAndWait('test-rename');
    const node2 = await node('node-2');
    assert.notEqual(node2.spec?.unschedulable, true, 'node-2, the node held, is restored');
    assert.deepEqual(readLedger(node2).holds, {});

    // The only slot is free again: a later NodeMaintenance goes through.
    await apply('test-after-rename', 'node-3');
    await waitUntil('test-after-rename Succeeded', phaseIs('test-after-rename', 'Succeeded'), 60_000);
    await deleteAndWait('test-after-rename');
  });

  it('api/v1beta1 NodeMaintenanceFinalizer: a NodeMaintenance an NMO no longer installed left is released on deletion, its cordon kept and named', async () => {
    // What an uninstalled NMO leaves: its finalizer on the CR, the node cordoned and tainted.
    assert.equal((await kubectl('cordon', 'node-2')).code, 0);
    assert.equal((await kubectl('taint', 'node', 'node-2', 'medik8s.io/drain:NoSchedule')).code, 0);
    const left = `${manifest('test-left-by-nmo', 'node-2')}\n`.replace(
      'metadata:\n',
      'metadata:\n  finalizers: [foregroundDeleteNodeMaintenance]\n',
    );
    const applied = await cluster.kubectl.run(['apply', '-f', '-'], { input: left });
    assert.equal(applied.code, 0, applied.stderr);
    await deleteAndWait('test-left-by-nmo');
    assert.equal(await get('test-left-by-nmo'), undefined, 'released');
    const kept = await node('node-2');
    assert.equal(kept.spec?.unschedulable, true, "NMO's cordon is not drainbridge's to undo");
    assert.equal(await hasEvent('NodeMaintenance', 'test-left-by-nmo', 'NodeMaintenanceOperatorGone'), true);
    assert.equal((await kubectl('uncordon', 'node-2')).code, 0);
    assert.equal((await kubectl('taint', 'node', 'node-2', 'medik8s.io/drain:NoSchedule-')).code, 0);
  });

  it('controller: RequestLease before the cordon (holder node-maintenance, 3600 s, owned by the Node), InvalidateLease on deletion', async () => {
    await apply('test-lease', 'node-3');
    await waitUntil('test-lease Succeeded', phaseIs('test-lease', 'Succeeded'), 60_000);
    const lease = await nodeLease('node-3');
    assert.equal(lease?.spec?.holderIdentity, 'node-maintenance');
    assert.equal(lease?.spec?.leaseDurationSeconds, 3600);
    assert.deepEqual(
      lease?.metadata?.ownerReferences?.map((ref) => `${ref.kind}/${ref.name}`),
      ['Node/node-3'],
      'owned by the Node, as medik8s/common makes it',
    );
    assert.equal((await get('test-lease'))?.status?.errorOnLeaseCount ?? 0, 0);
    await deleteAndWait('test-lease');
    assert.equal(await nodeLease('node-3'), undefined, 'the Lease is released (deleted) with the maintenance');
  });

  it('controller test "lease is held then released by another entity": no cordon, NMO\'s lastError, count 0; proceeds once released', async () => {
    const now = new Date().toISOString().replace('Z', '000Z');
    const foreign = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'node-node-5', namespace: 'medik8s-leases' },
      spec: { holderIdentity: 'self-node-remediation', leaseDurationSeconds: 3600, acquireTime: now, renewTime: now },
    };
    const created = await cluster.kubectl.run(['create', '-f', '-'], { input: JSON.stringify(foreign) });
    assert.equal(created.code, 0, created.stderr);
    await apply('test-lease-held', 'node-5');
    await waitUntil(
      'test-lease-held says the Lease is not ours',
      async () =>
        /^failed to obtain a lease that is not owned by us : can't update or invalidate the lease because it is held by different owner: self-node-remediation errorOnLeaseCount 0$/.test(
          (await get('test-lease-held'))?.status?.lastError ?? '',
        ),
      30_000,
    );
    const held = await get('test-lease-held');
    assert.equal(held?.status?.phase, 'Running', 'not Failed: NMO waits');
    // controller test "Testing initMaintenanceStatus" ("should be set for running with 2 pods to drain"): the
    // first status counts every pod on the node, and as up for eviction all but the DaemonSet's.
    const onNode = (await cluster.admin.listPods('spec.nodeName=node-5')).filter((p) => !p.metadata?.deletionTimestamp);
    const evictable = onNode.filter((p) => p.metadata?.ownerReferences?.[0]?.kind !== 'DaemonSet');
    assert.ok(evictable.length > 0 && evictable.length < onNode.length, 'node-5 runs web pods and the agent');
    assert.equal(held?.status?.totalpods, onNode.length);
    assert.equal(held?.status?.evictionPods, evictable.length);
    assert.deepEqual(held?.status?.pendingPods?.slice().sort(), evictable.map((p) => p.metadata?.name).sort());
    assert.equal(held?.status?.errorOnLeaseCount ?? 0, 0, 'the count stays 0 before the drain');
    assert.notEqual((await node('node-5')).spec?.unschedulable, true, 'node-5 not cordoned');
    assert.equal(
      (await cluster.admin.listEvacuations()).filter((r) => r.spec.nodeName === 'node-5').length,
      0,
      'no maintenance request made',
    );
    assert.equal((await nodeLease('node-5'))?.spec?.holderIdentity, 'self-node-remediation', 'their Lease untouched');

    // self-node-remediation releases it (InvalidateLease deletes the Lease): the maintenance goes ahead.
    assert.equal((await kubectl('delete', 'lease', '-n', 'medik8s-leases', 'node-node-5')).code, 0);
    await waitUntil('test-lease-held Succeeded', phaseIs('test-lease-held', 'Succeeded'), 60_000);
    assert.equal((await node('node-5')).spec?.unschedulable, true, 'node-5 cordoned now');
    assert.equal((await nodeLease('node-5'))?.spec?.holderIdentity, 'node-maintenance');
    assert.equal(await hasEvent('NodeMaintenance', 'test-lease-held', 'FailedMaintenance'), false);
    await deleteAndWait('test-lease-held');
    assert.equal(await nodeLease('node-5'), undefined);
  });

  it('controller: errorOnLeaseCount — a Lease lost during the maintenance counts per reconcile; above 3, uncordoned and Failed', async () => {
    await apply('test-lease-lost', 'node-3');
    await waitUntil('test-lease-lost Succeeded', phaseIs('test-lease-lost', 'Succeeded'), 60_000);
    // Another medik8s component has taken the Lease (as after drainbridge was down for an hour).
    const now = new Date().toISOString().replace('Z', '000Z');
    const taken = { spec: { holderIdentity: 'self-node-remediation', renewTime: now, acquireTime: now } };
    const patched = await kubectl(
      ...['patch', 'lease', '-n', 'medik8s-leases', 'node-node-3', '--type=merge', '-p', JSON.stringify(taken)],
    );
    assert.equal(patched.code, 0, patched.stderr);
    // NMO reconciles on a change to the CR: any change makes drainbridge ask for the Lease again.
    assert.equal((await kubectl('annotate', 'nodemaintenance', 'test-lease-lost', 'example.com/poke=1')).code, 0);
    await waitUntil('test-lease-lost Failed', phaseIs('test-lease-lost', 'Failed'), 60_000);
    const failed = await get('test-lease-lost');
    assert.equal(failed?.status?.lastError, 'maintenance failed: lease could not be extended after 4 attempts');
    assert.equal(failed?.status?.errorOnLeaseCount, 4);
    assert.equal(await hasEvent('NodeMaintenance', 'test-lease-lost', 'FailedMaintenance'), true);
    await waitUntil('node-3 uncordoned', async () => (await node('node-3')).spec?.unschedulable !== true, 60_000);
    assert.deepEqual(readLedger(await node('node-3')).holds, {}, "drainbridge's hold ended");
    assert.equal((await nodeLease('node-3'))?.spec?.holderIdentity, 'self-node-remediation', 'their Lease respected');
    await deleteAndWait('test-lease-lost');
    assert.equal((await nodeLease('node-3'))?.spec?.holderIdentity, 'self-node-remediation', 'not released: theirs');
    assert.equal((await kubectl('delete', 'lease', '-n', 'medik8s-leases', 'node-node-3')).code, 0);
  });

  it('controller test "should fail on non existing node" for a node deleted in maintenance: Failed, no hold left, the slot freed', async () => {
    await apply('test-node-gone', 'node-4');
    await waitUntil('test-node-gone Succeeded', phaseIs('test-node-gone', 'Succeeded'), 60_000);
    const deleted = await kubectl('delete', 'node', 'node-4');
    assert.equal(deleted.code, 0, deleted.stderr);
    await waitUntil(
      'test-node-gone Failed with the NotFound',
      async () => (await get('test-node-gone'))?.status?.lastError === 'nodes "node-4" not found',
      30_000,
    );
    await apply('test-after-gone', 'node-5');
    await waitUntil('test-after-gone Succeeded', phaseIs('test-after-gone', 'Succeeded'), 60_000);
    await deleteAndWait('test-node-gone');
    await deleteAndWait('test-after-gone');
    assert.notEqual((await node('node-5')).spec?.unschedulable, true);
  });
});
