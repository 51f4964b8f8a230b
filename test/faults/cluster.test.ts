/**
 * Fault injection: the cluster changing under an evacuation — the node deleted mid-drain, a pod stuck
 * terminating (a finalizer nobody removes), a PodDisruptionBudget that never allows, KubeVirt VMs on the
 * node (whose launcher pods the pod drain must never evict), and someone uncordoning the node while it
 * is held.
 */
import assert from 'node:assert/strict';
import { describe } from 'node:test';
import { readLedger } from '../../lib/node/ledger.ts';
import { waitUntil } from '../support/wait.ts';
import {
  BLOCKED_SCENARIO,
  evacuate,
  eventsOf,
  evictions,
  expectEndedWith,
  expectFailed,
  expectSucceeded,
  type FaultWorld,
  failWrites,
  openSpareNodes,
  restore,
  scenario,
  untilBlockedByPdb,
  WORKFLOW_SCENARIO,
} from './harness.ts';

const NODES = { group: '', resource: 'nodes' };
const PODS = { group: '', resource: 'pods' };

/** A deadline `seconds` of simulated time from now. */
const deadlineIn = (w: FaultWorld, seconds: number) => new Date(w.sim.clock.now() + seconds * 1000).toISOString();

/** A bare pod on node-1 that a finalizer keeps terminating for ever once deleted. */
function stuckPod(w: FaultWorld): void {
  w.sim.store.create(PODS, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'stuck', namespace: 'shop', finalizers: ['example.com/never'] },
    spec: { nodeName: 'node-1', terminationGracePeriodSeconds: 1, containers: [{ name: 'c', image: 'busybox:1.37' }] },
  });
}

describe('fault injection: the cluster changes under an evacuation', () => {
  scenario(
    'the node is deleted mid-drain: the evacuation fails naming it; a Restore names the missing node, changes nothing',
    {
      cluster: WORKFLOW_SCENARIO,
    },
    async (w) => {
      const execution = await evacuate(w, 'node-1');
      await untilBlockedByPdb(w);
      w.sim.store.delete(NODES, { name: 'node-1' });
      await expectFailed(w, execution, 'EvacuationFailed', /node node-1 was deleted during the evacuation/);
      const mark = w.sim.requestLog.mark();
      const restored = await restore(w, 'node-1');
      await expectEndedWith(restored, 'TargetNotFound', /node-1/);
      assert.deepEqual(eventsOf(w, 'Node Restored', 'req-node-1'), []);
      assert.deepEqual(w.sim.requestLog.writes({ since: mark, resource: 'nodes' }), []);
    },
  );

  scenario(
    'a pod stuck terminating: the drain waits, then the deadline fails it naming the pod; safe state',
    {
      cluster: WORKFLOW_SCENARIO,
    },
    async (w) => {
      stuckPod(w);
      await openSpareNodes(w);
      const execution = await evacuate(w, 'node-1', {
        deadline: deadlineIn(w, 600),
        drain: { ignoreDaemonSets: true, deleteEmptyDirData: true, force: true },
      });
      await waitUntil('the stuck pod was evicted', () => evictions(w).includes('shop/stuck'));
      const failed = await expectFailed(w, execution, 'DeadlineExceeded', /deadline/);
      assert.match(JSON.stringify(failed.blockers), /shop\/stuck/, 'the blockers name the stuck pod');
      assert.ok(
        w.sim.store.get(PODS, 'shop', 'stuck')?.metadata.deletionTimestamp,
        'still terminating, never force-deleted',
      );
    },
  );

  scenario(
    'a pod stuck terminating with --skip-wait-for-delete-timeout: skipped after the timeout, as kubectl does',
    {
      cluster: WORKFLOW_SCENARIO,
    },
    async (w) => {
      stuckPod(w);
      await openSpareNodes(w);
      const execution = await evacuate(w, 'node-1', {
        drain: { ignoreDaemonSets: true, deleteEmptyDirData: true, force: true, skipWaitForDeleteTimeoutSeconds: 5 },
      });
      await expectSucceeded(w, execution);
      assert.ok(w.sim.store.get(PODS, 'shop', 'stuck')?.metadata.deletionTimestamp, 'left terminating, not deleted');
    },
  );

  scenario(
    'a PodDisruptionBudget that never allows: blocked, then the deadline fails it naming the budget',
    {
      cluster: BLOCKED_SCENARIO,
    },
    async (w) => {
      const execution = await evacuate(w, 'node-1', { deadline: deadlineIn(w, 300) });
      const failed = await expectFailed(w, execution, 'DeadlineExceeded', /deadline/);
      assert.match(JSON.stringify(failed.blockers), /PodDisruptionBudget web/);
      assert.deepEqual(evictions(w), [], 'no eviction got past the budget');
    },
  );

  scenario(
    'someone uncordons the held node mid-drain: reported once, not fought; the deadline ends it naming the uncordon',
    {
      cluster: WORKFLOW_SCENARIO,
      touchedByPeople: ['node-1'],
    },
    async (w) => {
      // The deadline must leave a pass room to start after the uncordon (4 s of real time: on a loaded
      // machine 1 s was sometimes gone before the drain was even blocked).
      const execution = await evacuate(w, 'node-1', { deadline: deadlineIn(w, 1200) });
      await untilBlockedByPdb(w);
      await w.admin.patchNode('node-1', { spec: { unschedulable: false } });
      await waitUntil('the out-of-band uncordon is recorded', () =>
        Boolean(readLedger(w.sim.store.get(NODES, undefined, 'node-1') as never).outOfBandUncordonAt),
      );
      await openSpareNodes(w);
      // The uncordon stays a blocker (pods may land again): the deadline ends it, naming the uncordon.
      const failed = await expectFailed(w, execution, 'DeadlineExceeded', /deadline/);
      assert.match(JSON.stringify(failed.blockers), /uncordoned by someone else/);
      assert.equal(
        w.sim.store
          .list({ group: '', resource: 'events' }, { namespace: 'default' })
          .items.filter((e) => (e as { reason?: string }).reason === 'OutOfBandUncordon').length,
        1,
        'reported once',
      );
      const node = w.sim.store.get(NODES, undefined, 'node-1');
      assert.notEqual(
        (node?.spec as { unschedulable?: boolean } | undefined)?.unschedulable,
        true,
        'drainbridge did not cordon again',
      );
    },
  );

  scenario(
    'KubeVirt VMs on the node: launcher pods are never evicted; the deadline fails it naming the VMs that cannot move; every VM runs',
    {
      cluster: 'kubevirt',
    },
    async (w) => {
      const execution = await evacuate(w, 'node-1', {
        deadline: deadlineIn(w, 300),
        drain: { ignoreDaemonSets: true, deleteEmptyDirData: true, force: true },
      });
      const failed = await expectFailed(w, execution, 'DeadlineExceeded', /deadline/);
      // The KubeVirt branch moves what can live-migrate and names each VM that cannot leave without a shutdown.
      const blockers = JSON.stringify(failed.blockers);
      assert.match(blockers, /VMI vms\/db is not live-migratable/);
      assert.match(blockers, /VMI vms\/legacy has evictionStrategy None/);
      assert.deepEqual(
        evictions(w).filter((pod) => pod.includes('virt-launcher')),
        [],
      );
    },
  );

  scenario(
    'KubeVirt VMs and evictions failing 500: still no launcher pod touched, every VM runs',
    {
      cluster: 'kubevirt',
    },
    async (w) => {
      failWrites(w, { verb: 'create', resource: 'pods', subresource: 'eviction' }, 500, 4);
      const execution = await evacuate(w, 'node-1', {
        deadline: deadlineIn(w, 900),
        drain: { ignoreDaemonSets: true, deleteEmptyDirData: true, force: true },
      });
      await waitUntil('the ordinary pods are evicted despite the 500s', () =>
        evictions(w).some((pod) => pod.endsWith('/debug')),
      );
      await expectFailed(w, execution, 'DeadlineExceeded', /deadline/);
    },
  );
});
