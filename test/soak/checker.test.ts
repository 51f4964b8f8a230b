/**
 * The soak's invariant checker (soak/checker.ts) over hand-made histories: a clean one holds every
 * invariant (and counts what it judged), and each kind of breach is named under its invariant.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkInvariants, INVARIANTS, type Invariant } from '../../soak/checker.ts';
import type { NovaHistory, SoakLog } from '../../soak/log.ts';

const SA = 'system:serviceaccount:drainbridge:drainbridge-run';
const T0 = 1_000_000;
const iso = (ms: number) => new Date(ms).toISOString();
const NOTICE_REQUEST = 'azure:node-5:scheduled-events:5DD55B64';

/** A cloud notice announced at T0, moved at +60 s to start at +600 s, completed at +900 s. */
const NOTICE = {
  provider: 'azure',
  node: 'node-5',
  what: 'Reboot',
  requestPrefix: 'azure:node-5:',
  announcedAt: T0,
  reschedules: [{ at: T0 + 60_000, notBefore: iso(T0 + 600_000) }],
  goneAt: T0 + 900_000,
  gone: 'completed' as const,
};

/** Its request: recorded at +5 s, followed the move, waited for its start, drained, restored 30 s after the notice went. */
const NOTICE_REQUEST_HISTORY = {
  requestId: NOTICE_REQUEST,
  node: 'node-5',
  origin: 'azure',
  firstSeenAt: T0 + 5_000,
  outcome: 'restored' as const,
  endedAt: T0 + 700_000,
  startAt: T0 + 500_000,
  releasedAt: T0 + 930_000,
  changes: [T0 + 5_000, T0 + 70_000, T0 + 700_000, T0 + 930_000],
  rescheduledTo: [iso(T0 + 600_000)],
};

function cleanLog(): SoakLog {
  return {
    seed: 7,
    maxHeldNodes: 2,
    deletesAllowed: false,
    requestBoundMs: 600_000,
    endedAt: T0 + 3_600_000,
    podRemovals: [
      {
        at: T0,
        user: SA,
        namespace: 'shop',
        name: 'web-1',
        how: 'eviction',
        status: 201,
        budgets: [{ name: 'web', disruptionsAllowed: 1 }],
        launcher: false,
      },
      {
        at: T0,
        user: SA,
        namespace: 'shop',
        name: 'web-2',
        how: 'eviction',
        status: 429,
        budgets: [{ name: 'web', disruptionsAllowed: 0 }],
        launcher: false,
      },
    ],
    uncordons: [{ at: T0, user: SA, node: 'node-1', status: 200, personCordonStood: false }],
    budgetSamples: 3,
    budgetBreaches: [],
    // Both slots held until r1 ended; r2's failure keeps node-2 held.
    held: [
      { at: T0, held: ['node-1', 'node-2'], cordonedByDrainbridge: ['node-1'] },
      { at: T0 + 60_000, held: ['node-2'], cordonedByDrainbridge: [] },
    ],
    vms: {
      atStart: { 'vms/a': 'uid-a' },
      atEnd: { 'vms/a': { uid: 'uid-a', phase: 'Running', deleting: false } },
      shutdowns: [],
    },
    requests: [
      { requestId: 'r1', node: 'node-1', firstSeenAt: T0, outcome: 'restored', endedAt: T0 + 60_000 },
      {
        requestId: 'r2',
        node: 'node-2',
        firstSeenAt: T0,
        outcome: 'failed',
        endedAt: T0 + 60_000,
        lastError: 'PodDisruptionBudget shop/api allows no disruption',
      },
      NOTICE_REQUEST_HISTORY,
    ],
    nodesAtEnd: [
      { name: 'node-1', unschedulable: false, holds: [], personCordon: false },
      { name: 'node-2', unschedulable: true, holds: ['r2'], personCordon: false },
      { name: 'node-3', unschedulable: true, holds: [], personCordon: true },
    ],
    replicas: [
      { replica: 'a', pid: 10, sentSignal: 'SIGKILL', exit: { code: null, signal: 'SIGKILL' }, crashLines: [] },
      {
        replica: 'b',
        pid: 11,
        sentSignal: 'SIGTERM',
        exit: { code: 0, signal: null },
        crashLines: [],
        rssAtMinute5: 100,
        rssAtEnd: 110,
      },
    ],
    notices: [NOTICE],
  };
}

const OPERATOR_REASON = 'operator: hardware check 3 (soak)';
const SERVER = { id: 's1', name: 'soak-7-compute-1-01', host: 'compute-1' };

/**
 * Nova as sampled in a clean run: drainbridge disabled compute-1 for r1 and enabled it again at its
 * restore, its server live-migrated to compute-2; the operator disabled compute-2 for a minute themself.
 */
function cleanNova(): NovaHistory {
  return {
    nodeOf: { 'compute-1': 'node-4', 'compute-2': 'node-5' },
    servers: [SERVER],
    samples: 20,
    failedSamples: 0,
    serviceChanges: [
      { host: 'compute-1', status: 'enabled', at: T0 },
      { host: 'compute-2', status: 'enabled', at: T0 },
      { host: 'compute-1', status: 'disabled', reason: 'drainbridge:r1: evacuating node-4', at: T0 + 10_000 },
      { host: 'compute-2', status: 'disabled', reason: OPERATOR_REASON, at: T0 + 20_000 },
      { host: 'compute-1', status: 'enabled', at: T0 + 60_000 },
      { host: 'compute-2', status: 'enabled', at: T0 + 85_000 },
    ],
    serverChanges: [
      { id: 's1', status: 'ACTIVE', host: 'compute-1', at: T0 },
      { id: 's1', status: 'MIGRATING', host: 'compute-1', at: T0 + 15_000 },
      { id: 's1', status: 'ACTIVE', host: 'compute-2', at: T0 + 20_000 },
    ],
    operatorDisables: [
      {
        host: 'compute-2',
        reason: OPERATOR_REASON,
        from: T0 + 19_000,
        until: T0 + 80_000,
        foundBeforeEnable: { status: 'disabled', reason: OPERATOR_REASON },
      },
    ],
    servicesAtEnd: { 'compute-1': { status: 'enabled' }, 'compute-2': { status: 'enabled' } },
    serversAtEnd: { s1: { status: 'ACTIVE', host: 'compute-2' } },
  };
}

const withNova = (l: SoakLog, change: (nova: NovaHistory) => Partial<NovaHistory>): SoakLog => ({
  ...l,
  nova: { ...cleanNova(), ...change(cleanNova()) },
});

const MIB = 2 ** 20;
const life = (pid: number) => ({ replica: 'b', pid, crashLines: [] as string[] });

/** The invariants `log` breaks, each once. */
function broken(log: SoakLog): Invariant[] {
  return [...new Set(checkInvariants(log).violations.map((v) => v.invariant))];
}

describe('soak invariant checker', () => {
  it('a clean history holds every invariant and counts what it judged', () => {
    const verdict = checkInvariants(cleanLog());
    assert.deepEqual(verdict.violations, []);
    assert.deepEqual(Object.keys(verdict.checked), [...INVARIANTS]);
    assert.equal(verdict.checked['no-pod-deleted'], 1, 'one successful eviction judged');
    assert.equal(verdict.checked['requests-end'], 3);
    assert.equal(verdict.checked['notice-heard'], 1);
    assert.equal(verdict.checked['notice-reschedule-followed'], 1);
    assert.equal(verdict.checked['notice-gone-released'], 1);
    assert.equal(verdict.checked['memory-flat'], 1, 'only the replica that lived five minutes is measured');
    assert.equal(verdict.checked['nova-reenabled'], 0, 'no Nova lab: nothing judged, and not called held');
  });

  const cases: { name: string; invariant: Invariant; change: (log: SoakLog) => SoakLog; detail: RegExp }[] = [
    {
      name: 'a direct pod DELETE',
      invariant: 'no-pod-deleted',
      change: (l) => ({
        ...l,
        podRemovals: [
          ...l.podRemovals,
          { ...l.podRemovals[0]!, name: 'db-0', how: 'delete', status: 200, budgets: [] },
        ],
      }),
      detail: /deleted pod shop\/db-0 where an eviction was possible/,
    },
    {
      name: 'a direct pod DELETE that RBAC refused',
      invariant: 'no-pod-deleted',
      change: (l) => ({
        ...l,
        podRemovals: [
          ...l.podRemovals,
          { ...l.podRemovals[0]!, name: 'db-1', how: 'delete', status: 403, budgets: [] },
        ],
      }),
      detail: /tried to delete \(answered 403\) pod shop\/db-1/,
    },
    {
      name: 'a pod removed while its PDB allowed nothing',
      invariant: 'pdb-minimum-kept',
      change: (l) => ({
        ...l,
        podRemovals: [{ ...l.podRemovals[0]!, budgets: [{ name: 'api', disruptionsAllowed: 0 }] }],
      }),
      detail: /PDB shop\/api allowed no disruption/,
    },
    {
      name: 'a PDB seen below its minimum',
      invariant: 'pdb-minimum-kept',
      change: (l) => ({ ...l, budgetBreaches: [{ at: T0, budget: 'shop/ledger', healthy: 1, desired: 2 }] }),
      detail: /PDB shop\/ledger had 1 healthy pods, below its minimum 2/,
    },
    {
      name: 'a VM restarted (new uid)',
      invariant: 'no-vm-lost',
      change: (l) => ({
        ...l,
        vms: { ...l.vms, atEnd: { 'vms/a': { uid: 'uid-b', phase: 'Running', deleting: false } } },
      }),
      detail: /VM vms\/a was shut down and started again/,
    },
    {
      name: 'a VM gone',
      invariant: 'no-vm-lost',
      change: (l) => ({ ...l, vms: { ...l.vms, atEnd: {} } }),
      detail: /VM vms\/a was lost/,
    },
    {
      name: 'a launcher pod evicted',
      invariant: 'no-vm-lost',
      change: (l) => ({ ...l, podRemovals: [{ ...l.podRemovals[0]!, name: 'virt-launcher-a-x', launcher: true }] }),
      detail: /evicted launcher pod shop\/virt-launcher-a-x/,
    },
    {
      name: 'a cordon left with no hold and no person',
      invariant: 'no-cordon-orphaned',
      change: (l) => ({ ...l, nodesAtEnd: [{ name: 'node-4', unschedulable: true, holds: [], personCordon: false }] }),
      detail: /node node-4 is left cordoned/,
    },
    {
      name: 'a hold for a restored request',
      invariant: 'no-hold-orphaned',
      change: (l) => ({
        ...l,
        nodesAtEnd: [{ name: 'node-1', unschedulable: true, holds: ['r1'], personCordon: false }],
      }),
      detail: /node node-1 is held for r1/,
    },
    {
      name: 'a hold for a request with no record',
      invariant: 'no-hold-orphaned',
      change: (l) => ({
        ...l,
        nodesAtEnd: [{ name: 'node-1', unschedulable: true, holds: ['ghost'], personCordon: false }],
      }),
      detail: /held for ghost/,
    },
    {
      name: 'a request that never ended',
      invariant: 'requests-end',
      change: (l) => ({ ...l, requests: [...l.requests, { requestId: 'r9', node: 'node-9', firstSeenAt: T0 }] }),
      detail: /request r9 \(node-9\) never ended: its record shows no end \(phase none\)/,
    },
    {
      name: 'a request that ended past its bound with a slot free',
      invariant: 'requests-end',
      change: (l) => ({
        ...l,
        requests: [
          ...l.requests,
          { requestId: 'r7', node: 'node-7', firstSeenAt: T0 + 60_000, outcome: 'restored', endedAt: T0 + 960_000 },
        ],
      }),
      detail: /request r7 \(node-7\) took 900 s \(bound 600 s\)$/,
    },
    {
      name: 'a request past its bound less the time every slot was held by other nodes',
      invariant: 'requests-end',
      change: (l) => ({
        ...l,
        // Full for the first 200 s, a slot free from then on: 700 s of its 900 s were its own.
        held: [
          { at: T0, held: ['node-1', 'node-2'], cordonedByDrainbridge: [] },
          { at: T0 + 200_000, held: ['node-1'], cordonedByDrainbridge: [] },
        ],
        requests: [
          ...l.requests,
          { requestId: 'r7', node: 'node-7', firstSeenAt: T0, outcome: 'restored', endedAt: T0 + 900_000 },
        ],
      }),
      detail: /request r7 \(node-7\) took 900 s, 200 s of it with all 2 slots held by other nodes \(bound 600 s\)/,
    },
    {
      name: 'a request withdrawn naming no reason',
      invariant: 'requests-end',
      change: (l) => ({
        ...l,
        requests: [
          ...l.requests,
          { requestId: 'r6', node: 'node-6', firstSeenAt: T0, outcome: 'withdrawn', endedAt: T0 + 1, endReason: ' ' },
        ],
      }),
      detail: /request r6 \(node-6\) ended withdrawn naming no reason/,
    },
    {
      name: 'a failure naming no blocker',
      invariant: 'requests-end',
      change: (l) => ({
        ...l,
        requests: [
          ...l.requests,
          { requestId: 'r8', node: 'node-8', firstSeenAt: T0, outcome: 'failed', endedAt: T0 + 1, lastError: '' },
        ],
      }),
      detail: /failed naming no blocker/,
    },
    {
      name: 'more nodes held than the limit',
      invariant: 'held-within-limit',
      change: (l) => ({ ...l, held: [{ at: T0, held: ['node-1', 'node-2', 'node-3'], cordonedByDrainbridge: [] }] }),
      detail: /3 nodes held at once \(limit 2\)/,
    },
    {
      name: "a person's cordon undone",
      invariant: 'person-cordon-kept',
      change: (l) => ({
        ...l,
        uncordons: [{ at: T0, user: SA, node: 'node-3', status: 200, personCordonStood: true }],
      }),
      detail: /uncordoned node node-3 while a person's cordon stood/,
    },
    {
      name: 'a replica that died unasked',
      invariant: 'no-crash',
      change: (l) => ({ ...l, replicas: [{ replica: 'a', pid: 12, exit: { code: 1, signal: null }, crashLines: [] }] }),
      detail: /replica a \(pid 12\) exited with code 1 unasked/,
    },
    {
      name: 'an unhandled rejection in a log',
      invariant: 'no-crash',
      change: (l) => ({
        ...l,
        replicas: [{ replica: 'b', pid: 13, crashLines: ['Unhandled promise rejection: boom'] }],
      }),
      detail: /Unhandled promise rejection/,
    },
    {
      name: 'memory that grew',
      invariant: 'memory-flat',
      change: (l) => ({
        ...l,
        replicas: [{ replica: 'b', pid: 14, crashLines: [], rssAtMinute5: 100 * 2 ** 20, rssAtEnd: 130 * 2 ** 20 }],
      }),
      detail: /grew from 100 MiB at minute 5 to 130 MiB/,
    },
    {
      name: 'a floor that rose minute by minute (a leak under the swing)',
      invariant: 'memory-flat',
      change: (l) => {
        // Every other minute 300 MiB of work in flight; beneath it the floor climbs from 118 MiB (minutes 5–9) to 148 MiB (the last five).
        const rssByMinute = Array.from({ length: 20 }, (_, m) => (m % 2 ? 300 : 100 + 3 * m) * MIB);
        return { ...l, replicas: [{ ...life(15), rssByMinute, rssAtMinute5: 300 * MIB, rssAtEnd: 300 * MIB }] };
      },
      detail: /grew from 118 MiB at minute 5 to 148 MiB at its end \(floors of 5 minutes/,
    },
    {
      name: 'a short life that doubled (its two windows must not overlap)',
      invariant: 'memory-flat',
      change: (l) => {
        // Ten minutes: minutes 5–6 against 8–9 (overlapping five-minute windows shared their lowest sample).
        const rssByMinute = [90, 90, 90, 90, 90, 100, 100, 150, 200, 210].map((m) => m * MIB);
        return { ...l, replicas: [{ ...life(17), rssByMinute, rssAtMinute5: 100 * MIB, rssAtEnd: 210 * MIB }] };
      },
      detail: /grew from 100 MiB at minute 5 to 200 MiB at its end/,
    },
    {
      name: 'a leader whose floor rose after it took the lead',
      invariant: 'memory-flat',
      change: (l) => {
        // Standby 170 MiB for 3 minutes, then leading: 400 MiB from minute 8 to 12, 500 MiB over its last five.
        const rssByMinute = [...Array(3).fill(170), ...Array(10).fill(400), ...Array(5).fill(500)].map((m) => m * MIB);
        return {
          ...l,
          replicas: [{ ...life(18), rssByMinute, ledFromMinute: 3, rssAtMinute5: 400 * MIB, rssAtEnd: 500 * MIB }],
        };
      },
      detail: /grew from 400 MiB at minute 8 \(5 minutes after it took the lead\) to 500 MiB at its end/,
    },
  ];
  cases.push(
    {
      name: 'nova-compute left disabled by drainbridge after every maintenance ended',
      invariant: 'nova-reenabled',
      change: (l) =>
        withNova(l, (n) => ({
          servicesAtEnd: {
            ...n.servicesAtEnd,
            'compute-1': { status: 'disabled', reason: 'drainbridge:r1: evacuating node-4' },
          },
        })),
      detail: /nova-compute on compute-1 \(node node-4\) is left disabled by drainbridge .*request r1 ended restored/,
    },
    {
      name: 'nova-compute left disabled by a hand that is neither drainbridge nor a standing operator',
      invariant: 'nova-reenabled',
      change: (l) =>
        withNova(l, (n) => ({
          servicesAtEnd: { ...n.servicesAtEnd, 'compute-1': { status: 'disabled', reason: 'maintenance' } },
        })),
      detail: /nova-compute on compute-1 \(node node-4\) is left disabled \(reason "maintenance"\), not by an operator/,
    },
    {
      name: "nova-compute seen enabled while the operator's disable stood",
      invariant: 'nova-reenabled',
      change: (l) =>
        withNova(l, (n) => ({
          serviceChanges: [...n.serviceChanges, { host: 'compute-2', status: 'enabled', at: T0 + 50_000 }],
        })),
      detail:
        /nova-compute on compute-2 \(node node-5\) was enabled again at 1970-01-01T00:17:30.000Z while an operator's disable \("operator: hardware check 3 \(soak\)"/,
    },
    {
      name: 'the operator finds their disabled service enabled when they come to enable it (between samples)',
      invariant: 'nova-reenabled',
      change: (l) =>
        withNova(l, (n) => ({
          operatorDisables: [{ ...n.operatorDisables[0]!, foundBeforeEnable: { status: 'enabled' } }],
        })),
      detail: /nova-compute on compute-2 \(node node-5\) was enabled again at .* while an operator's disable/,
    },
    {
      name: "the operator's disable still standing at the end, the service enabled",
      invariant: 'nova-reenabled',
      change: (l) =>
        withNova(l, (n) => ({
          // Enabled after the last sample: only the look at the end sees it.
          serviceChanges: n.serviceChanges.slice(0, 5),
          operatorDisables: [{ host: 'compute-2', reason: OPERATOR_REASON, from: T0 + 19_000 }],
        })),
      detail: /nova-compute on compute-2 \(node node-5\) was enabled again at the end while an operator's disable/,
    },
    {
      name: "drainbridge's reason put over the operator's disable",
      invariant: 'nova-reenabled',
      change: (l) =>
        withNova(l, (n) => ({
          serviceChanges: [
            ...n.serviceChanges,
            { host: 'compute-2', status: 'disabled', reason: 'drainbridge:r2: evacuating node-5', at: T0 + 50_000 },
          ],
        })),
      detail: /nova-compute on compute-2 \(node node-5\) had its disable reason replaced with "drainbridge:r2/,
    },
    {
      name: 'a Nova server seen SHUTOFF during the run',
      invariant: 'no-vm-lost',
      change: (l) =>
        withNova(l, (n) => ({
          serverChanges: [...n.serverChanges, { id: 's1', status: 'SHUTOFF', host: 'compute-2', at: T0 + 30_000 }],
        })),
      detail: /Nova server soak-7-compute-1-01 \(s1\) was SHUTOFF on compute-2 \(node node-5\) at/,
    },
    {
      name: 'a Nova server Nova listed no more during the run',
      invariant: 'no-vm-lost',
      change: (l) =>
        withNova(l, (n) => ({
          serverChanges: [...n.serverChanges, { id: 's1', status: 'GONE', host: null, at: T0 + 30_000 }],
        })),
      detail: /Nova server soak-7-compute-1-01 \(s1\) was gone \(Nova listed it no more\)/,
    },
    {
      name: 'a Nova server gone at the end',
      invariant: 'no-vm-lost',
      change: (l) => withNova(l, () => ({ serversAtEnd: {} })),
      detail: /Nova server soak-7-compute-1-01 \(s1\) is gone at the end/,
    },
    {
      name: 'a Nova server in ERROR at the end',
      invariant: 'no-vm-lost',
      change: (l) => withNova(l, () => ({ serversAtEnd: { s1: { status: 'ERROR', host: 'compute-2' } } })),
      detail: /Nova server soak-7-compute-1-01 \(s1\) is ERROR on compute-2 \(node node-5\) at the end, not ACTIVE/,
    },
  );
  const withNoticeRequest = (l: SoakLog, change: Partial<SoakLog['requests'][number]>): SoakLog => ({
    ...l,
    requests: l.requests.map((r) => (r.requestId === NOTICE_REQUEST ? { ...r, ...change } : r)),
  });
  cases.push(
    {
      name: 'a notice that stood and reached no record',
      invariant: 'notice-heard',
      change: (l) => ({
        ...l,
        notices: [
          ...l.notices,
          { ...NOTICE, node: 'node-6', requestPrefix: 'gcp:node-6:', provider: 'gcp', reschedules: [] },
        ],
      }),
      detail: /gcp Reboot notice on node-6 .* stood 180 s and no request record came of it/,
    },
    {
      name: 'a notice moved, its record not',
      invariant: 'notice-reschedule-followed',
      change: (l) => withNoticeRequest(l, { rescheduledTo: [iso(T0 + 400_000)] }),
      detail: /moved to 1970-01-01T00:26:40.000Z: no request record shows the move/,
    },
    {
      name: 'a notice gone, its request never released',
      invariant: 'notice-gone-released',
      change: (l) => {
        const { releasedAt: _, ...held } = NOTICE_REQUEST_HISTORY;
        return {
          ...l,
          requests: l.requests.map((r) => (r.requestId === NOTICE_REQUEST ? { ...held, outcome: 'succeeded' } : r)),
        };
      },
      detail:
        /completed at .*: request azure:node-5:scheduled-events:5DD55B64 never released its node \(last phase none\)/,
    },
    {
      name: 'a notice gone, its request released past the bound',
      invariant: 'notice-gone-released',
      change: (l) => withNoticeRequest(l, { releasedAt: T0 + 900_000 + 700_000 }),
      detail: /released its node 700 s later \(bound 600 s\)/,
    },
    {
      name: "a notice's request past the bound from its planned start",
      invariant: 'requests-end',
      change: (l) => withNoticeRequest(l, { endedAt: T0 + 500_000 + 601_000 }),
      detail: /took 601 s from its planned start \(bound 600 s\)/,
    },
  );
  it('a clean Nova history holds, judging each service, each disable and each server booted', () => {
    const verdict = checkInvariants({ ...cleanLog(), nova: cleanNova() });
    assert.deepEqual(verdict.violations, []);
    assert.equal(verdict.checked['nova-reenabled'], 4, '2 services at the end, 1 operator disable, 1 of drainbridge');
    assert.equal(verdict.checked['no-vm-lost'], 2, 'the VMI and the Nova server');
  });

  it("a service the operator's disable still holds at the end is theirs to enable, not a breach", () => {
    const standing = withNova(cleanLog(), (n) => ({
      operatorDisables: [{ host: 'compute-2', reason: OPERATOR_REASON, from: T0 + 19_000 }],
      serviceChanges: n.serviceChanges.slice(0, 5),
      servicesAtEnd: { ...n.servicesAtEnd, 'compute-2': { status: 'disabled', reason: OPERATOR_REASON } },
    }));
    assert.deepEqual(checkInvariants(standing).violations, []);
  });

  it('memory that swings with the work in flight over a flat floor holds, though its two samples differ 2.7×', () => {
    const rssByMinute = Array.from({ length: 30 }, (_, m) => (m % 3 === 2 ? 150 : 300 + 10 * (m % 5)) * MIB);
    rssByMinute[5] = 150 * MIB;
    const swinging = { ...life(16), rssByMinute, rssAtMinute5: 150 * MIB, rssAtEnd: 410 * MIB };
    const verdict = checkInvariants({ ...cleanLog(), replicas: [swinging] });
    assert.deepEqual(verdict.violations, []);
    assert.equal(verdict.checked['memory-flat'], 1);
  });

  it('a standby that took the lead is judged from five minutes after it first led, not across the change', () => {
    // Seed 396922, run-a pid 24588 as sampled: ~170 MiB as a standby, the lead taken 4.9 minutes in, then ~400 MiB.
    const rssByMinute = [100, 236, 237, 170, 169, 184, 237, 288, 297, 358, 373, 273, 387, 421].map((m) => m * MIB);
    const leader = { ...life(19), rssByMinute, rssAtMinute5: 184 * MIB, rssAtEnd: 421 * MIB };
    assert.deepEqual(broken({ ...cleanLog(), replicas: [leader] }), ['memory-flat'], 'judged from its minute 5');
    const verdict = checkInvariants({ ...cleanLog(), replicas: [{ ...leader, ledFromMinute: 4 }] });
    assert.deepEqual(verdict.violations, []);
    assert.equal(verdict.checked['memory-flat'], 1);
    // Too short in its new role to judge: not judged, rather than judged across the change on two samples.
    const late = { ...leader, ledFromMinute: 10 };
    assert.equal(checkInvariants({ ...cleanLog(), replicas: [late] }).checked['memory-flat'], 0);
  });

  it("a notice's request waiting for its start is bounded from that start, not from its record", () => {
    // Recorded at +5 s, drained at +700 s: 695 s after its record, past the 600 s bound; 200 s after its start.
    assert.equal(NOTICE_REQUEST_HISTORY.endedAt - NOTICE_REQUEST_HISTORY.firstSeenAt > 600_000, true);
    assert.deepEqual(broken(cleanLog()), []);
    assert.deepEqual(broken(withNoticeRequest(cleanLog(), { startAt: undefined })), ['requests-end']);
  });
  for (const c of cases) {
    it(`names ${c.invariant}: ${c.name}`, () => {
      const verdict = checkInvariants(c.change(cleanLog()));
      assert.deepEqual(broken(c.change(cleanLog())), [c.invariant]);
      assert.ok(
        verdict.violations.some((v) => c.detail.test(v.detail)),
        JSON.stringify(verdict.violations),
      );
    });
  }
});
