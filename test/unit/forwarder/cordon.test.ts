/** Cordon means evacuate, decided from one node (lib/sources/cordon): requestIds and what to publish. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Node } from '@kubernetes/client-node';
import { parseSelector } from '../../../lib/clients/kube/selectors.ts';
import { LEDGER_ANNOTATION, type Ledger } from '../../../lib/node/ledger.ts';
import { type CordonSelection, planCordon } from '../../../lib/sources/cordon/decide.ts';
import { cordonRequestId } from '../../../lib/sources/cordon/request-id.ts';

const ALL: CordonSelection = { enabled: true, selector: [] };
const OFF: CordonSelection = { enabled: false };

function node(
  options: {
    unschedulable?: boolean;
    time?: string;
    manager?: string;
    ledger?: Ledger;
    labels?: Record<string, string>;
    uid?: string;
  } = {},
): V1Node {
  const managedFields = options.time
    ? [
        {
          manager: options.manager ?? 'kubectl',
          operation: 'Update',
          apiVersion: 'v1',
          time: options.time as never,
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:spec': { 'f:unschedulable': {} } },
        },
      ]
    : [];
  return {
    metadata: {
      name: 'node-1',
      uid: options.uid ?? '6f1c2a3b-0000-4000-8000-000000000001',
      labels: options.labels ?? {},
      annotations: options.ledger ? { [LEDGER_ANNOTATION]: JSON.stringify(options.ledger) } : {},
      managedFields,
    },
    spec: options.unschedulable ? { unschedulable: true } : {},
  };
}

const CORDONED_AT = '2026-11-21T10:00:00Z';

describe('cordonRequestId', () => {
  it('is deterministic: the same node state gives the same id, in any replica, after any restart', () => {
    const a = cordonRequestId(node({ unschedulable: true, time: CORDONED_AT }));
    const b = cordonRequestId(structuredClone(node({ unschedulable: true, time: CORDONED_AT })));
    assert.deepEqual(a, b);
    assert.match(a.requestId, /^cordon\.node-1\.[0-9a-f]{12}$/);
    assert.equal(a.requester, 'kubectl (cordon)');
  });

  it('a new cordon (a new managedFields time) or a recreated node (a new uid) is a new request', () => {
    const first = cordonRequestId(node({ unschedulable: true, time: CORDONED_AT })).requestId;
    assert.notEqual(cordonRequestId(node({ unschedulable: true, time: '2026-11-21T11:00:00Z' })).requestId, first);
    assert.notEqual(cordonRequestId(node({ unschedulable: true, time: CORDONED_AT, uid: 'other' })).requestId, first);
  });

  it('client-node Dates and API strings give the same id', () => {
    const asDate = node({ unschedulable: true, time: CORDONED_AT });
    (asDate.metadata?.managedFields?.[0] as { time: unknown }).time = new Date(CORDONED_AT);
    assert.equal(
      cordonRequestId(asDate).requestId,
      cordonRequestId(node({ unschedulable: true, time: CORDONED_AT })).requestId,
    );
  });

  it('stays within the contract for the longest node names', () => {
    const long = node({ unschedulable: true, time: CORDONED_AT });
    (long.metadata as { name: string }).name = `${'a'.repeat(240)}.example.com`;
    assert.ok(cordonRequestId(long).requestId.length <= 128);
  });
});

describe('planCordon', () => {
  it('issue 12 item 1: a ledger that cannot be read publishes nothing, cordoned or not, and says to repair', () => {
    for (const unschedulable of [true, false]) {
      const damaged = node({ unschedulable, time: CORDONED_AT });
      damaged.metadata = { ...damaged.metadata, annotations: { [LEDGER_ANNOTATION]: '{"holds": 1}' } };
      const plan = planCordon(damaged, ALL, 'cordon-remembered');
      assert.equal(plan.cordoned, undefined, 'read as empty, drainbridge would take its own cordon for a person’s');
      assert.deepEqual(plan.uncordoned, [], 'nor end a hold it cannot see');
      assert.match(plan.why, /drainbridge repair/);
    }
  });

  it('a cordon by someone else on a selected node → Node Cordoned', () => {
    const plan = planCordon(node({ unschedulable: true, time: CORDONED_AT }), ALL);
    assert.equal(plan.cordoned?.requestId, cordonRequestId(node({ unschedulable: true, time: CORDONED_AT })).requestId);
    assert.deepEqual(plan.uncordoned, []);
  });

  it('off by default, and only nodes the selector picks', () => {
    assert.equal(planCordon(node({ unschedulable: true, time: CORDONED_AT }), OFF).cordoned, undefined);
    const workers: CordonSelection = { enabled: true, selector: parseSelector('role=worker') };
    assert.equal(planCordon(node({ unschedulable: true, time: CORDONED_AT }), workers).cordoned, undefined);
    assert.ok(
      planCordon(node({ unschedulable: true, time: CORDONED_AT, labels: { role: 'worker' } }), workers).cordoned,
    );
  });

  it("drainbridge's own cordon (the ledger says drainbridge set spec.unschedulable) is never echoed", () => {
    const ledger: Ledger = {
      holds: { 'manual-1': { requester: 'ops', origin: 'manual', since: CORDONED_AT } },
      released: {},
      changes: { priorUnschedulable: false, cordoned: true, annotations: {}, taints: [] },
    };
    const plan = planCordon(node({ unschedulable: true, time: CORDONED_AT, ledger }), ALL);
    assert.equal(plan.cordoned, undefined);
    assert.equal(plan.why, "drainbridge's own cordon");
  });

  it('once the ledger holds the node for a cordon, that request is the cordon (nothing new published)', () => {
    const ledger: Ledger = {
      holds: { 'cordon.node-1.aaaaaaaaaaaa': { requester: 'kubectl (cordon)', origin: 'cordon', since: CORDONED_AT } },
      released: {},
      changes: { priorUnschedulable: true, cordoned: false, annotations: {}, taints: [] },
    };
    const moved = node({ unschedulable: true, time: '2026-11-21T12:00:00Z', ledger });
    assert.equal(planCordon(moved, ALL).cordoned, undefined, 'a later write by the same manager starts nothing');
  });

  it("the uncordon ends the ledger's cordon request, with the same requestId", () => {
    const ledger: Ledger = {
      holds: { 'cordon.node-1.aaaaaaaaaaaa': { requester: 'kubectl (cordon)', origin: 'cordon', since: CORDONED_AT } },
      released: {},
      changes: { priorUnschedulable: true, cordoned: false, annotations: {}, taints: [] },
      outOfBandUncordonAt: CORDONED_AT,
    };
    assert.deepEqual(
      planCordon(node({ ledger }), ALL).uncordoned.map((r) => r.requestId),
      ['cordon.node-1.aaaaaaaaaaaa'],
    );
    assert.deepEqual(planCordon(node({ ledger }), OFF).uncordoned.length, 1, 'even with the feature turned off since');
  });

  it('an uncordon before admission ends the cordon this process published (remembered)', () => {
    const plan = planCordon(node({}), ALL, 'cordon.node-1.bbbbbbbbbbbb');
    assert.deepEqual(
      plan.uncordoned.map((r) => r.requestId),
      ['cordon.node-1.bbbbbbbbbbbb'],
    );
    const released: Ledger = { holds: {}, released: { 'cordon.node-1.bbbbbbbbbbbb': CORDONED_AT } };
    assert.deepEqual(
      planCordon(node({ ledger: released }), ALL, 'cordon.node-1.bbbbbbbbbbbb').uncordoned,
      [],
      'already restored',
    );
  });

  it('a schedulable node with nothing held for a cordon publishes nothing', () => {
    assert.deepEqual(planCordon(node({}), ALL), { uncordoned: [], why: 'schedulable, nothing held for a cordon' });
  });
});
