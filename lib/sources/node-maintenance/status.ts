/**
 * A NodeMaintenance's status, filled the way node-maintenance-operator fills it, from the request's
 * Evacuation record. Pure.
 *
 *  - phase: `Running` until the evacuation ends; `Succeeded` when the record reaches NodeDrained;
 *    `Failed` when it failed (or, as NMO, when the node does not exist);
 *  - evictionPods: the pods up for eviction (the pod branches' totals); totalpods: those plus the pods
 *    drain skips (DaemonSet, mirror pods) — "all pods on the node";
 *  - pendingPods / pendingPodsRefs: pods drainbridge has asked to evict, or was refused, that are
 *    still on the node (from the pod branches' state);
 *  - drainProgress: moved × 100 / evictionPods (NMO's formula), 100 once Succeeded;
 *  - lastError: the failure, else NMO's quorum refusal while drainbridge's quorum guard holds the drain
 *    back, else the first blocker (NMO: the latest reconcile error); for a request
 *    still waiting for a maintenance slot (its record written, its node not held yet), that it waits and
 *    why, as its record says (`waiting`: a closed health gate, a full zone, a paused admission).
 */
import type { V1Node } from '@kubernetes/client-node';
import type { DrainState } from '../../branches/pods/tracking.ts';
import { podEvictionBranches } from '../../branches/registry.ts';
import type { EvacuationObject } from '../../clients/kube/paths.ts';
import { ledgerOf } from '../../node/ledger.ts';
import { sameJson } from '../../util/same-json.ts';
import { NMO_ERRORS } from './messages.ts';
import type { MaintenancePhase, NodeMaintenanceStatus, PodReference } from './types.ts';

function phaseOf(recordPhase: string | undefined): MaintenancePhase {
  if (recordPhase === 'NodeDrained') return 'Succeeded';
  if (recordPhase === 'Failed') return 'Failed';
  return 'Running';
}

function pendingOf(record: EvacuationObject): PodReference[] {
  const refs: PodReference[] = [];
  for (const branch of podEvictionBranches()) {
    const state = record.status?.branches?.[branch]?.state as DrainState | undefined;
    for (const pod of Object.values(state?.pods ?? {})) {
      const [namespace = '', name = ''] = pod.name.split('/');
      refs.push({ namespace, name });
    }
  }
  return refs.sort((a, b) => `${a.namespace}/${a.name}`.localeCompare(`${b.namespace}/${b.name}`));
}

/**
 * NMO's refusal for a control-plane node whose drain would cost etcd quorum, with drainbridge's reason,
 * while the drain's quorum guard holds the evacuation back (an open ControlPlaneQuorum blocker span).
 */
function quorumRefusal(record: EvacuationObject): string | undefined {
  for (const branch of Object.values(record.status?.branches ?? {})) {
    const open = branch.blockerSpans?.find((span) => span.code === 'ControlPlaneQuorum' && !span.to);
    if (open) return `${NMO_ERRORS.controlPlaneQuorum(record.spec.nodeName)}: ${open.reason ?? ''}`.replace(/: $/, '');
  }
  return undefined;
}

const WAITING_PREFIX = 'waiting for a free maintenance slot';

/** Said while a request waits in line for a maintenance slot (drainbridge's admission) and its record says no reason. */
export const WAITING_FOR_SLOT =
  "waiting for a free maintenance slot: as many nodes as drainbridge may hold at once are in maintenance, the node's zone or pool is at its limit, a health gate is closed or admission is paused (DRAINBRIDGE_MAX_HELD_NODES, DRAINBRIDGE_SLOT_LIMITS, DRAINBRIDGE_SPREAD_LIMITS, DRAINBRIDGE_MIN_SCHEDULABLE, DRAINBRIDGE_GATES, DRAINBRIDGE_BREAKER); `drainbridge status` shows the line and why each request waits";

/** Does the node's ledger hold the request (unreadable: taken as held, nothing is claimed about waiting)? */
export function isHeldBy(node: V1Node, requestId: string): boolean {
  const read = ledgerOf(node);
  return read.status === 'unreadable' || Object.hasOwn(read.ledger.holds, requestId);
}

/** A request still in line: that it waits, and the reason admission gave at its last decision when it gave one. */
function waitingStatus(record: EvacuationObject): NodeMaintenanceStatus {
  const waiting = record.status?.waiting;
  return {
    phase: 'Running',
    drainProgress: 0,
    lastError: waiting ? `${WAITING_PREFIX}: ${waiting}` : WAITING_FOR_SLOT,
  };
}

/**
 * The status for a maintenance whose node exists, from its record (undefined: not admitted yet) and
 * whether the request holds the node. A record with no phase whose request holds nothing waits for a slot.
 */
export function statusFromRecord(record: EvacuationObject | undefined, held = true): NodeMaintenanceStatus {
  if (!record) return { phase: 'Running' };
  if (!record.status?.phase && !held) return waitingStatus(record);
  const branches = record.status?.branches ?? {};
  let evictionPods = 0;
  let moved = 0;
  for (const branch of podEvictionBranches()) {
    evictionPods += branches[branch]?.total ?? 0;
    moved += branches[branch]?.moved ?? 0;
  }
  const phase = phaseOf(record.status?.phase);
  const pending = phase === 'Succeeded' ? [] : pendingOf(record);
  const status: NodeMaintenanceStatus = {
    phase,
    evictionPods,
    totalpods: evictionPods + (branches.pods?.skipped ?? 0),
    drainProgress: phase === 'Succeeded' ? 100 : evictionPods > 0 ? Math.floor((moved * 100) / evictionPods) : 0,
  };
  if (pending.length > 0) {
    status.pendingPods = pending.map((ref) => ref.name);
    status.pendingPodsRefs = pending;
  }
  const lastError = record.status?.lastError ?? quorumRefusal(record) ?? record.status?.firstBlocker;
  if (lastError) status.lastError = lastError;
  return status;
}

const MIRRORED = [
  'phase',
  'drainProgress',
  'lastError',
  'pendingPods',
  'pendingPodsRefs',
  'totalpods',
  'evictionPods',
] as const;

/**
 * The JSON merge patch of `.status` that makes `current` show `desired` (lastUpdate set to `now`), or
 * undefined when nothing mirrored changed. errorOnLeaseCount only when `desired` sets it.
 */
export function statusPatch(
  current: NodeMaintenanceStatus | undefined,
  desired: NodeMaintenanceStatus,
  now: Date,
): Record<string, unknown> | undefined {
  const patch: Record<string, unknown> = {};
  for (const field of MIRRORED) {
    const want = desired[field];
    if (sameJson(current?.[field], want)) continue;
    patch[field] = want ?? null;
  }
  // NMO's lease error count: written only when the Lease rules (lease-gate.ts) set it.
  const count = desired.errorOnLeaseCount;
  if (count !== undefined && (current?.errorOnLeaseCount ?? 0) !== count) patch.errorOnLeaseCount = count;
  if (Object.keys(patch).length === 0) return undefined;
  patch.lastUpdate = `${now.toISOString().slice(0, 19)}Z`;
  return patch;
}
