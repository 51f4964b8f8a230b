/**
 * `drainbridge forwarder`'s and the node agent's drain flags travel on the events that start an
 * evacuation (lib/sources/forwarder/drain-outlet.ts, lib/sources/clouds/policy.ts policyWithDrain).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseNoticePolicy } from '../../../lib/sources/clouds/config.ts';
import { DEFAULT_NOTICE_POLICY, policyWithDrain } from '../../../lib/sources/clouds/policy.ts';
import { drainOptionsOutlet, withDrainOptions } from '../../../lib/sources/forwarder/drain-outlet.ts';
import type { ForwardedEvent } from '../../../lib/sources/types.ts';

const seen = { version: '1' as const, requestId: 'cordon.node-1.0123456789ab', requester: 'kubectl' };
const cordoned: ForwardedEvent = {
  detailType: 'Node Cordoned',
  key: 'cordon/node-1',
  detail: { ...seen, target: { nodeName: 'node-1' }, observedAt: '2026-11-21T10:00:00Z' },
};
const uncordoned: ForwardedEvent = { ...cordoned, detailType: 'Node Uncordoned' };
const nodeMaintenance: ForwardedEvent = {
  detailType: 'Maintenance Requested',
  key: 'node-maintenance/uid-1',
  detail: {
    ...seen,
    origin: 'node-maintenance',
    target: { nodeName: 'node-1' },
    reason: 'NodeMaintenance nm-1',
    drain: { force: true, deleteEmptyDirData: true, ignoreDaemonSets: true },
  },
};

describe('the forwarder lays its drain flags on the events that start an evacuation', () => {
  it('Node Cordoned gets them', () => {
    assert.deepEqual((withDrainOptions(cordoned, { force: true }).detail as { drain?: unknown }).drain, {
      force: true,
    });
  });

  it("Maintenance Requested: they win over the source's own options, which stay where not set", () => {
    const detail = withDrainOptions(nodeMaintenance, { force: false }).detail as { drain?: unknown };
    assert.deepEqual(detail.drain, { force: false, deleteEmptyDirData: true, ignoreDaemonSets: true });
  });

  it('other events pass unchanged; no flags: the outlet is passed through', () => {
    assert.equal(withDrainOptions(uncordoned, { force: true }), uncordoned);
    const offered: ForwardedEvent[] = [];
    const outlet = { offer: (event: ForwardedEvent) => offered.push(event) };
    assert.equal(drainOptionsOutlet(outlet, {}), outlet);
    drainOptionsOutlet(outlet, { gracePeriodSeconds: 5 }).offer(cordoned);
    assert.equal(offered.length, 1);
    assert.deepEqual((offered[0] as ForwardedEvent).detail, { ...cordoned.detail, drain: { gracePeriodSeconds: 5 } });
  });
});

describe("the node agent's drain flags go under each notice rule's own", () => {
  it('every rule carries them; a DRAINBRIDGE_NOTICE_POLICY override for one type wins', () => {
    const overridden = parseNoticePolicy('{"aws":{"instance-reboot":{"drain":{"force":false}}}}');
    assert.ok(!Array.isArray(overridden));
    const policy = policyWithDrain(overridden, { force: true, gracePeriodSeconds: 20 });
    assert.deepEqual(policy.aws['spot-interruption'].drain, { force: true, gracePeriodSeconds: 20 });
    assert.deepEqual(policy.aws['instance-reboot'].drain, { force: false, gracePeriodSeconds: 20 });
    assert.deepEqual(policy.azure.Reboot.drain, { force: true, gracePeriodSeconds: 20 });
    assert.equal(policy.gcp['upcoming-maintenance'].action, 'evacuate', 'the rest of the rule is kept');
    assert.equal(policyWithDrain(DEFAULT_NOTICE_POLICY, {}), DEFAULT_NOTICE_POLICY);
  });
});
