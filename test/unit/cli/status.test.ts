/** `drainbridge status` from a snapshot (cli/status/model.ts) and how it is drawn (render.ts). Pure. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Node } from '@kubernetes/client-node';
import { statusReport, withoutClock } from '../../../cli/status/model.ts';
import { duration, renderReport, table } from '../../../cli/status/render.ts';
import type { Snapshot } from '../../../cli/status/snapshot.ts';
import { QUEUE_ANNOTATION } from '../../../lib/admission/records.ts';
import type { EvacuationObject } from '../../../lib/clients/kube/paths.ts';
import { HELD_LABEL, LEDGER_ANNOTATION } from '../../../lib/node/ledger.ts';
import { PHASE_ANNOTATION } from '../../../lib/node/phase.ts';
import { OWNER_ANNOTATION } from '../../../lib/workflow/owner-record.ts';
import { OWNER_TTL_SECONDS } from '../../../lib/workflow/ownership.ts';

const NOW = new Date('2030-01-10T12:00:00.000Z');
const ago = (seconds: number) => new Date(NOW.getTime() - seconds * 1000).toISOString();

function node(name: string, ledger: string | undefined, phase?: string): V1Node {
  return {
    metadata: {
      name,
      labels: { [HELD_LABEL]: 'true' },
      annotations: {
        ...(ledger === undefined ? {} : { [LEDGER_ANNOTATION]: ledger }),
        ...(phase ? { [PHASE_ANNOTATION]: phase } : {}),
      },
    },
    spec: { unschedulable: true },
  };
}

function record(requestId: string, nodeName: string, status: EvacuationObject['status'] = {}): EvacuationObject {
  return {
    apiVersion: 'drainbridge.io/v1alpha1',
    kind: 'Evacuation',
    metadata: { name: requestId },
    spec: { requestId, nodeName, requester: 'alice', origin: 'manual', reason: 'kernel' },
    status,
  };
}

const ledger = JSON.stringify({
  holds: { 'r-1': { requester: 'alice', origin: 'manual', since: ago(300) } },
  released: {},
  changes: { priorUnschedulable: false, cordoned: true, annotations: {}, taints: [] },
});

function snapshot(more: Partial<Snapshot> = {}): Snapshot {
  return {
    at: NOW,
    nodes: [node('node-1', ledger, 'NodeDraining')],
    records: [
      record('r-1', 'node-1', {
        phase: 'NodeDraining',
        branches: {
          pods: {
            version: '3',
            state: null,
            moved: 1,
            total: 4,
            inFlight: 2,
            skipped: 1,
            blockers: ['pdb'],
          },
          'infra-pods': { version: '1', state: null, moved: 0, total: 1, inFlight: 0, skipped: 0 },
          nova: { version: '2', state: null, moved: 2, total: 2, finishedAt: ago(100) },
        },
      }),
      record('r-0', 'node-5', {
        phase: 'NodeDrained',
        restore: { startedAt: ago(7200), finishedAt: ago(3600) },
        branches: {
          pods: { version: '1', state: null, moved: 3, total: 3, startedAt: ago(9000), finishedAt: ago(8000) },
        },
      }),
      record('r-3', 'node-3', { phase: 'MaintenanceScheduled', start: startAt(ago(-600)) }),
    ],
    lease: {
      metadata: {
        annotations: {
          [QUEUE_ANNOTATION]: JSON.stringify({ 'r-2': { node: 'node-2', since: ago(45), seen: ago(5) } }),
        },
      },
    },
    recordTtlHours: 24,
    ...more,
  };
}

function startAt(at: string) {
  return { notBefore: at, startAt: at, estimateSeconds: 60, marginSeconds: 300, late: false, basis: [] };
}

describe('statusReport', () => {
  it('merges holds, records and the queue into one line per request, with state, progress and elapsed time', () => {
    const report = statusReport(snapshot());
    assert.deepEqual(
      report.requests.map((r) => [r.requestId, r.node, r.state, r.elapsedSeconds]),
      [
        ['r-1', 'node-1', 'held', 300],
        ['r-2', 'node-2', 'queued', 45],
        ['r-3', 'node-3', 'scheduled', undefined],
        ['r-0', 'node-5', 'restored', 9000 - 3600],
      ],
    );
    const held = report.requests[0];
    assert.deepEqual(held?.branches, [
      { branch: 'pods', moved: 1, total: 5, inFlight: 2, skipped: 1, done: false },
      { branch: 'nova', moved: 2, total: 2, inFlight: 0, skipped: 0, done: true },
    ]);
    assert.deepEqual(held?.blockers, ['pdb']);
    assert.equal(report.requests[2]?.startsAt, ago(-600));
    assert.equal(report.requests[3]?.expiresAt, new Date(Date.parse(ago(3600)) + 24 * 3_600_000).toISOString());
    assert.deepEqual(report.queue, [
      { position: 1, requestId: 'r-2', node: 'node-2', since: ago(45), waitingSeconds: 45 },
    ]);
    assert.deepEqual(report.nodes[0]?.holds, [
      { requestId: 'r-1', requester: 'alice', origin: 'manual', since: ago(300) },
    ]);
    assert.deepEqual(report.damaged, []);
  });

  it('reports every record it cannot read, with the repair, instead of failing', () => {
    const damagedRecord = record('r-9', 'node-1', { branches: { pods: { version: '1', state: { evictions: 7 } } } });
    damagedRecord.metadata.annotations = { [OWNER_ANNOTATION]: '{"executionId": 1}' };
    const report = statusReport(
      snapshot({
        nodes: [node('node-1', '{"holds": 1}')],
        records: [damagedRecord],
        lease: { metadata: { annotations: { [QUEUE_ANNOTATION]: 'not json' } } },
      }),
    );
    assert.deepEqual(
      report.damaged.map((d) => [d.record.split(' (')[0], d.fix]),
      [
        ['ledger of node node-1', 'drainbridge repair node-1'],
        ['admission queue', 'drainbridge repair node-1'],
        ['owner claim', 'drainbridge repair node-1'],
        ['pods branch state of Evacuation r-9', 'drainbridge repair node-1'],
      ],
    );
    assert.equal(report.nodes[0]?.ledger, 'unreadable');
    assert.deepEqual(report.queue, []);
  });

  it('only the clock changed: the same for --watch', () => {
    const later = { ...snapshot(), at: new Date(NOW.getTime() + 5_000) };
    assert.deepEqual(withoutClock(statusReport(later)), withoutClock(statusReport(snapshot())));
    assert.notDeepEqual(statusReport(later), statusReport(snapshot()));
  });
});

describe('rendering', () => {
  it('says durations as kubectl does', () => {
    assert.deepEqual([0, 45, 60, 192, 3600, 7500, 86_400, 277_200].map(duration), [
      '0s',
      '45s',
      '1m',
      '3m12s',
      '1h',
      '2h5m',
      '1d',
      '3d5h',
    ]);
  });

  it('aligns columns three spaces apart, without trailing blanks', () => {
    assert.deepEqual(
      table(
        ['A', 'BB'],
        [
          ['xyz', ''],
          ['1', '2'],
        ],
      ),
      ['A     BB', 'xyz', '1     2'],
    );
  });

  it('draws the nodes, the requests, then the sentences; an idle cluster in one sentence', () => {
    const lines = renderReport(statusReport(snapshot()), 'table');
    assert.match(lines[0] ?? '', /^NODE\s+CORDONED\s+PHASE\s+HELD-BY\s+REQUESTER\s+ORIGIN\s+SINCE$/);
    assert.ok(lines.includes('r-1 on node-1:') && lines.includes('  blocked: pdb'), lines.join('\n'));
    assert.ok(lines.some((line) => /^r-1\s+node-1\s+held\s+NodeDraining\s+5m\s+1\/5\s+-\s+2\/2\s+1$/.test(line)));
    const idle = renderReport(statusReport(snapshot({ nodes: [], records: [], lease: undefined })), 'table');
    assert.deepEqual(idle, ['No node is in maintenance, and no request is waiting.']);
  });

  it('a place far back in line says its reason as of when it was decided, not as if it held now (issue 22)', () => {
    const zone = 'topology.kubernetes.io/zone=zone-a already has 1 node(s) in maintenance (node-1)';
    const lease = (entries: Record<string, unknown>) => ({
      metadata: { annotations: { [QUEUE_ANNOTATION]: JSON.stringify(entries) } },
    });
    // r-7 was decided on the nodes 6 minutes ago and has refreshed its place from the Lease alone since;
    // r-2 was decided at its last refresh.
    const report = statusReport(
      snapshot({
        lease: lease({
          'r-2': { node: 'node-2', since: ago(900), seen: ago(5), why: zone, whyAt: ago(5) },
          'r-7': { node: 'node-7', since: ago(800), seen: ago(20), why: zone, whyAt: ago(360) },
        }),
      }),
    );
    assert.deepEqual(
      report.queue.map((entry) => [entry.requestId, entry.whyStale]),
      [
        ['r-2', false],
        ['r-7', true],
      ],
    );
    const lines = renderReport(report, 'table');
    assert.ok(lines.includes(`     waiting: ${zone}`), lines.join('\n'));
    assert.ok(
      lines.includes(
        `     waiting: in line behind 1 older request(s); last reason decided on the nodes at ${ago(360)} (6m ago), not asked again since (it is asked again nearer the front): ${zone}`,
      ),
      lines.join('\n'),
    );
    assert.equal(
      lines.filter((line) => line === `     waiting: ${zone}`).length,
      1,
      "only r-2's reason is said as current",
    );
  });

  it('a held node someone uncordoned: the request is shown paused, with how to go on (issue 24)', () => {
    const uncordoned = { ...node('node-1', ledger, 'NodeDraining'), spec: { unschedulable: false } };
    const report = statusReport(snapshot({ nodes: [uncordoned] }));
    const held = report.requests.find((r) => r.requestId === 'r-1');
    assert.match(held?.paused ?? '', /^uncordoned by someone else; no pod is evicted while node node-1 is schedulable/);
    const lines = renderReport(report, 'table');
    assert.ok(
      lines.includes(
        '  paused: uncordoned by someone else; no pod is evicted while node node-1 is schedulable — re-cordon it to continue (kubectl cordon node-1), or end the maintenance (drainbridge restore node-1)',
      ),
      lines.join('\n'),
    );
    assert.match(renderReport(report, 'wide').join('\n'), /paused: uncordoned by someone else/);
    assert.equal(statusReport(snapshot()).requests[0]?.paused, undefined, 'a cordoned held node is not paused');
  });

  it('a rescheduled notice: the start it had and the one it has, and what was done (issue 21)', () => {
    const message =
      'the maintenance on node node-3 moved from 2030-01-24T12:00:00.000Z to 2030-01-10T13:01:00.000Z (NotBefore 2030-01-10T13:01:00.000Z); the evacuation had not started: it starts for the new time';
    const moved = {
      from: '2030-01-24T12:00:00.000Z',
      to: '2030-01-10T13:01:00.000Z',
      revision: 'NotBefore 2030-01-10T13:01:00.000Z',
      at: ago(60),
      outcome: 'replanned' as const,
      message,
    };
    const scheduled = record('r-3', 'node-3', {
      phase: 'MaintenanceScheduled',
      start: startAt(ago(-600)),
      reschedules: [moved],
    });
    const report = statusReport(snapshot({ records: [scheduled] }));
    const request = report.requests.find((r) => r.requestId === 'r-3');
    assert.deepEqual(request?.rescheduled, { from: moved.from, to: moved.to, at: ago(60), message });
    assert.ok(renderReport(report, 'table').includes(`  rescheduled at ${ago(60)}: ${message}`));
    const wide = renderReport(report, 'wide').find((line) => line.startsWith('r-3 '));
    assert.match(wide ?? '', /rescheduled from 2030-01-24T12:00:00.000Z to 2030-01-10T13:01:00.000Z/);
    assert.equal(statusReport(snapshot()).requests[2]?.rescheduled, undefined, 'never moved: nothing said');
  });

  it('a request ended on an unreadable notice source: said even once restored, with since when (issue 21)', () => {
    const sourceUnreadable = { since: ago(7200), message: 'maintenance request r-0 ended because …', at: ago(3600) };
    const records = snapshot().records.map((r) =>
      r.spec.requestId === 'r-0' ? { ...r, status: { ...r.status, sourceUnreadable } } : r,
    );
    const report = statusReport(snapshot({ records }));
    const restored = report.requests.find((r) => r.requestId === 'r-0');
    assert.equal(restored?.state, 'restored');
    assert.deepEqual(restored?.sourceUnreadableEnd, { since: ago(7200), message: sourceUnreadable.message });
    const lines = renderReport(report, 'table');
    const at = lines.indexOf('r-0 on node-5:');
    assert.ok(at >= 0, lines.join('\n'));
    assert.equal(
      lines[at + 1],
      `  ended on an unreadable source (unreadable since ${ago(7200)}): ${sourceUnreadable.message}`,
    );
    assert.ok(
      !renderReport(statusReport(snapshot()), 'table').includes('r-0 on node-5:'),
      'an ordinary restore: nothing said',
    );
  });
});

describe('who drives a request (the owner mark as a heartbeat)', () => {
  const LOCAL = 'arn:aws:states:local:000000000000:execution:drainbridge-evacuate:e-1';
  function withOwner(owner: Record<string, string> | undefined): Snapshot {
    const base = snapshot();
    const [first, ...rest] = base.records;
    assert.ok(first);
    const annotations: Record<string, string> = owner ? { [OWNER_ANNOTATION]: JSON.stringify(owner) } : {};
    return { ...base, records: [{ ...first, metadata: { ...first.metadata, annotations } }, ...rest] };
  }
  const r1 = (s: Snapshot) => statusReport(s).requests.find((r) => r.requestId === 'r-1');

  it('names the live driver (process and execution) of an evacuation under way', () => {
    const report = statusReport(withOwner({ executionId: LOCAL, seen: ago(12), driver: '4242@host-a' }));
    const request = report.requests.find((r) => r.requestId === 'r-1');
    assert.equal(request?.driving, 'driven');
    assert.equal(request?.driver?.process, '4242@host-a');
    assert.equal(request?.resume, undefined);
    const lines = renderReport(report, 'table');
    assert.ok(
      lines.includes('  driven by process 4242 on host-a (execution e-1), last seen 12s ago'),
      lines.join('\n'),
    );
    const wide = renderReport(report, 'wide').find((line) => line.startsWith('r-1 '));
    assert.match(wide ?? '', /driver 4242@host-a$/, '-o wide: the driver in NOTE');
  });

  it('calls a request abandoned once its driver handed it back (Ctrl-C), with the command that resumes it', () => {
    const report = statusReport(
      withOwner({ executionId: LOCAL, seen: ago(50), driver: '4242@host-a', released: ago(40) }),
    );
    const request = report.requests.find((r) => r.requestId === 'r-1');
    assert.equal(request?.driving, 'abandoned');
    assert.equal(request?.driver?.idleSeconds, 40);
    assert.equal(request?.resume, 'drainbridge evacuate node-1 --request-id r-1');
    const lines = renderReport(report, 'table');
    assert.ok(
      lines.includes(
        '  no process has driven this request for 40s — resume: drainbridge evacuate node-1 --request-id r-1',
      ),
      lines.join('\n'),
    );
    assert.ok(lines.some((line) => /handed the request back/.test(line)));
  });

  it('calls a request abandoned when its driver stopped renewing for longer than the stale limit (killed)', () => {
    assert.equal(r1(withOwner({ executionId: LOCAL, seen: ago(OWNER_TTL_SECONDS - 5) }))?.driving, 'driven');
    const stale = r1(withOwner({ executionId: LOCAL, seen: ago(OWNER_TTL_SECONDS + 5) }));
    assert.equal(stale?.driving, 'abandoned');
    assert.equal(stale?.driver?.live, false);
    assert.equal(r1(withOwner(undefined))?.driving, 'abandoned', 'held, under way, and nobody ever claimed it');
  });

  it('asks for no driver where none is needed: ended, restored, scheduled, queued', () => {
    const report = statusReport(withOwner({ executionId: LOCAL, seen: ago(9999) }));
    for (const request of report.requests.filter((r) => r.requestId !== 'r-1')) {
      assert.equal(request.driving, undefined, request.requestId);
    }
  });
});
