/**
 * The soak's invariant checker: pure, over a SoakLog (what the simulated cluster saw, log.ts). Each
 * invariant counts the facts it judged (so a run that checked nothing shows 0, not "held") and names
 * every breach with the evidence.
 */
import type { NoticeHistory, ReplicaLife, RequestHistory, SoakLog } from './log.ts';
import { novaReenabled, novaServersKept } from './nova-judges.ts';
import { fullByOthersMs, requestFrom } from './waits.ts';

export const INVARIANTS = [
  'no-pod-deleted',
  'pdb-minimum-kept',
  'no-vm-lost',
  'no-cordon-orphaned',
  'no-hold-orphaned',
  'requests-end',
  'held-within-limit',
  'person-cordon-kept',
  'nova-reenabled',
  'notice-heard',
  'notice-reschedule-followed',
  'notice-gone-released',
  'no-crash',
  'memory-flat',
] as const;
export type Invariant = (typeof INVARIANTS)[number];

/** What a soak log shows of every invariant: the facts judged and each breach. */
export interface Verdict {
  readonly checked: Record<Invariant, number>;
  readonly violations: readonly { readonly invariant: Invariant; readonly detail: string }[];
}

interface Judged {
  readonly checked: number;
  readonly broken: readonly string[];
}

const ok = (status: number): boolean => status >= 200 && status < 300;

function noPodDeleted(log: SoakLog): Judged {
  const removals = log.podRemovals.filter((r) => ok(r.status));
  // Tried counts as much as done: RBAC refusing the DELETE (403) does not make asking for it right.
  const deletes = log.podRemovals.filter((r) => r.how === 'delete');
  if (log.deletesAllowed) return { checked: removals.length, broken: [] };
  return {
    checked: removals.length + deletes.length,
    broken: deletes.map(
      (r) =>
        `${r.user} ${ok(r.status) ? 'deleted' : `tried to delete (answered ${r.status})`} pod ${r.namespace}/${r.name} where an eviction was possible`,
    ),
  };
}

function pdbMinimumKept(log: SoakLog): Judged {
  const removed = log.podRemovals.filter((r) => ok(r.status));
  const broken = removed.flatMap((r) =>
    r.budgets
      .filter((b) => b.disruptionsAllowed < 1)
      .map(
        (b) =>
          `${r.user} removed pod ${r.namespace}/${r.name} (${r.how}) while PDB ${r.namespace}/${b.name} allowed no disruption`,
      ),
  );
  for (const breach of log.budgetBreaches) {
    broken.push(
      `PDB ${breach.budget} had ${breach.healthy} healthy pods, below its minimum ${breach.desired} (${new Date(breach.at).toISOString()})`,
    );
  }
  return { checked: removed.reduce((n, r) => n + r.budgets.length, 0) + log.budgetSamples, broken };
}

function noVmLost(log: SoakLog): Judged {
  const broken: string[] = [];
  for (const [key, uid] of Object.entries(log.vms.atStart)) {
    const end = log.vms.atEnd[key];
    if (!end) broken.push(`VM ${key} was lost (its VirtualMachineInstance is gone)`);
    else if (end.uid !== uid) broken.push(`VM ${key} was shut down and started again (a new VirtualMachineInstance)`);
    else if (end.deleting || end.phase === 'Succeeded' || end.phase === 'Failed') {
      broken.push(`VM ${key} is shut down at the end (phase ${end.phase}${end.deleting ? ', being deleted' : ''})`);
    }
  }
  for (const shutdown of log.vms.shutdowns) broken.push(`VM ${shutdown.key} ${shutdown.what}`);
  for (const r of log.podRemovals.filter((p) => p.launcher && ok(p.status))) {
    broken.push(`${r.user} ${r.how === 'eviction' ? 'evicted' : 'deleted'} launcher pod ${r.namespace}/${r.name}`);
  }
  const servers = novaServersKept(log.nova);
  broken.push(...servers.broken);
  return { checked: Object.keys(log.vms.atStart).length + servers.checked, broken: [...new Set(broken)] };
}

function noCordonOrphaned(log: SoakLog): Judged {
  const broken = log.nodesAtEnd
    .filter((n) => n.unschedulable && !n.personCordon && n.holds !== 'unreadable' && n.holds.length === 0)
    .map((n) => `node ${n.name} is left cordoned with no hold and no person's cordon`);
  return { checked: log.nodesAtEnd.length, broken };
}

function noHoldOrphaned(log: SoakLog): Judged {
  // A failed or aborted request keeps its hold (the safe state) until its restore: only a restored request,
  // or one with no record at all, holds nothing.
  const open = new Set(log.requests.filter((r) => r.outcome !== 'restored').map((r) => r.requestId));
  const broken: string[] = [];
  for (const node of log.nodesAtEnd) {
    if (node.holds === 'unreadable') {
      broken.push(`node ${node.name}'s ledger cannot be read at the end`);
      continue;
    }
    for (const id of node.holds) {
      if (!open.has(id))
        broken.push(`node ${node.name} is held for ${id}, a request that is restored or has no record`);
    }
  }
  return { checked: log.nodesAtEnd.length, broken };
}

/**
 * The soak's epilogue ends every maintenance before the checker runs, so a request whose record shows no
 * end by then never ends: it is a breach whatever its age, not only past the bound.
 *
 * The bound is on the time a request is drainbridge's to spend: from its start until its end, less the time
 * every slot (--max-held) was held by other nodes. A request behind a full limit waits by design (the limit
 * is the safety), and how long it waits is set by the others' maintenances (a person's 20-minute cordon),
 * which no code of ours can shorten. Time waiting while a slot was free counts in full, so a request left
 * in line beside an idle slot breaks the bound.
 */
function requestsEnd(log: SoakLog): Judged {
  const broken: string[] = [];
  for (const r of log.requests) {
    const breach = requestEndBreach(r, log);
    if (breach) broken.push(breach);
  }
  return { checked: log.requests.length, broken };
}

/** How one request breaks requests-end, or undefined. */
function requestEndBreach(r: SoakLog['requests'][number], log: SoakLog): string | undefined {
  const what = `request ${r.requestId} (${r.node}${r.origin ? `, ${r.origin}` : ''})`;
  if (!r.outcome || r.endedAt === undefined) {
    return `${what} never ended: its record shows no end (phase ${r.lastPhase ?? 'none'}) after every maintenance was ended`;
  }
  const late = lateness(r, log);
  if (late) return `${what} ${late}`;
  if (r.outcome === 'failed' && !/\w/.test(r.lastError ?? '')) return `${what} failed naming no blocker`;
  // Not started or withdrawn without a word would be an end nobody can check.
  if ((r.outcome === 'not-started' || r.outcome === 'withdrawn') && !/\w/.test(r.endReason ?? '')) {
    return `${what} ended ${r.outcome} naming no reason`;
  }
  return undefined;
}

const seconds = (ms: number): number => Math.round(ms / 1000);

/** How an ended request overran its bound (its own time: less any time behind a full limit), or undefined. */
function lateness(r: RequestHistory, log: SoakLog): string | undefined {
  // A notice's request waits for its start by design (a reboot next hour): its bound runs from that start.
  const from = requestFrom(r);
  const end = r.endedAt ?? log.endedAt;
  const blocked = fullByOthersMs(log, r.node, from, end);
  if (end - from - blocked <= log.requestBoundMs) return undefined;
  const took = `took ${seconds(end - from)} s${from > r.firstSeenAt ? ' from its planned start' : ''}`;
  const behind =
    blocked > 0 ? `, ${seconds(blocked)} s of it with all ${log.maxHeldNodes} slots held by other nodes` : '';
  return `${took}${behind} (bound ${log.requestBoundMs / 1000} s)`;
}

function heldWithinLimit(log: SoakLog): Judged {
  const broken: string[] = [];
  for (const sample of log.held) {
    if (sample.held.length > log.maxHeldNodes) {
      broken.push(`${sample.held.length} nodes held at once (limit ${log.maxHeldNodes}): ${sample.held.join(', ')}`);
    }
    if (sample.cordonedByDrainbridge.length > log.maxHeldNodes) {
      broken.push(
        `${sample.cordonedByDrainbridge.length} nodes cordoned by drainbridge at once (limit ${log.maxHeldNodes}): ${sample.cordonedByDrainbridge.join(', ')}`,
      );
    }
  }
  return { checked: log.held.length, broken: [...new Set(broken)] };
}

function personCordonKept(log: SoakLog): Judged {
  const broken = log.uncordons
    .filter((u) => u.personCordonStood && ok(u.status))
    .map((u) => `${u.user} uncordoned node ${u.node} while a person's cordon stood`);
  return { checked: log.uncordons.length, broken };
}

/** How long the agent → bus → run path may take to put a notice on a record, through faults and failovers. */
export const NOTICE_HEARD_MS = 180_000;

const noticeName = (n: NoticeHistory): string =>
  `${n.provider} ${n.what} notice on ${n.node} (announced ${new Date(n.announcedAt).toISOString()})`;

/** The requests of a notice: its node's and provider's request ids, their records changed while it stood. */
function requestsOf(n: NoticeHistory, log: SoakLog): RequestHistory[] {
  const until = (n.goneAt ?? log.endedAt) + 5_000;
  return log.requests.filter(
    (r) => r.requestId.startsWith(n.requestPrefix) && (r.changes ?? []).some((t) => t >= n.announcedAt && t <= until),
  );
}

/** A notice that stood long enough reached a record: the agent read it and run took it off the bus. */
function noticeHeard(log: SoakLog): Judged {
  const judged = log.notices.filter((n) => (n.goneAt ?? log.endedAt) - n.announcedAt >= NOTICE_HEARD_MS);
  const broken = judged
    .filter((n) => {
      const by = n.announcedAt + NOTICE_HEARD_MS;
      return !requestsOf(n, log).some((r) => (r.changes ?? []).some((t) => t >= n.announcedAt && t <= by));
    })
    .map((n) => `${noticeName(n)} stood ${NOTICE_HEARD_MS / 1000} s and no request record came of it`);
  return { checked: judged.length, broken };
}

/** A notice's move that stood long enough is on its request's record (replanned or kept). */
function noticeRescheduleFollowed(log: SoakLog): Judged {
  let checked = 0;
  const broken: string[] = [];
  for (const n of log.notices) {
    n.reschedules.forEach((move, i) => {
      const stoodUntil = n.reschedules[i + 1]?.at ?? n.goneAt ?? log.endedAt;
      // The requests that stood when it moved: recorded before, not released before.
      const requests = requestsOf(n, log).filter(
        (r) => r.firstSeenAt < move.at && (r.releasedAt === undefined || r.releasedAt > move.at),
      );
      if (stoodUntil - move.at < NOTICE_HEARD_MS || requests.length === 0) return;
      checked++;
      const to = Date.parse(move.notBefore);
      if (!requests.some((r) => (r.rescheduledTo ?? []).some((t) => Date.parse(t) === to))) {
        broken.push(`${noticeName(n)} moved to ${move.notBefore}: no request record shows the move`);
      }
    });
  }
  return { checked, broken };
}

/**
 * A notice gone (withdrawn or completed) releases what it held within the request bound: its requests end
 * restored, or not started or withdrawn if they never held the node — so its node is not left cordoned.
 */
function noticeGoneReleased(log: SoakLog): Judged {
  const gone = log.notices.filter((n) => n.goneAt !== undefined);
  const broken: string[] = [];
  let checked = 0;
  for (const n of gone) {
    for (const r of requestsOf(n, log)) {
      checked++;
      const goneAt = n.goneAt as number;
      if (r.releasedAt === undefined) {
        broken.push(
          `${noticeName(n)} ${n.gone} at ${new Date(goneAt).toISOString()}: request ${r.requestId} never released its node (last phase ${r.lastPhase ?? 'none'})`,
        );
      } else if (r.releasedAt - goneAt > log.requestBoundMs) {
        broken.push(
          `${noticeName(n)} ${n.gone}: request ${r.requestId} released its node ${Math.round((r.releasedAt - goneAt) / 1000)} s later (bound ${log.requestBoundMs / 1000} s)`,
        );
      }
    }
  }
  return { checked, broken };
}

function unexpectedExit(life: ReplicaLife): string | undefined {
  if (!life.exit) return undefined;
  const { code, signal } = life.exit;
  if (life.sentSignal === 'SIGKILL' && signal === 'SIGKILL') return undefined;
  if (life.sentSignal === 'SIGTERM' && (code === 0 || code === 143 || signal === 'SIGTERM')) return undefined;
  return `replica ${life.replica} (pid ${life.pid}) exited with ${signal ?? `code ${code}`}${life.sentSignal ? ` after ${life.sentSignal}` : ' unasked'}`;
}

function noCrash(log: SoakLog): Judged {
  const broken: string[] = [];
  for (const life of log.replicas) {
    const exit = unexpectedExit(life);
    if (exit) broken.push(exit);
    for (const line of life.crashLines.slice(0, 3)) broken.push(`replica ${life.replica} (pid ${life.pid}): ${line}`);
  }
  return { checked: log.replicas.length, broken };
}

/** Minutes whose samples make a floor: a leak raises the floor, work in flight only the peaks. */
export const FLOOR_MINUTES = 5;

/**
 * A life's RSS five minutes into its role and at its end, each as the floor (the lowest sample) of
 * FLOOR_MINUTES minutes: the first five from then, and the last five — for a shorter life, the two halves
 * of its minutes from then on, so that the windows never overlap (overlapping, they shared their lowest
 * sample). Two single samples cannot tell a leak from the swing of a replica's RSS with its work in flight
 * (150–465 MiB within minutes, soak seed 71945); a leak shows as a floor that rises.
 *
 * Its role: a standby replica holds ~170 MiB, a leader, running every execution and watch, ~400 MiB
 * (seed 396922: lives that took the lead at minute 5 went from one to the other, flat at ~410 MiB after
 * that). So a replica that took the lead is judged from five minutes after it first led, as a replica
 * that led from its start is judged from its minute 5 — a leak while leading still raises that floor.
 * Logs without per-minute samples are judged on the two samples.
 */
export function rssFloors(life: ReplicaLife): { readonly atMinute5: number; readonly atEnd: number } | undefined {
  const fromMinute5 = (life.rssByMinute ?? []).slice((life.ledFromMinute ?? 0) + 5);
  const minutes = Math.min(FLOOR_MINUTES, Math.floor(fromMinute5.length / 2));
  if (minutes >= 1) {
    return { atMinute5: Math.min(...fromMinute5.slice(0, minutes)), atEnd: Math.min(...fromMinute5.slice(-minutes)) };
  }
  // Too short a life in its role to judge (its samples say so); only a log without them uses the two samples.
  if (life.rssByMinute || life.rssAtMinute5 === undefined || life.rssAtEnd === undefined) return undefined;
  return { atMinute5: life.rssAtMinute5, atEnd: life.rssAtEnd };
}

function memoryFlat(log: SoakLog): Judged {
  const broken: string[] = [];
  let checked = 0;
  for (const life of log.replicas) {
    const floors = rssFloors(life);
    if (!floors) continue;
    checked++;
    if (floors.atEnd > 1.2 * floors.atMinute5) {
      broken.push(
        `replica ${life.replica} (pid ${life.pid}) grew from ${mib(floors.atMinute5)} at minute ${(life.ledFromMinute ?? 0) + 5}${life.ledFromMinute ? ' (5 minutes after it took the lead)' : ''} to ${mib(floors.atEnd)} at its end (floors of ${FLOOR_MINUTES} minutes; more than 1.2×)`,
      );
    }
  }
  return { checked, broken };
}

const mib = (bytes: number | undefined): string => `${Math.round((bytes ?? 0) / 2 ** 20)} MiB`;

const JUDGES: Record<Invariant, (log: SoakLog) => Judged> = {
  'no-pod-deleted': noPodDeleted,
  'pdb-minimum-kept': pdbMinimumKept,
  'no-vm-lost': noVmLost,
  'no-cordon-orphaned': noCordonOrphaned,
  'no-hold-orphaned': noHoldOrphaned,
  'requests-end': requestsEnd,
  'held-within-limit': heldWithinLimit,
  'person-cordon-kept': personCordonKept,
  'nova-reenabled': (log) => novaReenabled(log.nova, log.requests),
  'notice-heard': noticeHeard,
  'notice-reschedule-followed': noticeRescheduleFollowed,
  'notice-gone-released': noticeGoneReleased,
  'no-crash': noCrash,
  'memory-flat': memoryFlat,
};

/** Judges every invariant over `log`. */
export function checkInvariants(log: SoakLog): Verdict {
  const checked = {} as Record<Invariant, number>;
  const violations: { invariant: Invariant; detail: string }[] = [];
  for (const invariant of INVARIANTS) {
    const judged = JUDGES[invariant](log);
    checked[invariant] = judged.checked;
    for (const detail of judged.broken) violations.push({ invariant, detail });
  }
  return { checked, violations };
}
