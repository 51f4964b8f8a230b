/**
 * The timeline the Evacuation record keeps (lib/branches/pods/tracking.ts, lib/branches/kubevirt/progress.ts,
 * lib/branches/nova/model.ts, the store's blocker spans) and how it reads back (cli/output/timeline.ts): times
 * and waits per item, unchanged state when nothing changed (no write of its own), records without it
 * still read, a damaged one is refused, and the size stays bounded.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { timelineOf } from '../../../../cli/output/timeline.ts';
import type { KubeVirtBranchState, VmiProgress } from '../../../../lib/branches/kubevirt/model.ts';
import { withTimeline } from '../../../../lib/branches/kubevirt/progress.ts';
import { type ServerProgress, withServerTimelines } from '../../../../lib/branches/nova/model.ts';
import {
  DRAIN_STATE_FORMAT,
  type DrainState,
  INITIAL_DRAIN_STATE,
  recordHeldByBudget,
  recordOutcome,
  trackDepartures,
} from '../../../../lib/branches/pods/tracking.ts';
import { type EvacuationObject, evacuationName } from '../../../../lib/clients/kube/paths.ts';
import { followWait, TIMELINE_LIMITS } from '../../../../lib/model/timeline.ts';
import { followBlockers } from '../../../../lib/progress/evacuation-store.ts';
import { decodeRecord } from '../../../../lib/util/json-record.ts';
import { pod } from '../../drain/fixtures.ts';

const T0 = new Date('2026-11-21T03:00:00Z');
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000);

function record(branches: Record<string, { state: unknown; blockerSpans?: unknown[] }>): EvacuationObject {
  return {
    apiVersion: 'drainbridge.io/v1alpha1',
    kind: 'Evacuation',
    metadata: { name: evacuationName('r') },
    spec: { requestId: 'r', nodeName: 'node-1' },
    status: {
      phase: 'NodeDrained',
      phases: [{ phase: 'NodeCordoned', at: T0.toISOString() }],
      branches: Object.fromEntries(
        Object.entries(branches).map(([name, entry]) => [name, { version: '1', ...entry }]),
      ) as never,
    },
  };
}

describe('the pods timeline', () => {
  const web = pod({ name: 'web-1', namespace: 'shop', owner: 'ReplicaSet', uid: 'u1' });
  const budget = { pdbName: 'web', message: 'needs 5, has 5', budgets: ' (disruptionsAllowed=0)' };

  it('keeps a budget wait from–to, the eviction and the departure, in the state the pass writes', () => {
    let state = recordHeldByBudget(INITIAL_DRAIN_STATE, web, { ...budget, now: at(0) });
    const held = recordHeldByBudget(state, web, { ...budget, now: at(3) });
    assert.equal(held.pods.u1?.waits, state.pods.u1?.waits, 'the same hold again changes nothing (no write)');
    state = recordOutcome(held, web, { kind: 'evicted' }, { now: at(5) });
    state = trackDepartures(state, [], at(9)).state;
    assert.deepEqual(state.moved, { u1: 'shop/web-1' });
    assert.deepEqual(state.departures?.u1, {
      evictedAt: at(5).toISOString(),
      goneAt: at(9).toISOString(),
      waits: [
        {
          code: 'DisruptionBudget',
          budget: 'shop/web',
          from: at(0).toISOString(),
          to: at(5).toISOString(),
        },
      ],
    });
    const [row] = timelineOf(record({ pods: { state } })).items;
    assert.equal(row?.askedAt, at(5).toISOString());
    assert.equal(row?.goneAt, at(9).toISOString());
    assert.equal(row?.waits[0]?.budget, 'shop/web');
  });

  it('reads a record written before the timeline was kept: moved pods have names, no times', () => {
    const old = { pods: {}, moved: { u1: 'shop/web-1' } };
    const read = decodeRecord(old, DRAIN_STATE_FORMAT);
    assert.equal(read.status, 'ok');
    const [row] = timelineOf(record({ pods: { state: old } })).items;
    assert.deepEqual(
      { name: row?.name, state: row?.state, askedAt: row?.askedAt, goneAt: row?.goneAt },
      { name: 'shop/web-1', state: 'gone', askedAt: undefined, goneAt: undefined },
    );
  });

  it('refuses a damaged timeline (schema-checked) and says which branch the report leaves out', () => {
    const damaged = { pods: {}, moved: {}, departures: { u1: { goneAt: 'yesterday' } } };
    assert.equal(decodeRecord(damaged, DRAIN_STATE_FORMAT).status, 'unreadable');
    const timeline = timelineOf(record({ pods: { state: damaged } }));
    assert.equal(timeline.items.length, 0);
    assert.match(timeline.unreadable[0] ?? '', /departures\.u1\.goneAt/);
  });

  it('stays under three quarters of the 1.5 MiB of an object with 1,000 pods, each with the most waits kept', () => {
    const departures: Record<string, NonNullable<DrainState['departures']>[string]> = {};
    const moved: Record<string, string> = {};
    for (let index = 0; index < 1_000; index++) {
      let waits = followWait(undefined, undefined, at(0).toISOString());
      for (let round = 0; round < 20; round++) {
        // The worst: refusals with long sentences between budget holds.
        const reason = `eviction of pod shop/web-${index} refused: ${'x'.repeat(400)}`;
        const wait = round % 2 === 0 ? { code: 'Other', reason } : { code: 'DisruptionBudget', budget: 'shop/web' };
        waits = followWait(waits, wait, at(round).toISOString());
      }
      const uid = `0f8fad5b-d9cb-469f-a165-70867728${String(index).padStart(4, '0')}`;
      moved[uid] = `shop/web-787cdcbd95-${String(index).padStart(5, '0')}`;
      departures[uid] = { evictedAt: at(30).toISOString(), goneAt: at(40).toISOString(), waits: waits ?? [] };
      assert.equal(waits?.length, TIMELINE_LIMITS.spansPerItem);
    }
    const bytes = Buffer.byteLength(JSON.stringify({ pods: {}, moved, departures }));
    assert.ok(bytes < 1_536 * 1024 * 0.75, `${bytes} bytes`);
  });
});

describe('VMs and servers', () => {
  const vmi = (status: VmiProgress['status'], more: Partial<VmiProgress> = {}): KubeVirtBranchState => ({
    vmis: { v1: { name: 'vms/db', strategy: 'LiveMigrate', status, attempts: 1, sourceNode: 'node-1', ...more } },
  });

  it('a VMI: asked and gone when drainbridge saw it (its own clock, not KubeVirt’s), its retry wait from–to', () => {
    // KubeVirt's timestamps (the cluster's clock) are off by seconds from drainbridge's: not used.
    let state = withTimeline({ vmis: {} }, vmi('migrating', { startedAt: at(-30).toISOString() }), at(1));
    assert.equal(state.vmis.v1?.askedAt, at(1).toISOString());
    state = withTimeline(
      state,
      { vmis: { v1: { ...(state.vmis.v1 as VmiProgress), status: 'retry-wait', lastFailure: 'boom' } } },
      at(4),
    );
    const again = withTimeline(state, state, at(6));
    assert.equal(again, state, 'nothing changed: the same state (no write)');
    state = withTimeline(
      state,
      {
        vmis: {
          v1: {
            ...(state.vmis.v1 as VmiProgress),
            status: 'moved',
            targetNode: 'node-3',
            endedAt: at(40).toISOString(),
          },
        },
      },
      at(21),
    );
    const [row] = timelineOf(record({ kubevirt: { state } })).items;
    assert.deepEqual(
      { kind: row?.kind, askedAt: row?.askedAt, goneAt: row?.goneAt, source: row?.source, target: row?.target },
      { kind: 'vmi', askedAt: at(1).toISOString(), goneAt: at(21).toISOString(), source: 'node-1', target: 'node-3' },
    );
    assert.deepEqual(
      row?.waits.map((w) => [w.code, w.from, w.to]),
      [['Retry', at(4).toISOString(), at(21).toISOString()]],
    );
  });

  it('a server: the first attempt is when it was asked, the host it reached is the target', () => {
    const base: ServerProgress = { name: 'app-1', phase: 'pending', attempts: 0, sinceMigrationId: 0 };
    let servers = withServerTimelines(
      {},
      { s1: { ...base, phase: 'live-migrating', attempts: 1, startedAt: at(2).toISOString() } },
      at(2),
    );
    servers = withServerTimelines(
      servers,
      { s1: { ...(servers.s1 as ServerProgress), phase: 'moved', destination: 'compute-2' } },
      at(30),
    );
    const state = { host: 'compute-1', serviceId: '1', disabledByUs: true, servers };
    const [row] = timelineOf(record({ nova: { state } })).items;
    assert.deepEqual(
      { kind: row?.kind, askedAt: row?.askedAt, goneAt: row?.goneAt, route: `${row?.source} → ${row?.target}` },
      { kind: 'server', askedAt: at(2).toISOString(), goneAt: at(30).toISOString(), route: 'compute-1 → compute-2' },
    );
  });
});

describe('blocker spans', () => {
  const bare = {
    code: 'BarePod' as const,
    reason: 'cannot delete Pods that declare no controller: default/debug',
    item: { kind: 'Pod' as const, uid: 'd1', name: 'default/debug' },
  };

  it('open when first reported, close when no longer; the same blockers again change nothing', () => {
    const open = followBlockers(undefined, [bare], at(0).toISOString());
    assert.equal(followBlockers(open, [bare], at(5).toISOString()), open);
    const closed = followBlockers(open, [], at(9).toISOString());
    assert.deepEqual(
      closed?.map((s) => [s.code, s.from, s.to]),
      [['BarePod', at(0).toISOString(), at(9).toISOString()]],
    );
    const [row] = timelineOf(record({ pods: { state: INITIAL_DRAIN_STATE, blockerSpans: closed ?? [] } })).items;
    assert.equal(row?.name, 'default/debug', 'a blocked pod drainbridge never evicted still has its row');
    assert.equal(row?.blockers[0]?.code, 'BarePod');
  });
});

describe('one clock', () => {
  it('requested: when drainbridge created the record, on its clock — never the API server’s creationTimestamp', () => {
    const base = record({});
    // The API server's clock runs ten minutes ahead of drainbridge's here.
    const metadata = { ...base.metadata, creationTimestamp: at(600) as never };
    const written = { ...base, metadata, status: { ...base.status, requestedAt: at(-1).toISOString() } };
    assert.equal(timelineOf(written).requestedAt, at(-1).toISOString());
    // A record written before requestedAt was kept: its first phase, on drainbridge's clock too.
    assert.equal(timelineOf({ ...base, metadata }).requestedAt, T0.toISOString());
  });
});
