/**
 * Watches the simulated cluster for the soak, from the simulator's side only: its request log (what
 * drainbridge's accounts asked and how they were answered) and its store's watches (every change to
 * nodes, budgets, VMs and Evacuation records, in order). `snapshot()` turns what it saw into the
 * SoakLog the checker judges.
 */
import type { Simulator } from '../sim/index.ts';
import type { KubeObject, WatchEvent } from '../sim/store/types.ts';
import { ledgerHolds } from '../test/support/invariants.ts';
import type { BudgetBreach, HeldSample, NodeAtEnd, PodRemoval, RequestHistory, VmHistory } from './log.ts';

const NODES = { group: '', resource: 'nodes' };
const PDBS = { group: 'policy', resource: 'poddisruptionbudgets' };
const VMIS = { group: 'kubevirt.io', resource: 'virtualmachineinstances' };
const EVACUATIONS = { group: 'drainbridge.io', resource: 'evacuations' };
const LEDGER = 'drainbridge.io/ledger';

const unschedulable = (node: KubeObject): boolean =>
  (node.spec as { unschedulable?: boolean } | undefined)?.unschedulable === true;

/** Whether drainbridge's field manager wrote the node's current cordon (managedFields). */
function cordonedByDrainbridge(node: KubeObject): boolean {
  if (!unschedulable(node)) return false;
  const entries = (node.metadata.managedFields ?? []) as { manager?: string; fieldsV1?: unknown }[];
  const owner = entries.find((e) => JSON.stringify(e.fieldsV1 ?? {}).includes('"f:unschedulable"'));
  return owner?.manager === 'drainbridge';
}

function holdsOf(node: KubeObject): readonly string[] | 'unreadable' {
  if (ledgerHolds(node) === 'unreadable') return 'unreadable';
  const text = node.metadata.annotations?.[LEDGER];
  if (!text) return [];
  return Object.keys((JSON.parse(text) as { holds: Record<string, unknown> }).holds);
}

/** What a person did to nodes: the soak's people write here before (uncordon) or after (cordon) acting. */
export interface People {
  readonly cordoned: Set<string>;
}

interface Mutable {
  podRemovals: PodRemoval[];
  uncordons: { at: number; user: string; node: string; status: number; personCordonStood: boolean }[];
  held: HeldSample[];
  shutdowns: { key: string; at: number; what: string }[];
  requests: Map<string, RequestHistory>;
  budgetBreaches: BudgetBreach[];
  budgetSamples: number;
}

export interface Observer {
  /** Reads the request log since the last call (call often: the log keeps the last 100 000 requests). */
  drainLog(): void;
  budgetBreaches(): readonly BudgetBreach[];
  budgetSamples(): number;
  snapshot(): {
    podRemovals: readonly PodRemoval[];
    uncordons: Mutable['uncordons'];
    held: readonly HeldSample[];
    vms: VmHistory;
    requests: readonly RequestHistory[];
    nodesAtEnd: readonly NodeAtEnd[];
  };
  stop(): void;
}

function vmiKey(vmi: KubeObject): string {
  return `${vmi.metadata.namespace}/${vmi.metadata.name}`;
}

function watchVmis(sim: Simulator, atStart: Record<string, string>, into: Mutable) {
  return sim.store.watch(VMIS, { resourceVersion: sim.store.currentResourceVersion() }, (event: WatchEvent) => {
    const key = vmiKey(event.object);
    if (atStart[key] !== event.object.metadata.uid) return;
    const phase = (event.object.status as { phase?: string } | undefined)?.phase;
    if (event.type === 'DELETED') into.shutdowns.push({ key, at: Date.now(), what: 'was deleted' });
    else if (phase === 'Succeeded' || phase === 'Failed') {
      into.shutdowns.push({ key, at: Date.now(), what: `was shut down (phase ${phase})` });
    }
  });
}

function watchNodes(sim: Simulator, into: Mutable) {
  const sample = () => {
    const nodes = sim.store.list(NODES).items;
    const held = nodes.filter((n) => ledgerHolds(n) !== 'none').map((n) => n.metadata.name ?? '');
    const cordoned = nodes.filter(cordonedByDrainbridge).map((n) => n.metadata.name ?? '');
    const last = into.held.at(-1);
    if (last && last.held.join() === held.join() && last.cordonedByDrainbridge.join() === cordoned.join()) return;
    into.held.push({ at: Date.now(), held, cordonedByDrainbridge: cordoned });
  };
  sample();
  const wasCordoned = new Map(sim.store.list(NODES).items.map((n) => [n.metadata.name ?? '', unschedulable(n)]));
  return {
    wasCordoned,
    watch: sim.store.watch(NODES, { resourceVersion: sim.store.currentResourceVersion() }, sample),
  };
}

function watchBudgets(sim: Simulator, into: Mutable) {
  return sim.store.watch(PDBS, { resourceVersion: sim.store.currentResourceVersion() }, (event: WatchEvent) => {
    const name = event.object.metadata.name ?? '';
    // KubeVirt's own budget asks for 2 while a VM migrates (its target starting): not a minimum anyone breaks.
    if (event.type === 'DELETED' || name.startsWith('kubevirt-disruption-budget-')) return;
    const status = event.object.status as { currentHealthy?: number; desiredHealthy?: number } | undefined;
    if (status?.currentHealthy === undefined || status.desiredHealthy === undefined) return;
    into.budgetSamples++;
    if (status.currentHealthy < status.desiredHealthy) {
      into.budgetBreaches.push({
        at: Date.now(),
        budget: `${event.object.metadata.namespace}/${name}`,
        healthy: status.currentHealthy,
        desired: status.desiredHealthy,
      });
    }
  });
}

const END_OF = (phase: string | undefined, status: Record<string, unknown>): RequestHistory['outcome'] => {
  if ((status.restore as { finishedAt?: string } | undefined)?.finishedAt) return 'restored';
  if (phase === 'Failed') return status.abortRequested ? 'aborted' : 'failed';
  if (phase === 'NodeDrained' || phase === 'MaintenanceStarted' || phase === 'NodeRunning') return 'succeeded';
  // A request that never held its node and ended without failing: only with the instant it ended.
  const ended = status.outcome;
  if (typeof status.endedAt === 'string' && (ended === 'not-started' || ended === 'withdrawn')) return ended;
  return undefined;
};

const RELEASED = new Set(['restored', 'not-started', 'withdrawn']);

/** The latest planned start and the reschedules' new starts, from a record's status. */
function startOf(status: Record<string, unknown>): { startAt?: number; rescheduledTo?: string[] } {
  const startAt = Date.parse((status.start as { startAt?: string } | undefined)?.startAt ?? '');
  const moves = Array.isArray(status.reschedules) ? (status.reschedules as { to?: string }[]) : [];
  const to = moves.flatMap((m) => (typeof m.to === 'string' ? [m.to] : []));
  return { ...(Number.isFinite(startAt) ? { startAt } : {}), ...(to.length > 0 ? { rescheduledTo: to } : {}) };
}

/** What a record's status says of the request's end: outcome, blocker, reason, and when it released its node. */
function endOf(seen: RequestHistory | undefined, status: Record<string, unknown>, now: number) {
  const latest = END_OF(status.phase as string | undefined, status);
  const outcome = latest ?? seen?.outcome;
  const wasReleased = RELEASED.has(seen?.outcome ?? '');
  const releasedAt = RELEASED.has(latest ?? '') && !wasReleased ? now : seen?.releasedAt;
  const endedAt = seen?.endedAt ?? (outcome ? now : undefined);
  return {
    ...(outcome ? { outcome } : {}),
    ...(endedAt !== undefined ? { endedAt } : {}),
    ...(typeof status.lastError === 'string' ? { lastError: status.lastError } : {}),
    ...(typeof status.outcomeReason === 'string' ? { endReason: status.outcomeReason } : {}),
    ...(releasedAt !== undefined ? { releasedAt } : {}),
  };
}

/** The request's history after one more change to its record. */
function nextHistory(seen: RequestHistory | undefined, record: KubeObject, now: number): RequestHistory {
  const spec = record.spec as { requestId?: string; nodeName?: string; origin?: string };
  const status = (record.status ?? {}) as Record<string, unknown>;
  const start = startOf(status);
  const startAt = start.startAt ?? seen?.startAt;
  const rescheduledTo = start.rescheduledTo ?? seen?.rescheduledTo;
  const changes = [...(seen?.changes ?? [])];
  if (changes.length < 400) changes.push(now);
  return {
    requestId: spec.requestId ?? record.metadata.name ?? '',
    node: spec.nodeName ?? '',
    ...(spec.origin ? { origin: spec.origin } : {}),
    firstSeenAt: seen?.firstSeenAt ?? now,
    ...endOf(seen, status, now),
    ...(typeof status.phase === 'string' ? { lastPhase: status.phase } : {}),
    ...(startAt !== undefined ? { startAt } : {}),
    changes,
    ...(rescheduledTo ? { rescheduledTo } : {}),
  };
}

function watchRequests(sim: Simulator, into: Mutable) {
  return sim.store.watch(EVACUATIONS, {}, (event: WatchEvent) => {
    if (event.type === 'DELETED') return;
    const requestId = (event.object.spec as { requestId?: string }).requestId ?? event.object.metadata.name ?? '';
    into.requests.set(requestId, nextHistory(into.requests.get(requestId), event.object, Date.now()));
  });
}

/** Starts watching; `drainbridgeUsers` are the accounts drainbridge acts as (run replicas and CLI users). */
export function observe(sim: Simulator, drainbridgeUsers: readonly string[], people: People): Observer {
  const into: Mutable = {
    podRemovals: [],
    uncordons: [],
    held: [],
    shutdowns: [],
    requests: new Map(),
    budgetBreaches: [],
    budgetSamples: 0,
  };
  const atStart = Object.fromEntries(sim.store.list(VMIS).items.map((v) => [vmiKey(v), v.metadata.uid ?? '']));
  const nodes = watchNodes(sim, into);
  const watches = [nodes.watch, watchVmis(sim, atStart, into), watchBudgets(sim, into), watchRequests(sim, into)];
  const uncordonWatch = watchUncordons(sim, people, nodes.wasCordoned, into);
  let mark = sim.requestLog.mark();
  const users = new Set(drainbridgeUsers);
  const drainLog = () => {
    for (const record of sim.requestLog.all({ since: mark })) {
      mark = record.seq;
      if (!users.has(record.user) || record.resource !== 'pods' || !record.write) continue;
      const eviction = record.subresource === 'eviction';
      if (!eviction && (record.verb !== 'delete' || record.subresource)) continue;
      into.podRemovals.push({
        at: record.at,
        user: record.user,
        namespace: record.namespace,
        name: record.name,
        how: eviction ? 'eviction' : 'delete',
        status: record.status,
        budgets: [],
        launcher: record.name.startsWith('virt-launcher-'),
      });
    }
  };
  return {
    drainLog,
    budgetBreaches: () => into.budgetBreaches,
    budgetSamples: () => into.budgetSamples,
    snapshot: () => {
      drainLog();
      return {
        podRemovals: into.podRemovals,
        uncordons: into.uncordons,
        held: into.held,
        vms: { atStart, atEnd: vmisAtEnd(sim), shutdowns: into.shutdowns },
        requests: [...into.requests.values()],
        nodesAtEnd: sim.store.list(NODES).items.map((n) => ({
          name: n.metadata.name ?? '',
          unschedulable: unschedulable(n),
          holds: holdsOf(n),
          personCordon: people.cordoned.has(n.metadata.name ?? ''),
        })),
      };
    },
    stop: () => {
      for (const watch of [...watches, uncordonWatch]) watch.stop();
    },
  };
}

/**
 * Every uncordon (a node going from cordoned to schedulable). The soak's people drop their cordon from
 * `people` before they uncordon, so an uncordon while it stands is someone else's: drainbridge's, the
 * only other writer of the field here.
 */
function watchUncordons(sim: Simulator, people: People, wasCordoned: Map<string, boolean>, into: Mutable) {
  return sim.store.watch(NODES, { resourceVersion: sim.store.currentResourceVersion() }, (event: WatchEvent) => {
    const name = event.object.metadata.name ?? '';
    const now = unschedulable(event.object);
    if (wasCordoned.get(name) && !now) {
      into.uncordons.push({
        at: Date.now(),
        user: 'drainbridge (the only other writer)',
        node: name,
        status: 200,
        personCordonStood: people.cordoned.has(name),
      });
    }
    wasCordoned.set(name, now);
  });
}

function vmisAtEnd(sim: Simulator): VmHistory['atEnd'] {
  return Object.fromEntries(
    sim.store.list(VMIS).items.map((v) => [
      vmiKey(v),
      {
        uid: v.metadata.uid ?? '',
        phase: (v.status as { phase?: string } | undefined)?.phase ?? '',
        deleting: Boolean(v.metadata.deletionTimestamp),
      },
    ]),
  );
}
