import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { V1Node } from '@kubernetes/client-node';
import { newRefusals } from '../../../lib/branches/pods/tracking.ts';
import { buildNodeEvent } from '../../../lib/node/kube-events.ts';
import { matchTarget, providerIdMatches } from '../../../lib/node/resolve.ts';
import { newEvacuation, summarise } from '../../../lib/progress/evacuation-store.ts';
import { NOW } from '../drain/fixtures.ts';

const nodes: V1Node[] = [
  { metadata: { name: 'a' }, spec: { providerID: 'aws:///eu-west-1a/i-0abc' } },
  { metadata: { name: 'b' }, spec: { providerID: 'openstack:///6b1f6c8e-0002' } },
  { metadata: { name: 'c' }, spec: { providerID: 'gce://project/zone/vm-c' } },
  // As Alibaba Cloud's cloud-controller-manager writes it (kubernetes/cloud-provider-alibaba-cloud, NodeFromProviderID).
  { metadata: { name: 'd' }, spec: { providerID: 'alicloud://cn-hangzhou.i-bp1dd0000000000000a' } },
];

describe('target resolution (pure)', () => {
  const cases: [string, Parameters<typeof matchTarget>[1], string[]][] = [
    ['by name', { nodeName: 'b' }, ['b']],
    ['by providerID', { providerID: 'aws:///eu-west-1a/i-0abc' }, ['a']],
    ['by AWS instance id', { instance: { provider: 'aws', id: 'i-0abc' } }, ['a']],
    ['by OpenStack server id', { instance: { provider: 'openstack', id: '6b1f6c8e-0002' } }, ['b']],
    ['by GCE instance name', { instance: { provider: 'gcp', id: 'vm-c' } }, ['c']],
    ['by Alibaba Cloud ECS instance id', { instance: { provider: 'alibaba', id: 'i-bp1dd0000000000000a' } }, ['d']],
    ['an Alibaba region is no instance id', { instance: { provider: 'alibaba', id: 'cn-hangzhou' } }, []],
    ['wrong cloud matches nothing', { instance: { provider: 'azure', id: 'i-0abc' } }, []],
  ];
  for (const [title, target, expected] of cases) {
    test(title, () => {
      assert.deepEqual(
        matchTarget(nodes, target).map((n) => n.metadata?.name),
        expected,
      );
    });
  }
  test('providerIdMatches compares the last path segment only', () => {
    assert.equal(providerIdMatches('aws:///zone/i-1', 'aws', 'i-1'), true);
    assert.equal(providerIdMatches('aws:///zone/i-10', 'aws', 'i-1'), false);
    assert.equal(providerIdMatches('alicloud://cn-hangzhou.i-1', 'alibaba', 'i-1'), true);
    assert.equal(providerIdMatches('alicloud://i-1', 'alibaba', 'i-1'), false, 'no region: not the documented form');
    assert.equal(providerIdMatches('aws:///zone/cn-hangzhou.i-1', 'alibaba', 'i-1'), false, 'another scheme');
  });
});

describe('node events', () => {
  test('involve the node by name and uid, in the default namespace', () => {
    const event = buildNodeEvent(
      { metadata: { name: 'a', uid: 'u' } },
      { reason: 'OutOfBandUncordon', message: 'm', type: 'Warning' },
      NOW,
    );
    assert.equal(event.metadata.namespace, 'default');
    assert.deepEqual(event.involvedObject, { apiVersion: 'v1', kind: 'Node', name: 'a', uid: 'u' });
    assert.equal(event.type, 'Warning');
    assert.equal(event.source?.component, 'drainbridge');
  });
});

describe('progress record summary', () => {
  test('sums branches and keeps the first blocker for the printer columns', () => {
    const status = summarise({
      branches: {
        pods: { version: '3', state: {}, moved: 2, total: 5, blockers: ['pod x is blocked'] },
        nova: { version: '1', state: {}, moved: 1, total: 1, blockers: [] },
      },
    });
    assert.deepEqual(
      [status.moved, status.total, status.blockerCount, status.firstBlocker],
      [3, 6, 1, 'pod x is blocked'],
    );
    assert.equal(summarise({ ...status, branches: {} }).firstBlocker, undefined);
  });

  test('a new record is named after the request and labelled with the node', () => {
    const record = newEvacuation({ requestId: 'Req_1', nodeName: 'n1' });
    assert.match(record.metadata.name, /^req-1-[0-9a-f]{8}$/);
    assert.equal(record.metadata.labels?.['drainbridge.io/node'], 'n1');
  });
});

describe('newRefusals', () => {
  test('announces a refusal once, and again only when it changes', () => {
    const blocked = { name: 'p', attempts: 1, blocker: { code: 'DisruptionBudget' as const, reason: 'r1' } };
    const before = { pods: {}, moved: {} };
    const after = { pods: { u: blocked }, moved: {} };
    assert.equal(newRefusals(before, after).length, 1);
    assert.equal(newRefusals(after, { pods: { u: { ...blocked, attempts: 2 } }, moved: {} }).length, 0);
    assert.equal(
      newRefusals(after, { pods: { u: { ...blocked, blocker: { code: 'Other' as const, reason: 'r2' } } }, moved: {} })
        .length,
      1,
    );
  });
});
