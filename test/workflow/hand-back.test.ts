/**
 * Handing a request back when a person stops its command (Ctrl-C): the owner mark goes, so the next
 * execution claims the request at once, and the waiting-queue entry goes, so the requests behind it do
 * not wait for it to expire. Against the simulator, as drainbridge's ServiceAccount.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { leaveQueue } from '../../lib/admission/index.ts';
import { ADMISSION_LEASE } from '../../lib/admission/records.ts';
import { evacuationName } from '../../lib/clients/kube/paths.ts';
import type { ResolvedRequest } from '../../lib/model/request.ts';
import { KUBECTL_DRAIN_DEFAULTS } from '../../lib/model/request.ts';
import { EvacuationProgressStore } from '../../lib/progress/evacuation-store.ts';
import { OWNER_ANNOTATION } from '../../lib/workflow/owner-record.ts';
import { reconcileOwnership, releaseOwnership } from '../../lib/workflow/ownership.ts';
import { ownerWaitMessage } from '../../lib/workflow/tasks/evacuate-steps.ts';
import { type DrainSim, startDrainSim } from '../drain/harness.ts';

const NOW = new Date('2026-11-21T10:00:00.000Z');

const request: ResolvedRequest = {
  requestId: 'hand-back-1',
  requester: 'alice@ops',
  origin: 'manual',
  target: { nodeName: 'node-1' },
  nodeName: 'node-1',
  reason: 'hand-back test',
  drain: KUBECTL_DRAIN_DEFAULTS,
};

describe('handing a request back', () => {
  let w: DrainSim;
  before(async () => {
    w = await startDrainSim('small');
    await new EvacuationProgressStore(w.client).ensure(request);
  });
  after(async () => {
    await w?.stop();
  });

  it('removes only its own owner mark; the next execution then claims at once', async () => {
    assert.equal(
      (await reconcileOwnership(w.client, request.requestId, { executionId: 'exec-a' }, NOW)).action,
      'claim',
    );
    assert.equal(await releaseOwnership(w.client, request.requestId, 'exec-b'), false, 'not exec-b’s mark');
    const waiting = await reconcileOwnership(w.client, request.requestId, { executionId: 'exec-b' }, NOW);
    assert.equal(waiting.action, 'yield');
    assert.equal(await releaseOwnership(w.client, request.requestId, 'exec-a'), true);
    const record = await w.client.getEvacuation(evacuationName(request.requestId));
    const mark = JSON.parse(record.metadata.annotations?.[OWNER_ANNOTATION] ?? '{}');
    assert.equal(mark.executionId, 'exec-a', 'the mark says who drove the request last');
    assert.ok(mark.released, 'and that it handed the request back');
    assert.equal(await releaseOwnership(w.client, request.requestId, 'exec-a'), false, 'handed back once');
    assert.equal(
      (await reconcileOwnership(w.client, request.requestId, { executionId: 'exec-b' }, NOW)).action,
      'claim',
    );
    assert.equal(
      await releaseOwnership(w.client, 'no-such-request', 'exec-b'),
      false,
      'no record: nothing to hand back',
    );
  });

  it('says what a second execution waits for, and until when', () => {
    assert.equal(
      ownerWaitMessage('r1', { executionId: 'exec-a', seen: '2026-11-21T10:00:00.000Z' }),
      'request r1 is being evacuated by execution exec-a (last seen 2026-11-21T10:00:00.000Z); waiting until it ends, or until 2026-11-21T10:02:00.000Z if it has stopped (its claim expires 120 s after it was last seen)',
    );
  });

  it('leaves the admission queue while nobody holds the mutex, and only then', async () => {
    const seen = new Date().toISOString();
    const queue = { mine: { node: 'node-2', since: seen, seen }, other: { node: 'node-3', since: seen, seen } };
    const lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: {
        name: ADMISSION_LEASE,
        namespace: 'drainbridge',
        annotations: { 'drainbridge.io/admission-queue': JSON.stringify(queue) },
      },
      spec: { leaseDurationSeconds: 15 },
    };
    await w.client.createLease('drainbridge', lease);
    assert.equal(await leaveQueue(w.client, 'drainbridge', 'mine', new Date()), true);
    const after1 = await w.client.getLease('drainbridge', ADMISSION_LEASE);
    assert.deepEqual(
      Object.keys(JSON.parse(after1.metadata?.annotations?.['drainbridge.io/admission-queue'] ?? '{}')),
      ['other'],
    );
    const now = new Date();
    await w.client.replaceLease('drainbridge', {
      ...after1,
      spec: { holderIdentity: 'someone', leaseDurationSeconds: 15, acquireTime: now, renewTime: now },
    });
    assert.equal(await leaveQueue(w.client, 'drainbridge', 'other', now), false, 'the mutex is held');
    assert.equal(await leaveQueue(w.client, 'drainbridge', 'absent', now), false);
  });
});
