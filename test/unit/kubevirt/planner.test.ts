/** The KubeVirt branch's pure parts: classification, the restart opt-in, slots, retries, names, launcher pods. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { nextClaims, pendingClaims } from '../../../lib/branches/kubevirt/claims.ts';
import { classifyVmi, restartVerdict } from '../../../lib/branches/kubevirt/classify.ts';
import { migrationBody, migrationName } from '../../../lib/branches/kubevirt/migrations.ts';
import {
  DEFAULT_KUBEVIRT_OPTIONS,
  type EvictionStrategy,
  KUBEVIRT_DEFAULTS,
  type KubeVirtBranchState,
  type KubeVirtSettings,
  type MigrationState,
  type Vmi,
  type Vmim,
} from '../../../lib/branches/kubevirt/model.ts';
import type { KubeVirtObservation } from '../../../lib/branches/kubevirt/observe.ts';
import { planPass } from '../../../lib/branches/kubevirt/planner.ts';

const SETTINGS: KubeVirtSettings = { ...KUBEVIRT_DEFAULTS, installed: true, evictionStrategy: 'LiveMigrate' };
const NOW = new Date('2026-11-21T10:00:00Z');
const REQUEST = 'req-1';

interface VmiOptions {
  strategy?: EvictionStrategy;
  /** true, or the reason it is not. */
  migratable?: true | string;
  phase?: string;
  owner?: string;
  /** The VMI's `status.migrationState` (KubeVirt writes it at the hand-off, before the migration is final). */
  migrationState?: MigrationState;
}

function vmi(name: string, options: VmiOptions = {}): Vmi {
  const migratable = options.migratable ?? true;
  return {
    metadata: {
      name,
      namespace: 'vms',
      uid: `uid-${name}`,
      ...(options.owner
        ? { ownerReferences: [{ kind: 'VirtualMachine', name: options.owner, controller: true }] }
        : {}),
    },
    spec: options.strategy ? { evictionStrategy: options.strategy } : {},
    status: {
      phase: options.phase ?? 'Running',
      nodeName: 'node-1',
      ...(options.migrationState ? { migrationState: options.migrationState } : {}),
      conditions: [
        migratable === true
          ? { type: 'LiveMigratable', status: 'True' }
          : { type: 'LiveMigratable', status: 'False', reason: String(migratable), message: 'cannot migrate' },
      ],
    },
  };
}

function launcher(of: Vmi, labels: Record<string, string> = {}): V1Pod {
  return {
    metadata: {
      name: `virt-launcher-${of.metadata.name}-abcde`,
      namespace: 'vms',
      uid: `pod-${of.metadata.name}`,
      labels: { 'kubevirt.io': 'virt-launcher', 'kubevirt.io/created-by': of.metadata.uid, ...labels },
      annotations: { 'kubevirt.io/domain': of.metadata.name },
      ownerReferences: [
        {
          apiVersion: 'kubevirt.io/v1',
          kind: 'VirtualMachineInstance',
          name: of.metadata.name,
          uid: of.metadata.uid,
          controller: true,
        },
      ],
    },
    spec: { nodeName: 'node-1', containers: [] },
    status: { phase: 'Running' },
  };
}

function migration(name: string, vmiName: string, phase: string): Vmim {
  return {
    metadata: { name, namespace: 'vms', uid: `m-${name}` },
    spec: { vmiName },
    status: { phase: phase as never },
  };
}

/** drainbridge's migration; `finalState` is what KubeVirt copies onto a final one (nothing before). */
function own(vmiName: string, attempt: number, phase: string, finalState?: MigrationState): Vmim {
  const body = migrationBody({ requestId: REQUEST, namespace: 'vms', vmiName, sourceNode: 'node-1', attempt });
  return {
    ...body,
    metadata: { ...body.metadata, uid: `m-${body.metadata.name}` },
    status: { phase: phase as never, ...(finalState ? { migrationState: finalState } : {}) },
  };
}

function observation(vmis: Vmi[], extra: Partial<KubeVirtObservation> = {}): KubeVirtObservation {
  return {
    nodeName: 'node-1',
    podSelector: '',
    settings: SETTINGS,
    vmis,
    launcherPods: vmis.map((v) => launcher(v)),
    migrations: [],
    elsewhere: new Map(),
    owners: new Map(),
    ...extra,
  };
}

function plan(
  obs: KubeVirtObservation,
  state: KubeVirtBranchState = { vmis: {} },
  options = DEFAULT_KUBEVIRT_OPTIONS,
  now = NOW,
) {
  return planPass({ requestId: REQUEST, nodeName: 'node-1', observation: obs, state, options, now });
}

describe('classification by effective eviction strategy', () => {
  test('LiveMigrate and migratable LiveMigrateIfPossible migrate; External waits; None and non-migratable block', () => {
    assert.equal(classifyVmi(vmi('a', { strategy: 'LiveMigrate' }), SETTINGS).kind, 'migrate');
    assert.equal(classifyVmi(vmi('b'), SETTINGS).kind, 'migrate', 'the cluster default applies');
    assert.equal(classifyVmi(vmi('c', { strategy: 'LiveMigrateIfPossible' }), SETTINGS).kind, 'migrate');
    assert.equal(classifyVmi(vmi('d', { strategy: 'External' }), SETTINGS).kind, 'external');
    const none = classifyVmi(vmi('e', { strategy: 'None' }), SETTINGS);
    assert.deepEqual(none, { kind: 'unmigratable', why: 'has evictionStrategy None', evictable: true });
    const disks = classifyVmi(vmi('f', { migratable: 'DisksNotLiveMigratable' }), SETTINGS);
    assert.deepEqual(disks, {
      kind: 'unmigratable',
      why: 'is not live-migratable (DisksNotLiveMigratable: cannot migrate)',
      evictable: false,
    });
    assert.equal(classifyVmi(vmi('g', { phase: 'Scheduling' }), SETTINGS).kind, 'starting');
    assert.equal(classifyVmi(vmi('h'), { ...SETTINGS, evictionStrategy: 'None' }).kind, 'unmigratable');
  });

  test('the restart opt-in: only where KubeVirt lets the eviction through and a VirtualMachine starts the VMI again', () => {
    const none = vmi('legacy', { strategy: 'None', owner: 'legacy' });
    const cls = classifyVmi(none, SETTINGS);
    assert.equal(cls.kind, 'unmigratable');
    if (cls.kind !== 'unmigratable') return;
    const vm = (spec: object) => ({ metadata: { name: 'legacy', namespace: 'vms', uid: 'vm' }, spec });
    assert.deepEqual(restartVerdict(none, cls, { vmName: 'legacy', vm: vm({ runStrategy: 'Always' }) }), {
      restart: true,
    });
    assert.deepEqual(restartVerdict(none, cls, { vmName: 'legacy', vm: vm({ running: true }) }), { restart: true });
    assert.match(
      JSON.stringify(restartVerdict(none, cls, { vmName: 'legacy', vm: vm({ runStrategy: 'RerunOnFailure' }) })),
      /would not start it again \(RerunOnFailure\)/,
    );
    assert.match(JSON.stringify(restartVerdict(none, cls, {})), /no VirtualMachine owns it/);
    const pinned = vmi('db', { strategy: 'LiveMigrate', migratable: 'DisksNotLiveMigratable', owner: 'db' });
    const pinnedCls = classifyVmi(pinned, SETTINGS);
    if (pinnedCls.kind !== 'unmigratable') throw new Error('unexpected');
    assert.match(
      JSON.stringify(restartVerdict(pinned, pinnedCls, { vmName: 'db', vm: vm({ runStrategy: 'Always' }) })),
      /LiveMigrate forbids/,
    );
  });
});

describe('a pass, planned', () => {
  test('starts at most the free slots, counting everyone’s unfinished migrations, Pending ones too', () => {
    const vmis = ['a', 'b', 'c', 'd'].map((n) => vmi(n));
    const someone = migration('operator', 'a', 'Pending');
    const first = plan(observation(vmis, { migrations: [someone] }));
    assert.deepEqual(
      first.actions.map((a) => (a.kind === 'migrate' ? a.migration.vmiName : a.kind)),
      ['b'],
      'one slot left of two: vms/a is the operator’s',
    );
    assert.equal(first.state.vmis['uid-a']?.migrationBy, 'other');
    assert.equal(first.progress.inFlight, 2);
    const cluster = plan(
      observation(vmis),
      { vmis: {} },
      { ...DEFAULT_KUBEVIRT_OPTIONS, maxMigrationsPerNode: 10, maxMigrationsPerCluster: 3 },
    );
    assert.equal(cluster.actions.length, 2, "KubeVirt's own per-node limit (2) is tighter than drainbridge's 10");
    const tight = plan(observation(vmis, { settings: { ...SETTINGS, parallelMigrationsPerCluster: 1 } }));
    assert.equal(tight.actions.length, 1, "KubeVirt's cluster limit");
  });

  test('slots claimed by other evacuations count until their migrations show up; expired claims do not', () => {
    const vmis = ['a', 'b', 'c'].map((n) => vmi(n));
    const listed = migration('drainbridge-x-1', 'x', 'Running');
    const claims = {
      'vms/drainbridge-x-1': { node: 'node-2', vmi: 'vms/x', at: '2026-11-21T09:59:59Z' },
      'vms/drainbridge-y-1': { node: 'node-2', vmi: 'vms/y', at: '2026-11-21T09:59:59Z' },
      'vms/drainbridge-z-1': { node: 'node-3', vmi: 'vms/z', at: '2026-11-21T09:50:00Z' },
    };
    const pending = pendingClaims(claims, [listed], NOW);
    assert.deepEqual(
      pending.map((c) => c.vmi),
      ['vms/y'],
      'x is listed (counted once, as a migration); z expired',
    );
    const options = { ...DEFAULT_KUBEVIRT_OPTIONS, maxMigrationsPerCluster: 3 };
    const result = planPass({
      requestId: REQUEST,
      nodeName: 'node-1',
      observation: observation(vmis, { migrations: [listed] }),
      state: { vmis: {} },
      options,
      now: NOW,
      claims: pending,
    });
    assert.equal(result.actions.length, 1, '3 in the cluster: x running, y claimed, one left');
    assert.deepEqual(Object.keys(nextClaims(claims, {}, [listed], NOW)), ['vms/drainbridge-y-1']);
  });

  test('follows its own migration instead of creating another (found by label, named per attempt)', () => {
    // As KubeVirt reports a running migration: nothing on the migration until it is final; the VMI's
    // migrationState (written at the hand-off) names the target, and the source the transfer's start.
    const running = own('a', 1, 'Running');
    const a = vmi('a', {
      migrationState: {
        migrationUid: running.metadata.uid,
        sourceNode: 'node-1',
        targetNode: 'node-2',
        startTimestamp: '2026-11-21T09:59:20Z',
      },
    });
    const result = plan(observation([a], { migrations: [running] }));
    assert.deepEqual(result.actions, []);
    assert.equal(result.state.vmis['uid-a']?.migration, migrationName(REQUEST, 'a', 1));
    assert.equal(result.state.vmis['uid-a']?.targetNode, 'node-2');
    assert.equal(result.state.vmis['uid-a']?.startedAt, '2026-11-21T09:59:20Z', 'the transfer began before this pass');
    assert.equal(result.done, false);
    assert.equal(result.detail[0], 'vms/a Running node-1 → node-2 (40 s)');
  });

  test('before the hand-off the target is not known yet: the VMI state of an earlier migration is not this one’s', () => {
    const scheduling = own('a', 2, 'Scheduling');
    const earlier = { migrationUid: 'm-an-earlier-one', sourceNode: 'node-3', targetNode: 'node-1', completed: true };
    const result = plan(observation([vmi('a', { migrationState: earlier })], { migrations: [scheduling] }));
    assert.equal(result.state.vmis['uid-a']?.targetNode, undefined);
    assert.equal(result.state.vmis['uid-a']?.sourceNode, 'node-1');
    assert.match(result.detail[0] ?? '', /^vms\/a Scheduling node-1 → \?/);
  });

  test('a failed attempt is retried after the backoff; once the attempts are spent it is a blocker with the reason', () => {
    const a = vmi('a');
    const failed1 = own('a', 1, 'Failed', { failureReason: 'boom', endTimestamp: '2026-11-21T09:59:50Z' });
    const waiting = plan(observation([a], { migrations: [failed1] }));
    assert.deepEqual(waiting.actions, []);
    assert.equal(waiting.state.vmis['uid-a']?.status, 'retry-wait');
    assert.equal(waiting.state.vmis['uid-a']?.retryAt, '2026-11-21T10:00:20.000Z');
    assert.deepEqual(
      waiting.events.map((e) => e.reason),
      ['MigrationFailed'],
    );
    const later = plan(
      observation([a], { migrations: [failed1] }),
      waiting.state,
      DEFAULT_KUBEVIRT_OPTIONS,
      new Date('2026-11-21T10:00:21Z'),
    );
    assert.deepEqual(
      later.actions.map((x) => (x.kind === 'migrate' ? x.migration.attempt : 0)),
      [2],
    );
    const failed = [
      failed1,
      own('a', 2, 'Failed', { failureReason: 'boom' }),
      own('a', 3, 'Failed', { failureReason: 'still boom' }),
    ];
    const spent = plan(observation([a], { migrations: failed }), later.state);
    assert.deepEqual(spent.actions, []);
    assert.equal(spent.blockers[0]?.code, 'MigrationFailed');
    assert.match(spent.blockers[0]?.reason ?? '', /3 live migration\(s\) failed, the last .* with: still boom/);
  });

  test('None and non-migratable VMIs are blockers, never moved; External is waited for', () => {
    const result = plan(
      observation([
        vmi('legacy', { strategy: 'None' }),
        vmi('db', { migratable: 'DisksNotLiveMigratable' }),
        vmi('ext', { strategy: 'External' }),
      ]),
    );
    assert.deepEqual(result.actions, []);
    assert.deepEqual(
      result.blockers.map((b) => [b.code, b.item?.name]),
      [
        ['NotLiveMigratable', 'vms/db'],
        ['NotLiveMigratable', 'vms/legacy'],
      ],
    );
    assert.deepEqual(
      result.waiting.map((b) => b.item?.name),
      ['vms/ext'],
    );
  });

  test('with the opt-in, a None VMI of an Always VirtualMachine is restarted by evicting its launcher pod', () => {
    const legacy = vmi('legacy', { strategy: 'None', owner: 'legacy' });
    const owners = new Map([
      ['vms/legacy', { metadata: { name: 'legacy', namespace: 'vms', uid: 'vm' }, spec: { runStrategy: 'Always' } }],
    ]);
    const result = plan(
      observation([legacy], { owners }),
      { vmis: {} },
      { ...DEFAULT_KUBEVIRT_OPTIONS, restartUnmigratable: true },
    );
    assert.deepEqual(
      result.actions.map((a) => [a.kind, a.kind === 'restart' ? a.pod.metadata?.name : '']),
      [['restart', 'virt-launcher-legacy-abcde']],
    );
    assert.equal(result.state.vmis['uid-legacy']?.status, 'restarting');
  });

  test('a launcher pod no VMI accounts for is a blocker; --pod-selector leaves unselected VMs alone', () => {
    const orphan = launcher(vmi('ghost'));
    const noKubeVirt = plan({ ...observation([]), settings: KUBEVIRT_DEFAULTS, launcherPods: [orphan] });
    assert.equal(noKubeVirt.done, false);
    assert.match(
      noKubeVirt.blockers[0]?.reason ?? '',
      /^KubeVirt launcher pod vms\/virt-launcher-ghost-abcde on node node-1 runs a VM, but KubeVirt does not serve/,
    );
    const a = vmi('a');
    const b = vmi('b');
    const selected = plan(
      observation([a, b], { podSelector: 'tier=gold', launcherPods: [launcher(a, { tier: 'gold' })] }),
    );
    assert.deepEqual(
      selected.actions.map((x) => (x.kind === 'migrate' ? x.migration.vmiName : '')),
      ['a'],
    );
    assert.deepEqual(
      selected.skipped.map((s) => s.item.name),
      ['vms/b'],
    );
  });

  test('the old launcher pod of a VMI that moved away completes by itself: neither waited on nor a blocker', () => {
    const a = vmi('a');
    const first = plan(observation([a]));
    // KubeVirt reports the VMI on node-2; its source launcher pod still runs on node-1 for a moment.
    const onNode2 = { ...a, status: { ...a.status, nodeName: 'node-2' } };
    const moving = own('a', 1, 'Running');
    const window = plan(
      observation([], { launcherPods: [launcher(a)], elsewhere: new Map([['uid-a', onNode2]]), migrations: [moving] }),
      first.state,
    );
    assert.deepEqual(window.blockers, []);
    assert.equal(window.progress.inFlight, 0);
    assert.equal(window.done, true);
    // Its VMI not read back (yet), a migration of this request that moved it off node-1 says the same.
    const succeeded = own('a', 1, 'Succeeded');
    const byMigration = plan(observation([], { launcherPods: [launcher(a)], migrations: [succeeded] }), first.state);
    assert.deepEqual(byMigration.blockers, []);
    assert.equal(byMigration.done, true);
    // Without either, a launcher pod nobody accounts for still blocks.
    const unknown = plan(observation([], { launcherPods: [launcher(a)] }), first.state);
    assert.equal(unknown.blockers[0]?.code, 'LauncherPod');
  });

  test('a migration target landing on the node is waited for, even though its VMI runs elsewhere', () => {
    const b = { ...vmi('b'), status: { ...vmi('b').status, nodeName: 'node-2' } };
    const incoming = migration('someone-moves-b', 'b', 'Running');
    const target = launcher(b, { 'kubevirt.io/migrationJobUID': incoming.metadata.uid });
    const result = plan(
      observation([], { launcherPods: [target], elsewhere: new Map([['uid-b', b]]), migrations: [incoming] }),
    );
    assert.deepEqual(result.blockers, []);
    assert.equal(result.progress.inFlight, 1);
    assert.equal(result.done, false);
    assert.match(result.detail[0] ?? '', /is a migration target landing here$/);
  });

  test('a VMI that left the node counts as moved, with where it went', () => {
    const a = vmi('a');
    const first = plan(observation([a]));
    const done = own('a', 1, 'Succeeded', {
      sourceNode: 'node-1',
      targetNode: 'node-3',
      endTimestamp: '2026-11-21T10:01:00Z',
    });
    const after = plan(observation([], { migrations: [done] }), first.state);
    assert.equal(after.done, true);
    assert.deepEqual(after.progress, { total: 1, moved: 1, inFlight: 0, skipped: 0 });
    assert.equal(after.state.vmis['uid-a']?.targetNode, 'node-3');
    assert.deepEqual(
      after.events.map((e) => e.reason),
      ['Migrated'],
    );
    assert.equal(after.progressed, true);
  });
});

test('migration names are DNS subdomains of at most 253 characters, one per request, VMI and attempt', () => {
  const long = `${'a'.repeat(240)}.b`;
  const name = migrationName(REQUEST, long, 12);
  assert.ok(name.length <= 253);
  assert.match(name, /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/);
  assert.notEqual(migrationName('req-2', 'vm', 1), migrationName(REQUEST, 'vm', 1));
  assert.notEqual(migrationName(REQUEST, 'vm', 2), migrationName(REQUEST, 'vm', 1));
});
