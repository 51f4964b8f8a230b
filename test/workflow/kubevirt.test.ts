/**
 * The KubeVirt branch through the packaged Evacuate machine, on the simulated KubeVirt, as drainbridge's
 * ServiceAccount under deploy/base/rbac (issue 11's acceptance): VMs of every strategy beside ordinary pods,
 * drainbridge's own migrations and the limits counted from the simulator's logs, failed migrations
 * retried, and the safety invariants — no launcher pod evicted, no VM shut down.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { retryOnConflict } from '../../lib/clients/kube/conflict.ts';
import type { EvacuationObject } from '../../lib/clients/kube/paths.ts';
import { KV_REFS } from '../../sim/controllers/kubevirt/index.ts';
import { drainbridge } from '../support/cli.ts';
import { waitUntil } from '../support/wait.ts';
import {
  eventsOf,
  failureOf,
  maintenanceRequested,
  readNodeAsAdmin,
  readRecord,
  simInstant,
  startWorkflowSim,
  type WorkflowSim,
} from './harness.ts';
import {
  byDrainbridge,
  kubeVirtScenario,
  launcherEvictions,
  migrationsCreated,
  migrationsDeleted,
  vmis,
} from './kubevirt-scenario.ts';

const DRAIN = { ignoreDaemonSets: true };

/** The request's Evacuation record's status, or undefined before the record exists. */
async function statusOf(w: WorkflowSim, requestId = 'req-node-1'): Promise<EvacuationObject['status']> {
  return readRecord(w, requestId).then(
    (record) => record.status,
    () => undefined,
  );
}

/** Every phase each VMI (`namespace/name`) was seen in, from the simulator's store events. */
function watchVmiPhases(w: WorkflowSim): Map<string, Set<string>> {
  const phases = new Map<string, Set<string>>();
  w.sim.store.watch(KV_REFS.vmis, {}, (event) => {
    const key = `${event.object.metadata.namespace}/${event.object.metadata.name}`;
    const phase = (event.object.status as { phase?: string } | undefined)?.phase;
    if (!phase) return;
    const seen = phases.get(key) ?? new Set<string>();
    seen.add(phase);
    phases.set(key, seen);
  });
  return phases;
}

describe('KubeVirt: six VMIs (4 LiveMigrate, 1 External, 1 None) and ordinary pods on node-1', () => {
  let w: WorkflowSim;
  let phases: Map<string, Set<string>>;
  before(async () => {
    w = await startWorkflowSim(
      kubeVirtScenario({
        pods: true,
        vms: [
          { name: 'app-1', strategy: 'LiveMigrate', memory: '2Gi' },
          { name: 'app-2', strategy: 'LiveMigrate' },
          { name: 'app-3', strategy: 'LiveMigrate' },
          { name: 'app-4', strategy: 'LiveMigrate' },
          { name: 'tenant', strategy: 'External' },
          { name: 'legacy', strategy: 'None' },
        ],
      }),
    );
    phases = watchVmiPhases(w);
  });
  after(async () => {
    await w?.stop();
  });

  it('migrates the four with its own VMIMs, waits for the External one, reports the None one and never shuts it down', async () => {
    const before = await vmis(w);
    for (const name of ['app-1', 'app-2', 'app-3', 'app-4', 'tenant', 'legacy'])
      assert.equal(before.get(`vms/${name}`)?.nodeName, 'node-1', `vms/${name} starts on node-1`);
    await w.runtime.put(
      'Maintenance Requested',
      maintenanceRequested('node-1', { drain: DRAIN, deadline: simInstant(w, 1200) }),
    );
    const [execution] = w.runtime.executionsFor('req-node-1');
    assert.ok(execution);

    // The four LiveMigrate VMIs and the pods leave; the External one is waited for, the None one blocks.
    await waitUntil(
      'the four VMs migrated and the pods drained',
      async () => {
        const branches = (await statusOf(w))?.branches ?? {};
        return branches.kubevirt?.moved === 4 && branches.pods?.moved === 3;
      },
      30_000,
    );
    const record = await readRecord(w, 'req-node-1');
    const kubevirt = record.status?.branches?.kubevirt;
    assert.deepEqual(
      kubevirt?.blockers?.map((b) => b.slice(0, 40)),
      ['VMI vms/legacy has evictionStrategy None'],
      'only the None VMI blocks',
    );
    assert.match(
      kubevirt?.waiting?.[0] ?? '',
      /VMI vms\/tenant has evictionStrategy External: waiting for its external controller/,
    );
    const moved = await vmis(w);
    for (const name of ['app-1', 'app-2', 'app-3', 'app-4']) {
      const vmi = moved.get(`vms/${name}`);
      assert.equal(vmi?.phase, 'Running', `vms/${name} runs`);
      assert.notEqual(vmi?.nodeName, 'node-1', `vms/${name} left node-1`);
      const own = w.sim.kubevirt?.history.forVmi(`vms/${name}`).filter(byDrainbridge) ?? [];
      assert.equal(own.length, 1, `vms/${name}: one drainbridge migration`);
      assert.equal(own[0]?.phases.at(-1)?.phase, 'Succeeded');
    }
    assert.equal(w.sim.kubevirt?.history.forVmi('vms/tenant').length, 0, 'nobody migrated the External VMI');

    // The External VMI's controller moves it (an operator-made migration): the branch follows, not duplicates.
    await w.admin.custom.createNamespacedCustomObject({
      group: 'kubevirt.io',
      version: 'v1',
      plural: 'virtualmachineinstancemigrations',
      namespace: 'vms',
      body: {
        apiVersion: 'kubevirt.io/v1',
        kind: 'VirtualMachineInstanceMigration',
        metadata: { name: 'capk-move-tenant', namespace: 'vms' },
        spec: { vmiName: 'tenant' },
      },
    });
    await waitUntil('the External VMI left', async () => (await statusOf(w))?.branches?.kubevirt?.moved === 5, 30_000);

    // The None VMI stays: the evacuation gives up at its deadline, naming it, the node held and cordoned.
    const outcome = await execution.outcome;
    assert.equal(failureOf(outcome).name, 'EvacuationFailed');
    const [failed] = eventsOf(w, 'Evacuation Failed', 'req-node-1') as {
      error: { name: string };
      blockers: { reason: string }[];
    }[];
    assert.equal(failed?.error.name, 'DeadlineExceeded');
    assert.deepEqual(
      failed?.blockers.map((b) => b.reason.slice(0, 40)),
      ['VMI vms/legacy has evictionStrategy None'],
    );
    const after = await vmis(w);
    assert.deepEqual(
      {
        phase: after.get('vms/legacy')?.phase,
        node: after.get('vms/legacy')?.nodeName,
        uid: after.get('vms/legacy')?.uid,
      },
      { phase: 'Running', node: 'node-1', uid: before.get('vms/legacy')?.uid },
      'the None VMI runs where it ran: the same VMI, never restarted',
    );
    assert.equal((await readNodeAsAdmin(w, 'node-1')).spec?.unschedulable, true);
  });

  it('evicted no launcher pod, shut no VM down, and drained the pods as before', async () => {
    assert.deepEqual(launcherEvictions(w), []);
    for (const [vmi, seen] of phases) {
      assert.ok(!seen.has('Succeeded') && !seen.has('Failed'), `${vmi} never stopped (${[...seen].join(', ')})`);
    }
    const pods = await w.admin.core.listNamespacedPod({ namespace: 'shop' });
    assert.equal(pods.items.length, 3);
    for (const pod of pods.items) assert.notEqual(pod.spec?.nodeName, 'node-1', `${pod.metadata?.name} left node-1`);
  });

  it('recorded the moves: per-VMI progress, Events on the VMIs, Evacuation Progress events', async () => {
    const state = (await readRecord(w, 'req-node-1')).status?.branches?.kubevirt?.state as {
      vmis: Record<
        string,
        { name: string; status: string; sourceNode: string; targetNode?: string; startedAt?: string; endedAt?: string }
      >;
    };
    const app1 = Object.values(state.vmis).find((v) => v.name === 'vms/app-1');
    assert.equal(app1?.status, 'moved');
    assert.equal(app1?.sourceNode, 'node-1');
    assert.match(app1?.targetNode ?? '', /^node-[23]$/);
    assert.ok(app1?.startedAt && app1.endedAt && Date.parse(app1.endedAt) >= Date.parse(app1.startedAt));
    const events = await w.admin.core.listNamespacedEvent({ namespace: 'vms' });
    const ours = events.items.filter((e) => e.source?.component === 'drainbridge');
    const reasons = (name: string) => ours.filter((e) => e.involvedObject.name === name).map((e) => e.reason);
    assert.deepEqual(reasons('app-1'), ['MigrationStarted', 'Migrated']);
    assert.deepEqual(reasons('legacy'), ['NotLiveMigratable']);
    assert.equal(reasons('tenant')[0], 'WaitingForExternalController');
    assert.ok(!reasons('tenant').includes('MigrationStarted'), 'drainbridge started no migration of the External VMI');
    const progress = eventsOf(w, 'Evacuation Progress', 'req-node-1') as { vms?: { name: string; status: string }[] }[];
    const withVms = progress.filter((e) => e.vms);
    // An event when a migration starts and when it ends: migrations that end at the same moment share one.
    assert.ok(withVms.length >= 2, `Evacuation Progress events as the moves start and end (${withVms.length})`);
    for (const name of ['vms/app-1', 'vms/app-2', 'vms/app-3', 'vms/app-4']) {
      const told = (status: string) =>
        withVms.some((e) => e.vms?.some((vm) => vm.name === name && vm.status === status));
      assert.ok(told('moved'), `an Evacuation Progress event told that ${name} moved`);
    }
    assert.ok(withVms.at(-1)?.vms?.some((vm) => vm.name === 'vms/app-4' && vm.status === 'moved'));
  });
});

describe('KubeVirt: limits, counted from the simulator, not from drainbridge', () => {
  const SIX = ['a', 'b', 'c', 'd', 'e', 'f'].map((name) => ({
    name: `vm-${name}`,
    strategy: 'LiveMigrate' as const,
    migrationSeconds: 20,
  }));
  const RAISED = { parallelMigrationsPerCluster: 10, parallelOutboundMigrationsPerNode: 10 };

  async function evacuate(env: Record<string, string>, before?: (w: WorkflowSim) => Promise<void>) {
    const w = await startWorkflowSim(kubeVirtScenario({ vms: SIX, migrations: RAISED }), { env });
    try {
      assert.equal(w.sim.kubevirt?.config().parallelOutboundMigrationsPerNode, 10, "KubeVirt's own limit is 10");
      await before?.(w);
      await w.runtime.put('Maintenance Requested', maintenanceRequested('node-1', { drain: DRAIN }));
      const [execution] = w.runtime.executionsFor('req-node-1');
      const outcome = await execution?.outcome;
      assert.equal(outcome?.ok, true, outcome ? failureOf(outcome).message : 'no execution');
      const history = w.sim.kubevirt?.history;
      assert.ok(history);
      const fromNode1 = (r: { migrationState?: Readonly<Record<string, unknown>> }) =>
        r.migrationState?.sourceNode === 'node-1';
      const own = history.migrations((r) => byDrainbridge(r) && fromNode1(r));
      const perVmi = new Map<string, number>();
      for (const r of history.migrations(byDrainbridge)) perVmi.set(r.vmi, (perVmi.get(r.vmi) ?? 0) + 1);
      assert.ok(Math.max(...perVmi.values()) <= 1, `one drainbridge migration per VMI: ${JSON.stringify([...perVmi])}`);
      return {
        created: migrationsCreated(w),
        own: own.length,
        ownMax: history.maxInFlight((r) => byDrainbridge(r) && fromNode1(r)),
        allMax: history.maxInFlight(fromNode1),
      };
    } finally {
      await w.stop();
    }
  }

  it('never more than 2 of drainbridge’s non-final migrations from the node, counting an operator’s', async () => {
    const seen = await evacuate({}, async (w) => {
      // An operator's migration of vm-a is already under way: it takes one of the node's two slots.
      await w.admin.custom.createNamespacedCustomObject({
        group: 'kubevirt.io',
        version: 'v1',
        plural: 'virtualmachineinstancemigrations',
        namespace: 'vms',
        body: {
          apiVersion: 'kubevirt.io/v1',
          kind: 'VirtualMachineInstanceMigration',
          metadata: { name: 'operator-vm-a', namespace: 'vms' },
          spec: { vmiName: 'vm-a' },
        },
      });
    });
    console.log(`limits, default: ${JSON.stringify(seen)}`);
    assert.equal(seen.created, 5, 'five create requests in the request log (vm-a was the operator’s)');
    assert.equal(seen.own, 5, 'five drainbridge migrations in the simulator’s history');
    assert.equal(seen.ownMax, 2, 'at most 2 of drainbridge’s own in flight (and the limit was reached)');
    assert.equal(seen.allMax, 2, 'at most 2 from the node at all, the operator’s counted');
  });

  it("drainbridge's own cluster-wide limit binds where it is the tightest", async () => {
    const seen = await evacuate({ DRAINBRIDGE_KUBEVIRT_MAX_MIGRATIONS: '1' });
    console.log(`limits, DRAINBRIDGE_KUBEVIRT_MAX_MIGRATIONS=1: ${JSON.stringify(seen)}`);
    assert.equal(seen.created, 6);
    assert.equal(seen.allMax, 1, 'one migration at a time, though the node and KubeVirt allow 2 and 10');
  });

  it('the same check sees a higher configured limit (so it can fail)', async () => {
    const seen = await evacuate({ DRAINBRIDGE_KUBEVIRT_MAX_MIGRATIONS_PER_NODE: '4' });
    console.log(`limits, DRAINBRIDGE_KUBEVIRT_MAX_MIGRATIONS_PER_NODE=4: ${JSON.stringify(seen)}`);
    assert.equal(seen.created, 6);
    assert.equal(seen.ownMax, 4);
  });
});

describe('KubeVirt: two nodes evacuated at once share the cluster-wide limit', () => {
  const on = (node: string, names: string[]) =>
    names.map((name) => ({ name, strategy: 'LiveMigrate' as const, migrationSeconds: 120, node }));
  let w: WorkflowSim;
  before(async () => {
    w = await startWorkflowSim(
      kubeVirtScenario({
        vms: [...on('node-1', ['a-1', 'a-2', 'a-3']), ...on('node-2', ['b-1', 'b-2', 'b-3'])],
        migrations: { parallelMigrationsPerCluster: 10, parallelOutboundMigrationsPerNode: 10 },
      }),
      { env: { DRAINBRIDGE_MAX_HELD_NODES: '2', DRAINBRIDGE_KUBEVIRT_MAX_MIGRATIONS: '3' } },
    );
  });
  after(async () => {
    await w?.stop();
  });

  it('never more than DRAINBRIDGE_KUBEVIRT_MAX_MIGRATIONS of its migrations in flight across both', async () => {
    // Creating a migration takes a moment (as across a real network): without a shared count both
    // evacuations would see the same free slots and create into them together.
    const slowCreates = w.sim.store.admission.add({
      name: 'slow-migration-create',
      admit: async (request) => {
        if (request.verb === 'create' && request.resource === 'virtualmachineinstancemigrations')
          await new Promise((resolve) => setTimeout(resolve, 40));
        return undefined;
      },
    });
    try {
      await w.runtime.put('Maintenance Requested', maintenanceRequested('node-1', { drain: DRAIN }));
      await w.runtime.put('Maintenance Requested', maintenanceRequested('node-2', { drain: DRAIN }));
      const outcomes = await Promise.all(
        ['req-node-1', 'req-node-2'].map((id) => w.runtime.executionsFor(id)[0]?.outcome),
      );
      for (const outcome of outcomes)
        assert.equal(outcome?.ok, true, outcome ? failureOf(outcome).message : 'no execution');
    } finally {
      slowCreates();
    }
    const history = w.sim.kubevirt?.history;
    assert.ok(history);
    const from = (node: string) => (r: { migrationState?: Readonly<Record<string, unknown>> }) =>
      r.migrationState?.sourceNode === node;
    const seen = {
      created: migrationsCreated(w),
      max: history.maxInFlight(byDrainbridge),
      node1: history.maxInFlight((r) => byDrainbridge(r) && from('node-1')(r)),
      node2: history.maxInFlight((r) => byDrainbridge(r) && from('node-2')(r)),
    };
    console.log(`two nodes at once, DRAINBRIDGE_KUBEVIRT_MAX_MIGRATIONS=3: ${JSON.stringify(seen)}`);
    assert.equal(seen.created, 6);
    assert.ok(seen.max <= 3, `at most 3 in flight cluster-wide, counted from the simulator: ${seen.max}`);
    assert.equal(seen.max, 3, 'the limit was reached');
    assert.ok(seen.node1 <= 2 && seen.node2 <= 2, 'at most 2 from each node (the per-node limit)');
    assert.ok(seen.node1 >= 1 && seen.node2 >= 1);
    const claims = await w.admin.getLease('drainbridge', 'drainbridge-kubevirt-migrations');
    assert.ok(claims.metadata?.annotations?.['drainbridge.io/migration-claims'], 'the shared claims record');
  });
});

describe('KubeVirt: failed migrations are retried, then reported', () => {
  let w: WorkflowSim;
  before(async () => {
    w = await startWorkflowSim(
      kubeVirtScenario({
        vms: [
          { name: 'flaky', strategy: 'LiveMigrate' },
          { name: 'broken', strategy: 'LiveMigrate' },
          { name: 'tenant', strategy: 'External' },
        ],
      }),
      { env: { DRAINBRIDGE_KUBEVIRT_RETRY_BACKOFF: '5' } },
    );
  });
  after(async () => {
    await w?.stop();
  });

  it('a VMI whose first two migrations fail moves on the third; one that always fails is a blocker naming why', async () => {
    const faults = w.sim.kubevirt?.faults;
    assert.ok(faults);
    faults.failNextMigrations('vms/flaky', 2, 'Live migration failed: flaky network (simulated)');
    faults.failNextMigrations('vms/broken', 50, 'Live migration failed: target rejected the domain (simulated)');
    await w.runtime.put(
      'Maintenance Requested',
      maintenanceRequested('node-1', { drain: DRAIN, deadline: simInstant(w, 300) }),
    );
    const [execution] = w.runtime.executionsFor('req-node-1');
    const outcome = await execution?.outcome;
    assert.equal(outcome && failureOf(outcome).name, 'EvacuationFailed');

    const history = w.sim.kubevirt?.history;
    const finals = (vmi: string) =>
      history
        ?.forVmi(vmi)
        .filter(byDrainbridge)
        .map((r) => r.phases.at(-1)?.phase) ?? [];
    assert.deepEqual(finals('vms/flaky'), ['Failed', 'Failed', 'Succeeded']);
    assert.deepEqual(finals('vms/broken'), ['Failed', 'Failed', 'Failed'], 'three attempts (the default), no more');
    const now = await vmis(w);
    assert.notEqual(now.get('vms/flaky')?.nodeName, 'node-1');
    assert.deepEqual([now.get('vms/broken')?.phase, now.get('vms/broken')?.nodeName], ['Running', 'node-1']);

    const [failed] = eventsOf(w, 'Evacuation Failed', 'req-node-1') as {
      error: { name: string };
      blockers: { reason: string }[];
    }[];
    assert.equal(failed?.error.name, 'DeadlineExceeded');
    const reasons = failed?.blockers.map((b) => b.reason) ?? [];
    assert.ok(
      reasons.some((r) =>
        /^VMI vms\/broken: 3 live migration\(s\) failed.*target rejected the domain \(simulated\)/.test(r),
      ),
      `the failure is named: ${reasons.join(' | ')}`,
    );
    assert.ok(
      reasons.some((r) => /vms\/tenant has evictionStrategy External/.test(r)),
      'the External VMI, only waited for, is a blocker once the evacuation gives up',
    );
    const events = await w.admin.core.listNamespacedEvent({ namespace: 'vms' });
    const failures = events.items.filter((e) => e.reason === 'MigrationFailed' && e.involvedObject.name === 'broken');
    assert.equal(failures.length, 3, 'an Event per failed attempt');
    assert.deepEqual(launcherEvictions(w), []);
  });
});

describe('KubeVirt: the old launcher pod of a VM that moved', () => {
  let w: WorkflowSim;
  before(async () => {
    // The source launcher pods outlive the moves by an hour (as if virt-handler's clean-up were slow).
    w = await startWorkflowSim(
      kubeVirtScenario({
        vms: [
          { name: 'app-1', strategy: 'LiveMigrate' },
          { name: 'app-2', strategy: 'LiveMigrate' },
        ],
        sourceLauncherExitSeconds: 3600,
      }),
    );
  });
  after(async () => {
    await w?.stop();
  });

  it('is completing, not waited on and not a blocker: the evacuation ends while it still runs', async () => {
    // A deadline well before the old launcher pods exit (3,600 s): waiting on them would fail it. At the
    // simulator's 200× it is 9 s of real time, room for a loaded machine.
    await w.runtime.put(
      'Maintenance Requested',
      maintenanceRequested('node-1', { drain: DRAIN, deadline: simInstant(w, 1800) }),
    );
    const [execution] = w.runtime.executionsFor('req-node-1');
    const outcome = execution ? await execution.outcome : undefined;
    assert.equal(outcome?.ok, true, outcome ? failureOf(outcome).message : 'no execution');
    const now = await vmis(w);
    const left = await w.admin.listPodsOnNode('node-1', { labelSelector: 'kubevirt.io=virt-launcher' });
    for (const name of ['app-1', 'app-2']) {
      const vmi = now.get(`vms/${name}`);
      assert.notEqual(vmi?.nodeName, 'node-1', `vms/${name} moved`);
      const old = left.find((pod) => pod.metadata?.labels?.['kubevirt.io/created-by'] === vmi?.uid);
      assert.equal(old?.status?.phase, 'Running', `vms/${name}'s old launcher pod still runs on node-1`);
    }
    const record = await readRecord(w, 'req-node-1');
    assert.deepEqual(record.status?.branches?.kubevirt?.blockers ?? [], []);
    assert.deepEqual(launcherEvictions(w), [], 'no launcher pod evicted');
  });
});

describe('KubeVirt: Restore while migrations run', () => {
  let w: WorkflowSim;
  before(async () => {
    const slow = (name: string) => ({ name, strategy: 'LiveMigrate' as const, migrationSeconds: 6000 });
    w = await startWorkflowSim(
      kubeVirtScenario({
        vms: [slow('app-1'), slow('app-2'), slow('app-3'), slow('other')],
        migrations: { parallelOutboundMigrationsPerNode: 5 },
      }),
    );
  });
  after(async () => {
    await w?.stop();
  });

  it("deletes drainbridge's own migrations only; every VM keeps running where it is; node uncordoned", async () => {
    await w.runtime.put('Maintenance Requested', maintenanceRequested('node-1', { drain: DRAIN }));
    const history = w.sim.kubevirt?.history;
    assert.ok(history);
    await history.when(
      (h) => h.migrations((r) => byDrainbridge(r) && r.phases.some((p) => p.phase === 'Running')).length === 2,
      600_000,
    );
    // In flight, the progress names where each VM goes: KubeVirt reports the target on the VMI (its
    // migrationState) long before it copies anything onto the migration.
    type Kept = { name: string; status: string; migrationPhase?: string; sourceNode: string; targetNode?: string };
    let inFlight: Kept[] = [];
    await waitUntil('the record shows both transfers with their targets', async () => {
      const state = (await statusOf(w))?.branches?.kubevirt?.state as { vmis: Record<string, Kept> } | undefined;
      inFlight = Object.values(state?.vmis ?? {}).filter((v) => v.migrationPhase === 'Running');
      return inFlight.length === 2 && inFlight.every((v) => v.targetNode);
    });
    for (const vm of inFlight) {
      assert.equal(vm.status, 'migrating');
      assert.equal(vm.sourceNode, 'node-1');
      assert.match(vm.targetNode ?? '', /^node-[23]$/, `${vm.name} goes to another node`);
    }
    // What the progress lines print: a pass says it in its NotYetDone message when nothing changed, in its
    // output's detail when something did (the pass that saw the transfers start progressed).
    // The pass that wrote the record returns a moment later: wait for its call to be recorded.
    const said = () =>
      w.taskCalls.flatMap((call) => {
        if (call.error?.name === 'NotYetDone') return [call.error.message];
        const detail = (call.output as { detail?: unknown } | undefined)?.detail;
        return Array.isArray(detail) ? detail.map(String) : [];
      });
    await waitUntil('a progress line names the target in flight', () =>
      said().some((text) => /vms\/app-\d Running node-1 → node-[23] \(\d+ s\)/.test(text)),
    );
    assert.ok(!said().some((text) => / Running node-1 → \?/.test(text)), 'no transfer runs to an unknown node');

    // Someone drains with kubectl meanwhile: evicting vms/other's launcher pod makes KubeVirt evacuate it itself.
    const [launcher] = (await w.admin.listPodsOnNode('node-1', { labelSelector: 'kubevirt.io=virt-launcher' })).filter(
      (pod) => pod.metadata?.labels?.['vm.kubevirt.io/name'] === 'other',
    );
    assert.ok(launcher);
    await assert.rejects(w.admin.evictPod(launcher), /Eviction triggered evacuation/);
    await history.when(
      (h) =>
        h
          .forVmi('vms/other')
          .some((r) => r.name.startsWith('kubevirt-evacuation-') && r.phases.some((p) => p.phase === 'Running')),
      600_000,
    );

    await w.runtime.put('Maintenance Ended', {
      version: '1',
      requestId: 'req-node-1',
      requester: 'test@example.com',
      origin: 'manual',
      target: { nodeName: 'node-1' },
    });
    await w.runtime.settle();
    const [evacuation] = w.runtime.executionsFor('req-node-1');
    const outcome = evacuation ? await evacuation.outcome : undefined;
    assert.equal(outcome && failureOf(outcome).name, 'EvacuationCancelled');

    const ours = history.migrations(byDrainbridge);
    assert.equal(ours.length, 2);
    assert.deepEqual(
      migrationsDeleted(w).sort(),
      ours.map((r) => `${r.namespace}/${r.name}`).sort(),
      'the request log: drainbridge deleted exactly its two migrations',
    );
    for (const record of ours) {
      assert.ok(record.removedAtMs, `${record.name} was deleted`);
      assert.ok(!record.phases.some((p) => p.phase === 'Succeeded'), `${record.name} did not complete`);
    }
    const kubevirts = history.forVmi('vms/other').filter((r) => r.name.startsWith('kubevirt-evacuation-'));
    assert.equal(kubevirts.length, 1);
    assert.equal(kubevirts[0]?.removedAtMs, undefined, "KubeVirt's evacuation migration was not touched");
    const [restored] = eventsOf(w, 'Node Restored', 'req-node-1') as { leftAlone: string[]; uncordoned: boolean }[];
    assert.ok(
      restored?.leftAlone.some((s) => s.startsWith("KubeVirt's evacuation migration vms/kubevirt-evacuation-")),
      `reported: ${JSON.stringify(restored?.leftAlone)}`,
    );
    assert.equal(restored?.uncordoned, true);
    await waitUntil('the aborted migrations ended', () =>
      ours.every((r) => history.migrations((m) => m.uid === r.uid)[0]?.removedAtMs !== undefined),
    );
    const now = await vmis(w);
    for (const name of ['app-1', 'app-2', 'app-3']) {
      assert.deepEqual(
        [now.get(`vms/${name}`)?.phase, now.get(`vms/${name}`)?.nodeName],
        ['Running', 'node-1'],
        `vms/${name} stayed`,
      );
    }
    assert.equal(now.get('vms/other')?.phase, 'Running');
    assert.deepEqual(launcherEvictions(w), [], 'drainbridge evicted no launcher pod');
    assert.notEqual((await readNodeAsAdmin(w, 'node-1')).spec?.unschedulable, true, 'uncordoned, as the ledger says');
  });
});

describe('KubeVirt: drainbridge abort while migrations run', () => {
  let w: WorkflowSim;
  before(async () => {
    // Migrations of 100 simulated minutes (30 s here): they still run when the abort (another process) lands.
    const slow = (name: string) => ({ name, strategy: 'LiveMigrate' as const, migrationSeconds: 6000 });
    w = await startWorkflowSim(
      kubeVirtScenario({
        vms: [slow('app-1'), slow('app-2'), slow('app-3'), slow('other')],
        migrations: { parallelOutboundMigrationsPerNode: 5 },
      }),
    );
  });
  after(async () => {
    await w?.stop();
  });

  it("deletes drainbridge's own unfinished migrations only, reports KubeVirt's; every VM runs; the node stays held", async () => {
    await w.runtime.put('Maintenance Requested', maintenanceRequested('node-1', { drain: DRAIN }));
    const [evacuation] = w.runtime.executionsFor('req-node-1');
    const history = w.sim.kubevirt?.history;
    assert.ok(evacuation && history);
    await history.when(
      (h) => h.migrations((r) => byDrainbridge(r) && r.phases.some((p) => p.phase === 'Running')).length === 2,
      600_000,
    );
    // A kubectl drain elsewhere evicts vms/other's launcher pod: KubeVirt evacuates that VM itself.
    const [launcher] = (await w.admin.listPodsOnNode('node-1', { labelSelector: 'kubevirt.io=virt-launcher' })).filter(
      (pod) => pod.metadata?.labels?.['vm.kubevirt.io/name'] === 'other',
    );
    assert.ok(launcher);
    await assert.rejects(w.admin.evictPod(launcher), /Eviction triggered evacuation/);
    await history.when((h) => h.forVmi('vms/other').some((r) => r.name.startsWith('kubevirt-evacuation-')), 600_000);

    // The operator's command, as drainbridge's ServiceAccount, from another process.
    const kubeconfig = join(mkdtempSync(join(tmpdir(), 'drainbridge-abort-')), 'kubeconfig');
    writeFileSync(kubeconfig, w.sim.kubeconfig(await w.sim.tokenFor('drainbridge/drainbridge')), { mode: 0o600 });
    const abort = await drainbridge(['abort', 'node-1', '--request-id', 'req-node-1', '--kubeconfig', kubeconfig]);
    assert.equal(abort.code, 0, abort.stderr);
    assert.equal(failureOf(await evacuation.outcome).name, 'EvacuationFailed');
    const [failed] = eventsOf(w, 'Evacuation Failed', 'req-node-1') as { error: { name: string } }[];
    assert.equal(failed?.error.name, 'EvacuationAborted');

    const ours = history.migrations(byDrainbridge);
    assert.equal(ours.length, 2, 'drainbridge started two (the per-node limit)');
    assert.deepEqual(
      migrationsDeleted(w).sort(),
      ours.map((r) => `${r.namespace}/${r.name}`).sort(),
      'the request log: drainbridge deleted exactly its two unfinished migrations',
    );
    await waitUntil('the aborted migrations ended', () =>
      ours.every((r) => history.migrations((m) => m.uid === r.uid)[0]?.removedAtMs !== undefined),
    );
    for (const record of history.migrations(byDrainbridge))
      assert.ok(!record.phases.some((p) => p.phase === 'Succeeded'), `${record.name} was aborted, not completed`);
    const kubevirts = history.forVmi('vms/other').filter((r) => r.name.startsWith('kubevirt-evacuation-'));
    assert.equal(kubevirts.length, 1);
    assert.equal(kubevirts[0]?.removedAtMs, undefined, "KubeVirt's evacuation migration was not touched");

    // Reported where an abort can say it: Events on the VMIs.
    const events = (await w.admin.core.listNamespacedEvent({ namespace: 'vms' })).items.filter(
      (e) => e.source?.component === 'drainbridge',
    );
    const about = (reason: string) => events.filter((e) => e.reason === reason).map((e) => e.involvedObject.name);
    assert.deepEqual(about('MigrationLeftRunning'), ['other']);
    assert.match(
      events.find((e) => e.reason === 'MigrationLeftRunning')?.message ?? '',
      /^KubeVirt's evacuation migration vms\/kubevirt-evacuation-\S+ of VMI vms\/other is \w+: not drainbridge's, left running/,
    );
    assert.deepEqual(about('MigrationAborted').sort(), ours.map((r) => r.vmi.replace('vms/', '')).sort());

    const now = await vmis(w);
    for (const name of ['app-1', 'app-2', 'app-3'])
      assert.deepEqual([now.get(`vms/${name}`)?.phase, now.get(`vms/${name}`)?.nodeName], ['Running', 'node-1']);
    assert.equal(now.get('vms/other')?.phase, 'Running');
    assert.deepEqual(launcherEvictions(w), [], 'drainbridge evicted no launcher pod');
    const node = await readNodeAsAdmin(w, 'node-1');
    assert.equal(node.spec?.unschedulable, true, 'the safe state: still cordoned until a Restore');
    assert.match(node.metadata?.annotations?.['drainbridge.io/ledger'] ?? '', /req-node-1/, 'and still held');
  });
});

describe('KubeVirt: a process killed mid-evacuation and run again with the same requestId', () => {
  let w: WorkflowSim;
  before(async () => {
    const slow = (name: string) => ({ name, strategy: 'LiveMigrate' as const, migrationSeconds: 60 });
    w = await startWorkflowSim(kubeVirtScenario({ vms: [slow('app-1'), slow('app-2'), slow('app-3'), slow('app-4')] }));
  });
  after(async () => {
    await w?.stop();
  });

  it('finds its migrations again (by label, even with its progress lost): no second VMIM for a VMI that has one', async () => {
    await w.runtime.put('Maintenance Requested', maintenanceRequested('node-1', { drain: DRAIN }));
    const [crashed] = w.runtime.executionsFor('req-node-1');
    assert.ok(crashed);
    const history = w.sim.kubevirt?.history;
    assert.ok(history);
    await history.when((h) => h.migrations(byDrainbridge).length === 2, 600_000);
    crashed.abort();
    await crashed.outcome;
    // The worst crash: between creating the migrations and recording them (the record's branch state is lost).
    await retryOnConflict(async () => {
      const record = await readRecord(w, 'req-node-1');
      const kubevirt = { version: record.status?.branches?.kubevirt?.version ?? '0', state: { vmis: {} } };
      const branches = { ...record.status?.branches, kubevirt };
      await w.admin.replaceEvacuation({ ...record, status: { ...record.status, branches } });
    });

    const rerun = w.runtime.startExecution('evacuate', crashed.input);
    const outcome = await rerun.outcome;
    assert.equal(outcome.ok, true, `${failureOf(outcome).name}: ${failureOf(outcome).message}`);
    const perVmi = new Map<string, number>();
    for (const r of history.migrations(byDrainbridge)) perVmi.set(r.vmi, (perVmi.get(r.vmi) ?? 0) + 1);
    assert.deepEqual(
      Object.fromEntries(perVmi),
      { 'vms/app-1': 1, 'vms/app-2': 1, 'vms/app-3': 1, 'vms/app-4': 1 },
      'one migration per VMI',
    );
    assert.equal(migrationsCreated(w), 4, 'four create requests in the request log');
  });
});

describe('KubeVirt: the restart opt-in (--kubevirt-restart-unmigratable)', () => {
  let w: WorkflowSim;
  before(async () => {
    w = await startWorkflowSim(
      kubeVirtScenario({
        vms: [
          { name: 'app', strategy: 'LiveMigrate' },
          { name: 'legacy', strategy: 'None', runStrategy: 'Always' },
          { name: 'oneshot', strategy: 'None', runStrategy: 'RerunOnFailure' },
        ],
      }),
      { env: { DRAINBRIDGE_KUBEVIRT_RESTART_UNMIGRATABLE: 'true' } },
    );
  });
  after(async () => {
    await w?.stop();
  });

  it('restarts on another node only the VM whose VirtualMachine starts it again; the other stays a blocker', async () => {
    const before = await vmis(w);
    await w.runtime.put(
      'Maintenance Requested',
      maintenanceRequested('node-1', { drain: DRAIN, deadline: simInstant(w, 300) }),
    );
    const [execution] = w.runtime.executionsFor('req-node-1');
    const outcome = execution ? await execution.outcome : undefined;
    assert.equal(outcome && failureOf(outcome).name, 'EvacuationFailed');
    const evicted = launcherEvictions(w);
    assert.equal(evicted.length, 1, `one launcher pod evicted: ${evicted.join(', ')}`);
    assert.match(evicted[0] ?? '', /^vms\/virt-launcher-legacy-/);
    const after = await vmis(w);
    const legacy = after.get('vms/legacy');
    assert.notEqual(legacy?.uid, before.get('vms/legacy')?.uid, 'a new VMI: the VM was restarted');
    assert.equal(legacy?.phase, 'Running');
    assert.notEqual(legacy?.nodeName, 'node-1');
    assert.deepEqual(
      [after.get('vms/oneshot')?.phase, after.get('vms/oneshot')?.nodeName, after.get('vms/oneshot')?.uid],
      ['Running', 'node-1', before.get('vms/oneshot')?.uid],
      'RerunOnFailure would not start it again: left running',
    );
    const [failed] = eventsOf(w, 'Evacuation Failed', 'req-node-1') as { blockers: { reason: string }[] }[];
    assert.deepEqual(
      failed?.blockers.map((b) => b.reason.replace(/ \(restart opt-in.*$/, '')),
      [
        'VMI vms/oneshot has evictionStrategy None: it stays running on node node-1; drainbridge never shuts a VM down to empty a node',
      ],
    );
    assert.notEqual(after.get('vms/app')?.nodeName, 'node-1');
  });
});
