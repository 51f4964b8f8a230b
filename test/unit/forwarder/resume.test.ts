/** What a restarted `drainbridge run` resumes (lib/workflow/resume.ts), and its settings. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Node } from '@kubernetes/client-node';
import { isOtherRunExecution } from '../../../embedded/run/run.ts';
import type { EvacuationObject } from '../../../lib/clients/kube/paths.ts';
import { LEDGER_ANNOTATION } from '../../../lib/node/ledger.ts';
import { loadForwarderSettings } from '../../../lib/sources/forwarder/settings.ts';
import { planResume } from '../../../lib/workflow/resume.ts';

const record = (status: EvacuationObject['status']): EvacuationObject => ({
  apiVersion: 'drainbridge.io/v1alpha1',
  kind: 'Evacuation',
  metadata: { name: 'req-1' },
  spec: {
    requestId: 'req-1',
    nodeName: 'node-1',
    requester: 'ops',
    origin: 'cordon',
    reason: 'r',
    drain: { ignoreDaemonSets: true },
  },
  status,
});
const held: V1Node = {
  metadata: {
    name: 'node-1',
    annotations: {
      [LEDGER_ANNOTATION]: JSON.stringify({
        holds: { 'req-1': { requester: 'ops', origin: 'cordon', since: '2026-11-25T04:00:00Z' } },
        released: {},
      }),
    },
  },
};
const free: V1Node = { metadata: { name: 'node-1' } };

describe('planResume', () => {
  it('issue 12 item 1: a node whose ledger cannot be read resumes nothing and says to repair', () => {
    const damaged: V1Node = { metadata: { name: 'node-1', annotations: { [LEDGER_ANNOTATION]: '[]' } } };
    const decision = planResume(record({ phase: 'NodeDraining' }), damaged);
    assert.equal(decision.action, 'none');
    assert.match(decision.action === 'none' ? decision.why : '', /drainbridge repair node-1/);
  });

  it('an unfinished evacuation holding its node is resumed with the same request and drain options', () => {
    const decision = planResume(record({ phase: 'NodeDraining' }), held);
    assert.equal(decision.action, 'evacuate');
    if (decision.action !== 'evacuate') return;
    assert.equal(decision.detail.requestId, 'req-1');
    assert.equal(decision.detail.origin, 'cordon');
    assert.deepEqual(decision.detail.drain, { ignoreDaemonSets: true });
  });

  it('ended or released evacuations are left alone; an interrupted Restore is run again', () => {
    assert.equal(planResume(record({ phase: 'NodeDrained' }), held).action, 'none');
    assert.equal(planResume(record({ phase: 'NodeDraining' }), free).action, 'none');
    assert.equal(planResume(record({ phase: 'NodeDrained', restore: { startedAt: 'x' } }), free).action, 'restore');
    assert.equal(
      planResume(record({ phase: 'NodeDrained', restore: { startedAt: 'x', finishedAt: 'y' } }), free).action,
      'none',
    );
    assert.equal(planResume(record({ phase: 'NodeDraining' }), undefined).action, 'none');
  });

  it('a request waiting for its start (not admitted) is resumed with its notBefore, unless it ended meanwhile', () => {
    const waiting = record({ phase: 'MaintenanceScheduled' });
    waiting.spec.notBefore = '2026-11-22T02:00:00Z';
    const decision = planResume(waiting, free);
    assert.equal(decision.action, 'evacuate');
    if (decision.action === 'evacuate') assert.equal(decision.detail.notBefore, '2026-11-22T02:00:00Z');
    const ended: V1Node = {
      metadata: {
        name: 'node-1',
        annotations: { [LEDGER_ANNOTATION]: JSON.stringify({ holds: {}, released: { 'req-1': 'x' } }) },
      },
    };
    assert.equal(planResume(waiting, ended).action, 'none');
  });

  it('issue 24: a cordon or window request that waited for a slot is resumed (admission ends it if its cordon is gone, its window closed); not once it ended', () => {
    const waiting = record({ branches: {} });
    const decision = planResume(waiting, free);
    assert.equal(decision.action, 'evacuate');
    if (decision.action === 'evacuate') assert.equal(decision.detail.origin, 'cordon');
    const withdrawn = record({ branches: {}, endedAt: 'x', outcome: 'withdrawn', outcomeReason: 'r' });
    assert.equal(planResume(withdrawn, free).action, 'none');
    const windowed = record({ branches: {} });
    windowed.spec.origin = 'schedule';
    assert.equal(planResume(windowed, free).action, 'none', 'a record that does not keep its window');
    const window = {
      name: 'w',
      opensAt: '2026-11-22T02:00:00Z',
      closesAt: '2026-11-22T04:00:00Z',
      maxNodes: 1,
      endsOn: 'operator' as const,
    };
    windowed.spec.window = window;
    const resumed = planResume(windowed, free);
    assert.equal(resumed.action, 'evacuate');
    if (resumed.action === 'evacuate') assert.deepEqual(resumed.detail.window, window, 'resumed within its window');
    const released: V1Node = {
      metadata: {
        name: 'node-1',
        annotations: { [LEDGER_ANNOTATION]: JSON.stringify({ holds: {}, released: { 'req-1': 'x' } }) },
      },
    };
    assert.equal(planResume(waiting, released).action, 'none');
  });

  it("a NodeMaintenance or cloud notice request that waited in line is resumed too; a CLI user's is not", () => {
    // Their sources take a request with a record as out and do not ask again: after a failover it waited
    // for ever (soak seed 342527).
    for (const origin of ['node-maintenance', 'gcp', 'aws', 'azure', 'alibaba'] as const) {
      const waiting = record({ branches: {} });
      waiting.spec.origin = origin;
      const decision = planResume(waiting, free);
      assert.equal(decision.action, 'evacuate', origin);
      if (decision.action === 'evacuate') assert.equal(decision.detail.origin, origin);
    }
    const manual = record({ branches: {} });
    manual.spec.origin = 'manual';
    assert.equal(planResume(manual, free).action, 'none', 'the CLI drives its own request');
  });

  it("only another run process's executions are taken for dead", () => {
    const arn = (name: string) => `arn:aws:states:local:000000000000:execution:drainbridge-evacuate:${name}`;
    assert.equal(isOtherRunExecution(arn('run.pod-a-1.5f'), 'pod-b-2'), true);
    assert.equal(isOtherRunExecution(arn('run.pod-b-2.5f'), 'pod-b-2'), false);
    assert.equal(isOtherRunExecution(arn('0b8c-uuid'), 'pod-b-2'), false, 'a CLI execution is not a run execution');
  });
});

describe('loadForwarderSettings', () => {
  it('defaults: cordon means evacuate off, NodeMaintenance on, refuse next to NMO', () => {
    const settings = loadForwarderSettings({});
    assert.deepEqual(settings.cordon, { enabled: false });
    assert.equal(settings.nodeMaintenance, true);
    assert.equal(settings.coexistence, 'refuse');
    assert.deepEqual(settings.metricsAddress, { host: '127.0.0.1', port: 8080 });
  });

  it('the operations endpoint: loopback on a workstation, every interface in a pod, or where asked', () => {
    assert.deepEqual(loadForwarderSettings({}).metricsAddress, { host: '127.0.0.1', port: 8080 });
    const inPod = { KUBERNETES_SERVICE_HOST: '10.96.0.1' };
    assert.deepEqual(loadForwarderSettings(inPod).metricsAddress, { host: '0.0.0.0', port: 8080 });
    const asked = { ...inPod, DRAINBRIDGE_METRICS_ADDRESS: '127.0.0.1:9090' };
    assert.deepEqual(loadForwarderSettings(asked).metricsAddress, { host: '127.0.0.1', port: 9090 });
    assert.deepEqual(loadForwarderSettings({ DRAINBRIDGE_METRICS_ADDRESS: ':9090' }).metricsAddress, {
      host: '0.0.0.0',
      port: 9090,
    });
  });

  it('names every bad value', () => {
    assert.throws(
      () =>
        loadForwarderSettings({
          DRAINBRIDGE_CORDON_EVACUATES: 'a b',
          DRAINBRIDGE_METRICS_ADDRESS: 'nope',
          DRAINBRIDGE_FORWARDER_LEASE_SECONDS: '1',
        }),
      (error: Error) =>
        /DRAINBRIDGE_CORDON_EVACUATES: must be off, all or a label selector/.test(error.message) &&
        /DRAINBRIDGE_METRICS_ADDRESS: must be host:port/.test(error.message) &&
        /DRAINBRIDGE_FORWARDER_LEASE_SECONDS: must be at least 3/.test(error.message),
    );
  });
});
