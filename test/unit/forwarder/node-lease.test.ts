/**
 * medik8s's node Lease as NMO takes it (lease.ts, node-lease.ts) and NMO's rules around it (lease-gate.ts):
 * facts from medik8s/common pkg/lease/manager.go and NMO's internal/controller/nodemaintenance_controller.go.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Lease, V1Node } from '@kubernetes/client-node';
import { errorForStatus } from '../../../lib/clients/kube/errors.ts';
import { nodeLeaseRecord, nodeLeaseState } from '../../../lib/sources/node-maintenance/lease.ts';
import { leaseVerdict, leaseWanted } from '../../../lib/sources/node-maintenance/lease-gate.ts';
import {
  type NodeLeaseCalls,
  releaseNodeLease,
  requestNodeLease,
} from '../../../lib/sources/node-maintenance/node-lease.ts';

const NOW = new Date('2026-11-28T07:00:00Z');
const node: V1Node = { metadata: { name: 'Node-A', uid: 'uid-a' } };
const lease = (holder: string, renewed: Date, seconds = 3600, extra: Partial<V1Lease['spec']> = {}): V1Lease => ({
  metadata: { name: 'node-node-a', namespace: 'medik8s-leases', resourceVersion: '7' },
  spec: { holderIdentity: holder, renewTime: renewed, leaseDurationSeconds: seconds, ...extra },
});
const ago = (s: number) => new Date(NOW.getTime() - s * 1000);

describe('the node Lease (medik8s/common lease manager)', () => {
  it('isValidLease: another holder is valid until renewTime + duration, not with a renewTime ahead', () => {
    assert.deepEqual(nodeLeaseState(undefined, NOW), { kind: 'absent' });
    assert.deepEqual(nodeLeaseState(lease('node-maintenance', ago(7200)), NOW), { kind: 'ours' });
    assert.deepEqual(nodeLeaseState(lease('self-node-remediation', ago(10), 60), NOW), {
      kind: 'held',
      holder: 'self-node-remediation',
      until: new Date(NOW.getTime() + 50_000),
    });
    assert.deepEqual(nodeLeaseState(lease('self-node-remediation', ago(61), 60), NOW), { kind: 'lapsed' });
    assert.deepEqual(nodeLeaseState(lease('self-node-remediation', new Date(NOW.getTime() + 1000)), NOW), {
      kind: 'lapsed',
    });
  });

  it('the record: node-<name> lower case, owned by the Node; a takeover counts a transition, a renewal keeps the acquire time', () => {
    const created = nodeLeaseRecord(node, undefined, NOW);
    assert.equal(created.metadata?.name, 'node-node-a');
    assert.deepEqual(created.metadata?.ownerReferences, [
      { apiVersion: 'v1', kind: 'Node', name: 'Node-A', uid: 'uid-a' },
    ]);
    assert.equal(created.spec?.holderIdentity, 'node-maintenance');
    assert.equal(created.spec?.leaseDurationSeconds, 3600);
    assert.equal(created.spec?.leaseTransitions, 0);
    const taken = nodeLeaseRecord(node, lease('snr', ago(7200), 60, { leaseTransitions: 2 }), NOW);
    assert.equal(taken.spec?.leaseTransitions, 3);
    assert.equal(taken.spec?.acquireTime, NOW);
    assert.equal(taken.metadata?.resourceVersion, '7', 'conditional on the version read');
    const renewed = nodeLeaseRecord(node, lease('node-maintenance', ago(100), 3600, { acquireTime: ago(500) }), NOW);
    assert.deepEqual(renewed.spec?.acquireTime, ago(500));
    assert.equal(renewed.spec?.renewTime, NOW);
  });

  it('RequestLease: another valid holder is reported and nothing written; a refused call names the repair', async () => {
    const writes: string[] = [];
    const calls = (read: V1Lease | undefined, fail?: Error): NodeLeaseCalls => ({
      getLease: async () => {
        if (fail) throw fail;
        if (!read) throw errorForStatus('get lease', { code: 404, reason: 'NotFound', message: 'gone', causes: [] });
        return read;
      },
      createLease: async (_ns, l) => {
        writes.push(`create ${l.metadata?.name}`);
        return l;
      },
      replaceLease: async (_ns, l) => {
        writes.push(`replace ${l.metadata?.name}`);
        return l;
      },
      deleteLease: async (_ns, name, rv) => writes.push(`delete ${name} at ${rv}`),
    });
    const held = await requestNodeLease(calls(lease('self-node-remediation', ago(10))), node, NOW);
    assert.equal(held.kind, 'held');
    assert.deepEqual(writes, []);
    assert.deepEqual(await requestNodeLease(calls(undefined), node, NOW), { kind: 'taken' });
    assert.deepEqual(await requestNodeLease(calls(lease('node-maintenance', ago(10))), node, NOW), { kind: 'taken' });
    assert.deepEqual(writes, ['create node-node-a', 'replace node-node-a']);
    const forbidden = errorForStatus('get lease', { code: 403, reason: 'Forbidden', message: 'no', causes: [] });
    const refused = await requestNodeLease(calls(undefined, forbidden), node, NOW);
    assert.equal(refused.kind, 'failed');
    assert.match(refused.kind === 'failed' ? refused.error : '', /Role drainbridge-node-leases/);

    writes.length = 0;
    await releaseNodeLease(calls(lease('self-node-remediation', ago(10))), 'Node-A', NOW);
    await releaseNodeLease(calls(undefined), 'Node-A', NOW);
    assert.deepEqual(writes, [], "another holder's Lease and an absent one are left alone");
    await releaseNodeLease(calls(lease('node-maintenance', ago(10))), 'Node-A', NOW);
    assert.deepEqual(writes, ['delete node-node-a at 7']);
  });
});

describe("NMO's Lease rules (lease-gate.ts)", () => {
  const held = { kind: 'held', holder: 'self-node-remediation', until: NOW } as const;
  const failed = { kind: 'failed', error: 'get lease: 403 Forbidden: no' } as const;

  it('before the request: held waits with the count unchanged; a failure counts; above 3, Failed and no longer asked', () => {
    assert.deepEqual(leaseVerdict({ phase: 'Running' }, held, false), {
      proceed: false,
      status: {
        phase: 'Running',
        lastError:
          "failed to obtain a lease that is not owned by us : can't update or invalidate the lease because it is held by different owner: self-node-remediation errorOnLeaseCount 0",
      },
    });
    assert.deepEqual(leaseVerdict({ errorOnLeaseCount: 2 }, failed, false), {
      proceed: false,
      status: { phase: 'Running', lastError: failed.error, errorOnLeaseCount: 3 },
    });
    assert.equal(leaseWanted({ errorOnLeaseCount: 3 }), true);
    assert.equal(leaseWanted({ errorOnLeaseCount: 4 }), false);
    assert.deepEqual(leaseVerdict({ errorOnLeaseCount: 4 }, undefined, false), {
      proceed: false,
      status: { phase: 'Failed', lastError: 'maintenance failed: lease could not be extended after 4 attempts' },
    });
    assert.deepEqual(leaseVerdict({ errorOnLeaseCount: 2 }, { kind: 'taken' }, false), {
      proceed: true,
      overlay: { errorOnLeaseCount: 0 },
    });
  });

  it("once the request is out (NMO's controller): each held or failed request counts; above 3, the maintenance ends, Failed", () => {
    const lost = leaseVerdict({ phase: 'Succeeded', errorOnLeaseCount: 1 }, held, true);
    assert.equal(lost.proceed, true);
    assert.equal(lost.end, undefined, 'the maintenance goes on while the count is 3 or less');
    assert.deepEqual(lost.overlay, {
      lastError:
        "failed to extend a lease that used to be owned by us, incrementing error on lease count: can't update or invalidate the lease because it is held by different owner: self-node-remediation, errorOnLeaseCount: 2",
      errorOnLeaseCount: 2,
    });
    assert.deepEqual(leaseVerdict({ errorOnLeaseCount: 3 }, failed, true).overlay, {
      lastError: failed.error,
      errorOnLeaseCount: 4,
    });
    assert.deepEqual(leaseVerdict({ errorOnLeaseCount: 4 }, undefined, true), {
      proceed: false,
      end: true,
      status: { phase: 'Failed', lastError: 'maintenance failed: lease could not be extended after 4 attempts' },
    });
    assert.deepEqual(leaseVerdict({ errorOnLeaseCount: 3 }, { kind: 'taken' }, true), {
      proceed: true,
      overlay: { errorOnLeaseCount: 0 },
    });
  });
});
