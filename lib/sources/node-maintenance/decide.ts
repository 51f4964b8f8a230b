/**
 * What one NodeMaintenance needs, decided from it, the node it serves, its Evacuation record and the
 * other NodeMaintenances. Pure.
 *
 *  1. Not adopted yet (no drainbridge finalizer): refuse when node-maintenance-operator acts on NodeMaintenances
 *     (unless told to act anyway); refuse, as NMO's admission webhook does and with its words, a node that
 *     does not exist or one another NodeMaintenance already asks for (phase Failed, nothing else touched —
 *     and it stays refused, as NMO's would never have been created); otherwise add the finalizer first,
 *     recording the node taken (so that a deletion is seen even while the forwarder is down, and a changed
 *     `spec.nodeName` never moves the maintenance).
 *  2. Adopted, not being deleted: NMO's node Lease first (lease-gate.ts: held by another, no request);
 *     `Maintenance Requested` until the request holds the node (or has a
 *     record); the status mirrored from the record; a changed `spec.nodeName` reported with NMO's refusal.
 *  3. Being deleted: `Maintenance Ended` until the served node's ledger shows the request released (the
 *     Restore ran — it leaves a tombstone even for a request that never took its hold), then the
 *     finalizer goes and the CR with it. A node that no longer exists holds nothing and has nothing to restore.
 */
import type { V1Node } from '@kubernetes/client-node';
import { podEvictionBranches } from '../../branches/registry.ts';
import type { EvacuationObject } from '../../clients/kube/paths.ts';
import { ledgerOf } from '../../node/ledger.ts';
import type { FirstCounts } from './first-counts.ts';
import { type LeaseVerdict, leaseVerdict } from './lease-gate.ts';
import { NMO_ERRORS, NMO_EVENT_MESSAGES, type NmoEventReason } from './messages.ts';
import type { LeaseOutcome } from './node-lease.ts';
import { isHeldBy, statusFromRecord, statusPatch } from './status.ts';
import {
  DRAINBRIDGE_FINALIZER,
  NMO_DRAIN_TAINT,
  NMO_EXCLUDE_LABEL,
  NMO_FINALIZER,
  type NodeMaintenance,
  type NodeMaintenanceStatus,
  nodeMaintenanceRequestId,
  SERVED_NODE_ANNOTATION,
} from './types.ts';

export type NodeMaintenanceAction =
  | { readonly kind: 'refuse'; readonly reason: string }
  | { readonly kind: 'add-finalizer'; readonly node: string }
  /** `nmo`: node-maintenance-operator's finalizer goes too (NMO is gone and cannot remove it). */
  | { readonly kind: 'remove-finalizer'; readonly nmo?: true }
  /** A CR an earlier NMO left, whose node still shows NMO's marks: say how to undo them (Warning Event). */
  | { readonly kind: 'nmo-marks-left'; readonly message: string }
  | { readonly kind: 'publish'; readonly detailType: 'Maintenance Requested' | 'Maintenance Ended' }
  | { readonly kind: 'status'; readonly patch: Record<string, unknown> }
  | {
      readonly kind: 'event';
      readonly reason: NmoEventReason;
      readonly message: string;
      readonly type: 'Normal' | 'Warning';
      /** NMO records UncordonNode on the Node, the others on the NodeMaintenance. */
      readonly on: 'maintenance' | 'node';
    };

export interface NodeMaintenanceFacts {
  readonly nm: NodeMaintenance;
  /** The node this NodeMaintenance serves (servedNodeOf), as the informer has it; undefined: none such. */
  readonly node: V1Node | undefined;
  /** Its name: the one recorded at adoption, else `spec.nodeName`. */
  readonly servedNode: string;
  readonly record: EvacuationObject | undefined;
  /** Every other NodeMaintenance (for NMO's one-per-node rule). */
  readonly others: readonly NodeMaintenance[];
  /** Why node-maintenance-operator is taken to be installed, if it is (from its CRD). */
  readonly nmoInstalled: string | undefined;
  /** `refuse` (default): leave NodeMaintenances to NMO when it is there; `act`: handle them anyway. */
  readonly coexistence: 'refuse' | 'act';
  /** NMO's pod counts for the first status (first-counts.ts), read while the status shows none yet. */
  readonly firstCounts?: FirstCounts;
  /** What requesting the node's medik8s Lease gave this pass (undefined: not asked). */
  readonly lease?: LeaseOutcome;
  readonly now: Date;
}

/** NMO's finalizer on a CR while NMO is not installed: an earlier NMO left it, and nobody else will remove it. */
function leftByNmo(facts: NodeMaintenanceFacts): boolean {
  return (facts.nm.metadata.finalizers?.includes(NMO_FINALIZER) ?? false) && !facts.nmoInstalled;
}

function refusal(facts: NodeMaintenanceFacts): string | undefined {
  if (facts.coexistence === 'act') return undefined;
  if (leftByNmo(facts)) {
    return `NodeMaintenance ${facts.nm.metadata.name} carries the finalizer ${NMO_FINALIZER} of a node-maintenance-operator that is no longer installed: node ${facts.nm.spec?.nodeName} stays as NMO left it; drainbridge releases the NodeMaintenance when it is deleted and never uncordons what NMO cordoned`;
  }
  if (facts.nm.metadata.finalizers?.includes(NMO_FINALIZER)) {
    return `node-maintenance-operator handles NodeMaintenance ${facts.nm.metadata.name} (it carries NMO's finalizer ${NMO_FINALIZER})`;
  }
  if (facts.nmoInstalled)
    return `node-maintenance-operator is installed (${facts.nmoInstalled}) and acts on every NodeMaintenance`;
  return undefined;
}

function event(reason: NmoEventReason, on: 'maintenance' | 'node' = 'maintenance'): NodeMaintenanceAction {
  const type = reason === 'FailedMaintenance' ? 'Warning' : 'Normal';
  return { kind: 'event', reason, message: NMO_EVENT_MESSAGES[reason], type, on };
}

/** The status patch, with NMO's Event for a phase it enters (Succeeded, Failed). */
function statusAction(facts: NodeMaintenanceFacts, desired: NodeMaintenanceStatus): NodeMaintenanceAction[] {
  const patch = statusPatch(facts.nm.status, desired, facts.now);
  if (!patch) return [];
  const actions: NodeMaintenanceAction[] = [{ kind: 'status', patch }];
  if (patch.phase === 'Succeeded') actions.push(event('SucceedMaintenance'));
  if (patch.phase === 'Failed') actions.push(event('FailedMaintenance'));
  return actions;
}

function adoptedBySomeone(nm: NodeMaintenance): boolean {
  const finalizers = nm.metadata.finalizers ?? [];
  return finalizers.includes(DRAINBRIDGE_FINALIZER) || finalizers.includes(NMO_FINALIZER);
}

/** Refused at admission: never adopted, and Failed (what NMO's webhook would not have let exist). */
function refusedAtAdmission(nm: NodeMaintenance): boolean {
  return !adoptedBySomeone(nm) && nm.status?.phase === 'Failed';
}

function createdAt(nm: NodeMaintenance): number {
  const at = nm.metadata.creationTimestamp;
  return at === undefined ? Number.POSITIVE_INFINITY : new Date(at).getTime();
}

/** Does `other` ask for `node` before `nm` does: taken already, or older and not refused? */
function comesFirst(other: NodeMaintenance, nm: NodeMaintenance, node: string): boolean {
  const otherNode = other.metadata.annotations?.[SERVED_NODE_ANNOTATION] ?? other.spec?.nodeName;
  if (otherNode !== node || other.metadata.uid === nm.metadata.uid || refusedAtAdmission(other)) return false;
  if (adoptedBySomeone(other)) return true;
  const [mine, theirs] = [createdAt(nm), createdAt(other)];
  return theirs < mine || (theirs === mine && (other.metadata.name ?? '') < (nm.metadata.name ?? ''));
}

/** NMO's admission checks, in its order: the node exists, no other NodeMaintenance asks for it. */
function admissionError(facts: NodeMaintenanceFacts): string | undefined {
  const node = facts.nm.spec?.nodeName ?? '';
  if (!facts.node) return NMO_ERRORS.nodeNotFound(node);
  if (facts.others.some((other) => comesFirst(other, facts.nm, node))) return NMO_ERRORS.maintenanceExists(node);
  return undefined;
}

function planAdoption(facts: NodeMaintenanceFacts): NodeMaintenanceAction[] {
  const reason = refusal(facts);
  if (reason) return [{ kind: 'refuse', reason }];
  if (refusedAtAdmission(facts.nm)) return [];
  const invalid = admissionError(facts);
  if (invalid) return statusAction(facts, { phase: 'Failed', lastError: invalid });
  return [{ kind: 'add-finalizer', node: facts.nm.spec.nodeName }, event('BeginMaintenance')];
}

/** What NMO left on a node (it removes them when its CR goes; drainbridge only names them). */
function nmoMarksOn(node: V1Node | undefined): string[] {
  if (!node) return [];
  const marks: string[] = [];
  const name = node.metadata?.name ?? '';
  if (node.spec?.unschedulable === true) marks.push(`kubectl uncordon ${name}`);
  if (node.spec?.taints?.some((t) => t.key === NMO_DRAIN_TAINT)) {
    marks.push(`kubectl taint node ${name} ${NMO_DRAIN_TAINT}:NoSchedule-`);
  }
  if (node.metadata?.labels?.[NMO_EXCLUDE_LABEL] === 'true')
    marks.push(`kubectl label node ${name} ${NMO_EXCLUDE_LABEL}-`);
  return marks;
}

/**
 * A CR an earlier NMO left, being deleted: its finalizer is released (NMO cannot), and what NMO left on
 * the node is named, not undone — drainbridge re-enables only what it disabled. Once drainbridge's own
 * part is done when it adopted the CR too (coexistence `act`).
 */
function releaseLeftByNmo(
  facts: NodeMaintenanceFacts,
  adopted: boolean,
  own: NodeMaintenanceAction[],
): NodeMaintenanceAction[] {
  const done = !adopted || own.some((action) => action.kind === 'remove-finalizer');
  if (!done) return own;
  const events = own.filter((action) => action.kind === 'event');
  const marks = nmoMarksOn(facts.node);
  const warning: NodeMaintenanceAction[] =
    marks.length === 0
      ? []
      : [
          {
            kind: 'nmo-marks-left',
            message: `node-maintenance-operator is gone and left node ${facts.node?.metadata?.name} as it maintained it; if nothing else needs it so: ${marks.join('; ')}`,
          },
        ];
  return [{ kind: 'remove-finalizer', nmo: true }, ...events, ...warning];
}

function planDeletion(facts: NodeMaintenanceFacts, requestId: string): NodeMaintenanceAction[] {
  if (!facts.node) return [{ kind: 'remove-finalizer' }];
  // A ledger that cannot be read may still hold the request: the finalizer stays (the node stays in the
  // safe state) until drainbridge repair makes it readable.
  const read = ledgerOf(facts.node);
  if (read.status === 'unreadable') return [];
  const ledger = read.ledger;
  if (Object.hasOwn(ledger.released, requestId) && !Object.hasOwn(ledger.holds, requestId)) {
    // NMO's UncordonNode, when the restore left the node schedulable (someone else may still hold it).
    const uncordoned = facts.node.spec?.unschedulable !== true;
    return [{ kind: 'remove-finalizer' }, ...(uncordoned ? [event('UncordonNode', 'node')] : [])];
  }
  return [{ kind: 'publish', detailType: 'Maintenance Ended' }];
}

/**
 * Where the request stands in the node's ledger: not out yet, out (held, or a record written), or released.
 * Unreadable, the ledger cannot say: taken as out, so nothing is published (a request would fail at once on
 * the same ledger); the status follows the record as before.
 */
function delivery(node: V1Node, requestId: string, record: EvacuationObject | undefined): 'none' | 'out' | 'released' {
  const read = ledgerOf(node);
  if (read.status === 'unreadable') return 'out';
  if (Object.hasOwn(read.ledger.released, requestId)) return 'released';
  return Object.hasOwn(read.ledger.holds, requestId) || record ? 'out' : 'none';
}

/** The request published: asked for once the Lease allows; ended on NMO's too many lease errors. */
function requestActions(verdict: LeaseVerdict, stands: 'none' | 'out' | 'released'): NodeMaintenanceAction[] {
  if (stands === 'none' && verdict.proceed) return [{ kind: 'publish', detailType: 'Maintenance Requested' }];
  if (verdict.end && stands !== 'released') return [{ kind: 'publish', detailType: 'Maintenance Ended' }];
  return [];
}

/**
 * NMO fills the pod counts in from the first status; drainbridge's evacuation counts the node's pods only once
 * its pod branches start. Until then the counts are the first status's (facts.firstCounts), then kept as shown.
 */
function withCountsUntilRecorded(facts: NodeMaintenanceFacts, desired: NodeMaintenanceStatus): NodeMaintenanceStatus {
  const branches = facts.record?.status?.branches ?? {};
  // The pod branches are the registry's (those whose items are pods evicted), not names written here.
  if (podEvictionBranches().some((name) => branches[name])) return desired;
  const shown = facts.nm.status;
  const counts = facts.firstCounts ?? {
    totalpods: shown?.totalpods,
    evictionPods: shown?.evictionPods,
    pendingPods: shown?.pendingPods,
    pendingPodsRefs: shown?.pendingPodsRefs,
  };
  return { ...desired, ...counts };
}

export function planNodeMaintenance(facts: NodeMaintenanceFacts): NodeMaintenanceAction[] {
  const { nm, node } = facts;
  const requestId = nodeMaintenanceRequestId(nm);
  const adopted = nm.metadata.finalizers?.includes(DRAINBRIDGE_FINALIZER) ?? false;
  if (nm.metadata.deletionTimestamp) {
    const own = adopted ? planDeletion(facts, requestId) : [];
    return leftByNmo(facts) ? releaseLeftByNmo(facts, adopted, own) : own;
  }
  if (!adopted) return planAdoption(facts);
  // The node went while in maintenance: its holds went with it; NMO's status for it.
  if (!node) return statusAction(facts, { phase: 'Failed', lastError: NMO_ERRORS.nodeGone(facts.servedNode) });
  const stands = delivery(node, requestId, facts.record);
  const verdict = leaseVerdict(nm.status, facts.lease, stands !== 'none');
  const actions = requestActions(verdict, stands);
  const desired = withCountsUntilRecorded(
    facts,
    verdict.status ?? { ...statusFromRecord(facts.record, isHeldBy(node, requestId)), ...verdict.overlay },
  );
  // The maintenance stays on the node it was taken for; the edit is refused as NMO's webhook refuses it.
  if (nm.spec.nodeName !== facts.servedNode) desired.lastError = NMO_ERRORS.nodeNameUpdate;
  actions.push(...statusAction(facts, desired));
  return actions;
}
