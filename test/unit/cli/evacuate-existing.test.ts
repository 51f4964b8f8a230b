/** A second `drainbridge evacuate` of a node: follow, resume or run (cli/commands/evacuate-existing.ts). Pure. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Node } from '@kubernetes/client-node';
import { type ExistingFacts, planExisting } from '../../../cli/commands/evacuate-existing.ts';
import type { EvacuationObject } from '../../../lib/clients/kube/paths.ts';
import { LEDGER_ANNOTATION } from '../../../lib/node/ledger.ts';
import { OWNER_ANNOTATION } from '../../../lib/workflow/owner-record.ts';

const NOW = new Date('2030-01-10T12:00:00.000Z');
const ago = (seconds: number) => new Date(NOW.getTime() - seconds * 1000).toISOString();
const EXECUTION = 'arn:aws:states:local:000000000000:execution:drainbridge-evacuate:e-1';

function node(holds: readonly string[]): V1Node {
  const ledger = {
    holds: Object.fromEntries(holds.map((id) => [id, { requester: 'alice', origin: 'manual', since: ago(300) }])),
    released: {},
    changes: { priorUnschedulable: false, cordoned: true, annotations: {}, taints: [] },
  };
  return {
    metadata: { name: 'node-1', annotations: { [LEDGER_ANNOTATION]: JSON.stringify(ledger) } },
    spec: { unschedulable: holds.length > 0 },
  };
}

function record(
  requestId: string,
  status: EvacuationObject['status'],
  owner?: Record<string, string>,
): EvacuationObject {
  return {
    apiVersion: 'drainbridge.io/v1alpha1',
    kind: 'Evacuation',
    metadata: { name: requestId, annotations: owner ? { [OWNER_ANNOTATION]: JSON.stringify(owner) } : {} },
    spec: {
      requestId,
      nodeName: 'node-1',
      requester: 'alice',
      origin: 'manual',
      reason: 'kernel',
      drain: { ignoreDaemonSets: true },
    },
    status,
  };
}

function facts(more: Partial<ExistingFacts>): ExistingFacts {
  return {
    node: node([]),
    records: [],
    requestId: 'manual-node-1-new',
    explicitId: false,
    drainFlags: false,
    now: NOW,
    ...more,
  };
}

const live = { executionId: EXECUTION, seen: ago(5), driver: '4242@host-a' };
const draining = { phase: 'NodeDraining' };

describe('planExisting', () => {
  it('runs as asked when no request holds the node', () => {
    assert.deepEqual(planExisting(facts({})), { action: 'run' });
  });

  it('follows a request under way that a live execution drives: no second hold', () => {
    const decision = planExisting(facts({ node: node(['r-1']), records: [record('r-1', draining, live)] }));
    assert.equal(decision.action, 'follow');
    assert.equal(decision.action === 'follow' ? decision.record.spec.requestId : '', 'r-1');
  });

  it('follows (to its outcome) a request that evacuated the node already', () => {
    const decision = planExisting(facts({ node: node(['r-1']), records: [record('r-1', { phase: 'NodeDrained' })] }));
    assert.equal(decision.action, 'follow');
  });

  it('resumes a request nobody drives (handed back on Ctrl-C), with the drain options it began with', () => {
    const released = { ...live, released: ago(30) };
    const decision = planExisting(facts({ node: node(['r-1']), records: [record('r-1', draining, released)] }));
    assert.equal(decision.action, 'resume');
    if (decision.action !== 'resume') return;
    assert.equal(decision.detail.requestId, 'r-1');
    assert.deepEqual(decision.detail.drain, { ignoreDaemonSets: true });
    assert.equal(decision.driving.state, 'abandoned');
  });

  it('starts a new request where the Restore of the holding one began', () => {
    const restoring = { ...draining, restore: { startedAt: ago(10) } };
    assert.deepEqual(planExisting(facts({ node: node(['r-1']), records: [record('r-1', restoring, live)] })), {
      action: 'run',
    });
  });

  it('with --request-id: runs that request as asked; one it knows, without drain flags, as its record has it', () => {
    const held = { node: node(['r-1']), records: [record('r-1', draining, live)] };
    assert.deepEqual(planExisting(facts({ ...held, requestId: 'r-2', explicitId: true })), { action: 'run' });
    const again = planExisting(facts({ ...held, requestId: 'r-1', explicitId: true }));
    assert.equal(again.action === 'run' ? again.detail?.drain?.ignoreDaemonSets : undefined, true);
    const flagged = planExisting(facts({ ...held, requestId: 'r-1', explicitId: true, drainFlags: true }));
    assert.deepEqual(flagged, { action: 'run' }, 'drain flags on the line win');
  });
});
