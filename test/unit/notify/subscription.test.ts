/**
 * The subscription's bookkeeping: started once per evacuation, blocked only after the block outlasts T
 * and once per blocked spell (a pass clearing the blockers re-arms it), nothing blocked after the end,
 * and the circuit breaker's `Admission Paused` told when it is published.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  ADMISSION_PAUSED,
  ADMISSION_RESUMED,
  type Notification,
  NotificationSubscription,
} from '../../../lib/notify/index.ts';
import { waitUntil } from '../../support/wait.ts';

const progress = (phase: string) => ({
  version: '1',
  requestId: 'r-1',
  executionId: 'e-1',
  nodeName: 'node-2',
  phase,
  progress: {},
  blockers: [],
});
const blockedPass = {
  executionId: 'e-1',
  functionKey: 'pass',
  error: {
    name: 'NotYetDone',
    message: 'pods: 1/3 moved, 0 in flight; blocked: pod shop/web-1: PDB web allows no disruption',
  },
};
const clearPass = {
  executionId: 'e-1',
  functionKey: 'pass',
  output: { branch: 'pods', blockers: [], progressed: true },
};

function subscribed(blockedAfterMs: number): { sent: Notification[]; subscription: NotificationSubscription } {
  const sent: Notification[] = [];
  return { sent, subscription: new NotificationSubscription((n) => sent.push(n), blockedAfterMs) };
}

describe('NotificationSubscription', () => {
  it('started once, blocked after T naming the blocker, once per spell, then succeeded', async () => {
    const { sent, subscription } = subscribed(50);
    subscription.onBusEvent('Evacuation Progress', progress('NodeCordoning'));
    subscription.onBusEvent('Evacuation Progress', progress('NodeDraining'));
    subscription.onTask(blockedPass);
    assert.deepEqual(
      sent.map((n) => n.event),
      ['EvacuationStarted'],
      'not blocked before T',
    );
    await waitUntil('blocked told', () => sent.some((n) => n.event === 'EvacuationBlocked'), 2000);
    const blocked = sent.find((n) => n.event === 'EvacuationBlocked');
    assert.equal(blocked?.node, 'node-2');
    assert.deepEqual(blocked?.blockers, ['pod shop/web-1: PDB web allows no disruption']);
    subscription.onTask(blockedPass);
    await new Promise((resolve) => setTimeout(resolve, 120));
    assert.equal(sent.filter((n) => n.event === 'EvacuationBlocked').length, 1, 'one message per blocked spell');
    subscription.onTask(clearPass);
    subscription.onBusEvent('Evacuation Succeeded', { requestId: 'r-1', executionId: 'e-1', nodeName: 'node-2' });
    assert.deepEqual(
      sent.map((n) => n.event),
      ['EvacuationStarted', 'EvacuationBlocked', 'EvacuationSucceeded'],
    );
    subscription.stop();
  });

  it('a block cleared before T is never told', async () => {
    const { sent, subscription } = subscribed(80);
    subscription.onBusEvent('Evacuation Progress', progress('NodeDraining'));
    subscription.onTask(blockedPass);
    subscription.onTask(clearPass);
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.deepEqual(
      sent.map((n) => n.event),
      ['EvacuationStarted'],
    );
    subscription.stop();
  });

  it('failed carries the error and the blockers; Admission Paused is told with its reason', () => {
    const { sent, subscription } = subscribed(1000);
    subscription.onBusEvent('Evacuation Failed', {
      requestId: 'r-2',
      executionId: 'e-2',
      nodeName: 'node-3',
      phase: 'NodeDraining',
      error: { name: 'BarePod', message: 'bare pod shop/lonely' },
      blockers: [{ code: 'BarePod', reason: 'pod shop/lonely has no controller' }],
    });
    subscription.onBusEvent(ADMISSION_PAUSED, { reason: '3 evacuations failed within 1h' });
    assert.equal(sent[0]?.event, 'EvacuationFailed');
    assert.equal(sent[0]?.reason, 'bare pod shop/lonely');
    assert.deepEqual(sent[0]?.blockers, ['pod shop/lonely has no controller']);
    assert.equal(sent[1]?.event, 'AdmissionPaused');
    assert.equal(sent[1]?.reason, '3 evacuations failed within 1h');
  });

  it('Admission Resumed is told with who resumed it and why admission had paused, naming no request', () => {
    const { sent, subscription } = subscribed(1000);
    subscription.onBusEvent(ADMISSION_RESUMED, {
      version: '1',
      requestId: 'admission-resumed.1795860000000',
      requester: 'alice@host',
      resumedAt: '2026-11-28T12:40:00Z',
      pausedAt: '2026-11-28T12:00:00Z',
      reason: '2 evacuations failed within 1d',
    });
    assert.equal(sent.length, 1);
    assert.equal(sent[0]?.event, 'AdmissionResumed');
    assert.equal(sent[0]?.requestId, '');
    assert.equal(sent[0]?.reason, 'by alice@host (paused since 2026-11-28T12:00:00Z: 2 evacuations failed within 1d)');
  });
});
