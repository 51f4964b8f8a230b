/** NodeMaintenance decisions and the NMO-shaped status (lib/sources/node-maintenance), pure. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Node } from '@kubernetes/client-node';
import type { EvacuationObject } from '../../../lib/clients/kube/paths.ts';
import { LEDGER_ANNOTATION, type Ledger } from '../../../lib/node/ledger.ts';
import { type NodeMaintenanceFacts, planNodeMaintenance } from '../../../lib/sources/node-maintenance/decide.ts';
import { nmoMarker } from '../../../lib/sources/node-maintenance/nmo.ts';
import { servedNodeOf } from '../../../lib/sources/node-maintenance/served-node.ts';
import { statusFromRecord, statusPatch, WAITING_FOR_SLOT } from '../../../lib/sources/node-maintenance/status.ts';
import {
  DRAINBRIDGE_FINALIZER,
  NMO_FINALIZER,
  type NodeMaintenance,
  nodeMaintenanceRequestId,
  SERVED_NODE_ANNOTATION,
} from '../../../lib/sources/node-maintenance/types.ts';

const NOW = new Date('2026-11-21T10:00:00.500Z');

function nm(extra: Partial<NodeMaintenance['metadata']> = {}): NodeMaintenance {
  return {
    apiVersion: 'nodemaintenance.medik8s.io/v1beta1',
    kind: 'NodeMaintenance',
    metadata: { name: 'nm-1', uid: '0a1b2c3d-4e5f-4000-8000-000000000000', resourceVersion: '7', ...extra },
    spec: { nodeName: 'node-1', reason: 'firmware' },
  };
}

const ID = nodeMaintenanceRequestId(nm());

function nodeWith(ledger?: Ledger): V1Node {
  return {
    metadata: { name: 'node-1', annotations: ledger ? { [LEDGER_ANNOTATION]: JSON.stringify(ledger) } : {} },
    spec: {},
  };
}

function facts(over: Partial<NodeMaintenanceFacts>): NodeMaintenanceFacts {
  return {
    nm: nm(),
    node: nodeWith(),
    servedNode: 'node-1',
    record: undefined,
    others: [],
    nmoInstalled: undefined,
    coexistence: 'refuse',
    now: NOW,
    ...over,
  };
}

const kinds = (f: NodeMaintenanceFacts) =>
  planNodeMaintenance(f).map((a) =>
    a.kind === 'publish' ? a.detailType : a.kind === 'event' ? `event ${a.reason}` : a.kind,
  );

describe('planNodeMaintenance', () => {
  it('the requestId is stable for the CR and a valid DNS name', () => {
    assert.equal(ID, 'nm.nm-1.0a1b2c3d4e5f');
  });

  it('adopts first (finalizer, node recorded, BeginMaintenance as NMO), then requests, then mirrors the status', () => {
    assert.deepEqual(kinds(facts({})), ['add-finalizer', 'event BeginMaintenance']);
    assert.deepEqual(planNodeMaintenance(facts({}))[0], { kind: 'add-finalizer', node: 'node-1' });
    const adopted = nm({ finalizers: [DRAINBRIDGE_FINALIZER] });
    assert.deepEqual(kinds(facts({ nm: adopted })), ['Maintenance Requested', 'status']);
  });

  it('does not request again once the request holds the node or has a record', () => {
    const adopted = nm({ finalizers: [DRAINBRIDGE_FINALIZER] });
    const held = nodeWith({
      holds: { [ID]: { requester: 'x', origin: 'node-maintenance', since: NOW.toISOString() } },
      released: {},
    });
    assert.deepEqual(kinds(facts({ nm: adopted, node: held })), ['status']);
  });

  it("a missing node: refused with NMO's webhook message (phase Failed, FailedMaintenance), nothing else", () => {
    const actions = planNodeMaintenance(facts({ node: undefined }));
    assert.deepEqual(kinds(facts({ node: undefined })), ['status', 'event FailedMaintenance']);
    assert.deepEqual(actions[0], {
      kind: 'status',
      patch: {
        phase: 'Failed',
        lastError: 'invalid nodeName, no node with name node-1 found',
        lastUpdate: '2026-11-21T10:00:00Z',
      },
    });
    const refused = { ...nm(), status: { phase: 'Failed' as const, lastError: 'x' } };
    assert.deepEqual(kinds(facts({ nm: refused })), [], 'refused stays refused, even once the node exists');
  });

  it("a node gone while in maintenance: Failed with the controller's NotFound", () => {
    const adopted = nm({ finalizers: [DRAINBRIDGE_FINALIZER] });
    const actions = planNodeMaintenance(facts({ nm: adopted, node: undefined }));
    assert.deepEqual(actions[0], {
      kind: 'status',
      patch: { phase: 'Failed', lastError: 'nodes "node-1" not found', lastUpdate: '2026-11-21T10:00:00Z' },
    });
  });

  it("a second NodeMaintenance for a node: refused with NMO's message, whichever came first wins", () => {
    const older = nm({ name: 'nm-0', uid: 'u0', creationTimestamp: new Date('2026-11-21T09:00:00Z') });
    const mine = nm({ creationTimestamp: new Date('2026-11-21T09:30:00Z') });
    const actions = planNodeMaintenance(facts({ nm: mine, others: [older] }));
    assert.equal(actions[0]?.kind, 'status');
    assert.equal(
      actions[0]?.kind === 'status' ? actions[0].patch.lastError : undefined,
      'invalid nodeName, a NodeMaintenance for node node-1 already exists',
    );
    assert.deepEqual(kinds(facts({ nm: older, others: [mine] })), ['add-finalizer', 'event BeginMaintenance']);
    const adoptedYounger = nm({ name: 'nm-2', uid: 'u2', finalizers: [DRAINBRIDGE_FINALIZER] });
    assert.equal(kinds(facts({ nm: older, others: [adoptedYounger] }))[0], 'status', 'one already taken wins');
    const refusedOther = { ...older, status: { phase: 'Failed' as const } };
    assert.equal(kinds(facts({ nm: mine, others: [refusedOther] }))[0], 'add-finalizer', 'a refused one counts not');
    const elsewhere = { ...older, spec: { nodeName: 'node-2' } };
    assert.equal(kinds(facts({ nm: mine, others: [elsewhere] }))[0], 'add-finalizer');
  });

  it("a changed spec.nodeName: the node taken stays served, NMO's refusal in lastError", () => {
    const renamed: NodeMaintenance = {
      ...nm({ finalizers: [DRAINBRIDGE_FINALIZER] }),
      spec: { nodeName: 'node-2' },
    };
    const held = nodeWith({
      holds: { [ID]: { requester: 'x', origin: 'node-maintenance', since: NOW.toISOString() } },
      released: {},
    });
    const actions = planNodeMaintenance(facts({ nm: renamed, node: held, servedNode: 'node-1' }));
    assert.deepEqual(actions, [
      {
        kind: 'status',
        patch: {
          phase: 'Running',
          lastError: "updating spec.NodeName isn't allowed",
          lastUpdate: '2026-11-21T10:00:00Z',
        },
      },
    ]);
  });

  it('deletion: Maintenance Ended until the ledger shows the request released, then the finalizer goes', () => {
    const deleting = nm({ finalizers: [DRAINBRIDGE_FINALIZER], deletionTimestamp: new Date() });
    const held = nodeWith({
      holds: { [ID]: { requester: 'x', origin: 'node-maintenance', since: NOW.toISOString() } },
      released: {},
    });
    assert.deepEqual(kinds(facts({ nm: deleting, node: held })), ['Maintenance Ended']);
    assert.deepEqual(
      kinds(facts({ nm: deleting, node: nodeWith() })),
      ['Maintenance Ended'],
      'never held: end it anyway (tombstone)',
    );
    assert.deepEqual(
      kinds(facts({ nm: deleting, node: nodeWith({ holds: {}, released: { [ID]: NOW.toISOString() } }) })),
      ['remove-finalizer', 'event UncordonNode'],
    );
    const stillCordoned = {
      ...nodeWith({ holds: {}, released: { [ID]: NOW.toISOString() } }),
      spec: { unschedulable: true },
    };
    assert.deepEqual(kinds(facts({ nm: deleting, node: stillCordoned })), ['remove-finalizer'], 'no UncordonNode');
    assert.deepEqual(kinds(facts({ nm: deleting, node: undefined })), ['remove-finalizer']);
    assert.deepEqual(kinds(facts({ nm: nm({ deletionTimestamp: new Date() }) })), [], 'not ours: nothing');
  });

  it('refuses a CR node-maintenance-operator handles, unless told to act', () => {
    assert.deepEqual(kinds(facts({ nm: nm({ finalizers: [NMO_FINALIZER] }) })), ['refuse']);
    assert.deepEqual(kinds(facts({ nmoInstalled: 'label' })), ['refuse']);
    assert.deepEqual(kinds(facts({ nmoInstalled: 'label', coexistence: 'act' })), [
      'add-finalizer',
      'event BeginMaintenance',
    ]);
    const adopted = nm({ finalizers: [DRAINBRIDGE_FINALIZER] });
    assert.notDeepEqual(
      kinds(facts({ nm: adopted, nmoInstalled: 'label' })),
      ['refuse'],
      'an adopted CR is seen through',
    );
  });

  it("a NodeMaintenance an earlier NMO left: released when deleted, NMO's marks named and never undone", () => {
    const left = nm({ finalizers: [NMO_FINALIZER] });
    const refused = planNodeMaintenance(facts({ nm: left }));
    assert.equal(refused[0]?.kind, 'refuse', 'not deleted: left as NMO left it');
    assert.match(refused[0]?.kind === 'refuse' ? refused[0].reason : '', /no longer installed/);
    const deleting = nm({ finalizers: [NMO_FINALIZER], deletionTimestamp: new Date() });
    const marked: V1Node = {
      metadata: { name: 'node-1', labels: { 'remediation.medik8s.io/exclude-from-remediation': 'true' } },
      spec: { unschedulable: true, taints: [{ key: 'medik8s.io/drain', effect: 'NoSchedule' }] },
    };
    const actions = planNodeMaintenance(facts({ nm: deleting, node: marked }));
    assert.deepEqual(actions[0], { kind: 'remove-finalizer', nmo: true });
    assert.equal(actions.length, 2);
    const message = actions[1]?.kind === 'nmo-marks-left' ? actions[1].message : '';
    assert.match(message, /kubectl uncordon node-1/);
    assert.match(message, /kubectl taint node node-1 medik8s.io\/drain:NoSchedule-/);
    assert.match(message, /kubectl label node node-1 remediation.medik8s.io\/exclude-from-remediation-/);
    assert.deepEqual(kinds(facts({ nm: deleting })), ['remove-finalizer'], 'nothing left on the node: nothing named');
    assert.deepEqual(kinds(facts({ nm: deleting, nmoInstalled: 'label' })), [], 'NMO there: its own to remove');
    const both = nm({ finalizers: [NMO_FINALIZER, DRAINBRIDGE_FINALIZER], deletionTimestamp: new Date() });
    const held = nodeWith({
      holds: { [ID]: { requester: 'x', origin: 'node-maintenance', since: NOW.toISOString() } },
      released: {},
    });
    assert.deepEqual(kinds(facts({ nm: both, node: held })), ['Maintenance Ended'], "drainbridge's restore first");
  });

  it("detects NMO from its CRD's labels", () => {
    assert.match(
      nmoMarker({ metadata: { labels: { 'node-maintenance-operator': '' } } }) ?? '',
      /node-maintenance-operator label/,
    );
    assert.match(
      nmoMarker({
        metadata: { labels: { 'operators.coreos.com/node-maintenance-operator.openshift-workload-availability': '' } },
      }) ?? '',
      /OLM/,
    );
    assert.equal(nmoMarker({ metadata: { labels: { 'app.kubernetes.io/part-of': 'drainbridge' } } }), undefined);
    assert.equal(nmoMarker(undefined), undefined);
  });
});

describe('the node a NodeMaintenance serves', () => {
  const held = (name: string): V1Node => {
    const node = nodeWith({
      holds: { [ID]: { requester: 'x', origin: 'node-maintenance', since: NOW.toISOString() } },
      released: {},
    });
    return { ...node, metadata: { ...node.metadata, name } };
  };
  const renamed = (extra: Partial<NodeMaintenance['metadata']>): NodeMaintenance => ({
    ...nm(extra),
    spec: { nodeName: 'node-9' },
  });

  it('the node recorded when taken, whatever spec.nodeName says since', () => {
    const recorded = renamed({
      finalizers: [DRAINBRIDGE_FINALIZER],
      annotations: { [SERVED_NODE_ANNOTATION]: 'node-1' },
    });
    assert.equal(
      servedNodeOf(recorded, () => []),
      'node-1',
    );
  });

  it('taken before the record existed: the node whose ledger names the request', () => {
    const legacy = renamed({ finalizers: [DRAINBRIDGE_FINALIZER] });
    assert.equal(
      servedNodeOf(legacy, () => [nodeWith(), held('node-3')]),
      'node-3',
    );
    assert.equal(
      servedNodeOf(legacy, () => [nodeWith()]),
      'node-9',
      'held nowhere yet: spec.nodeName',
    );
    assert.equal(
      servedNodeOf(renamed({}), () => [held('node-3')]),
      'node-9',
      'not taken: spec.nodeName',
    );
  });
});

describe('the NMO status from an Evacuation record', () => {
  const record = (phase: string, moved: number): EvacuationObject => ({
    apiVersion: 'drainbridge.io/v1alpha1',
    kind: 'Evacuation',
    metadata: { name: ID },
    spec: { requestId: ID, nodeName: 'node-1' },
    status: {
      phase,
      firstBlocker: 'pod shop/web-1 is blocked by PodDisruptionBudget web',
      branches: {
        pods: {
          version: '3',
          total: 4,
          moved,
          skipped: 1,
          state: { pods: { u1: { name: 'shop/web-1', attempts: 1 } }, moved: {} },
        },
      },
    },
  });

  it('Running with counts, pending pods and the blocker as lastError', () => {
    assert.deepEqual(statusFromRecord(record('NodeDraining', 1)), {
      phase: 'Running',
      evictionPods: 4,
      totalpods: 5,
      drainProgress: 25,
      pendingPods: ['web-1'],
      pendingPodsRefs: [{ namespace: 'shop', name: 'web-1' }],
      lastError: 'pod shop/web-1 is blocked by PodDisruptionBudget web',
    });
  });

  it('Succeeded at NodeDrained (progress 100, nothing pending); Failed with the failure', () => {
    const done = statusFromRecord(record('NodeDrained', 4));
    assert.equal(done.phase, 'Succeeded');
    assert.equal(done.drainProgress, 100);
    assert.equal(done.pendingPods, undefined);
    const failed = record('Failed', 2);
    (failed.status as { lastError?: string }).lastError = 'DeadlineExceeded: too slow';
    assert.equal(statusFromRecord(failed).phase, 'Failed');
    assert.equal(statusFromRecord(failed).lastError, 'DeadlineExceeded: too slow');
  });

  it("a control-plane node the quorum guard holds back: NMO's refusal with drainbridge's reason in lastError", () => {
    const guarded = record('NodeDraining', 0);
    const pods = guarded.status?.branches?.pods;
    assert.ok(pods);
    pods.blockerSpans = [
      { code: 'ControlPlaneQuorum', from: NOW.toISOString(), reason: 'etcd would keep 1 of 3 members healthy' },
    ];
    assert.equal(
      statusFromRecord(guarded).lastError,
      'can not put master/control-plane node into maintenance at this moment, disrupting node node-1 will violate etcd quorum: etcd would keep 1 of 3 members healthy',
    );
    pods.blockerSpans = [{ code: 'ControlPlaneQuorum', from: NOW.toISOString(), to: NOW.toISOString() }];
    assert.equal(statusFromRecord(guarded).lastError, 'pod shop/web-1 is blocked by PodDisruptionBudget web', 'over');
  });

  it('a request in line for a slot (record without phase, node not held) says so in lastError', () => {
    const waiting: EvacuationObject = { ...record('NodeDraining', 0), status: {} };
    assert.deepEqual(statusFromRecord(waiting, false), {
      phase: 'Running',
      drainProgress: 0,
      lastError: WAITING_FOR_SLOT,
    });
    assert.equal(statusFromRecord(waiting, true).lastError, undefined, 'held: admitted, not waiting');
  });

  it('patches only what changed (nulls for what went), with lastUpdate', () => {
    assert.equal(statusPatch({ phase: 'Running' }, { phase: 'Running' }, NOW), undefined);
    assert.deepEqual(
      statusPatch({ phase: 'Running', lastError: 'x' }, { phase: 'Succeeded', drainProgress: 100 }, NOW),
      {
        phase: 'Succeeded',
        drainProgress: 100,
        lastError: null,
        lastUpdate: '2026-11-21T10:00:00Z',
      },
    );
  });
});
