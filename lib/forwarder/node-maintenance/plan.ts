/**
 * What one NodeMaintenance needs, decided from it, its node and its Evacuation record. Pure.
 *
 *  1. Not adopted yet (no drainbridge finalizer): refuse when node-maintenance-operator acts on NodeMaintenances
 *     (unless told to act anyway); report a missing node as NMO does (phase Failed, no request);
 *     otherwise add the finalizer first, so that a deletion is seen even while the forwarder is down.
 *  2. Adopted, not being deleted: `Maintenance Requested` until the request holds the node (or has a
 *     record); the status mirrored from the record.
 *  3. Being deleted: `Maintenance Ended` until the node's ledger shows the request released (the
 *     Restore ran — it leaves a tombstone even for a request that never took its hold), then the
 *     finalizer goes and the CR with it. A node that no longer exists has nothing to restore.
 */
import type { V1Node } from '@kubernetes/client-node';
import type { EvacuationObject } from '../../kube/paths.ts';
import { ledgerOf } from '../../node/ledger.ts';
import { nodeNotFoundStatus, statusFromRecord, statusPatch } from './status.ts';
import { DRAINBRIDGE_FINALIZER, NMO_FINALIZER, type NodeMaintenance, nodeMaintenanceRequestId } from './types.ts';

export type NodeMaintenanceAction =
  | { readonly kind: 'refuse'; readonly reason: string }
  | { readonly kind: 'add-finalizer' }
  | { readonly kind: 'remove-finalizer' }
  | { readonly kind: 'publish'; readonly detailType: 'Maintenance Requested' | 'Maintenance Ended' }
  | { readonly kind: 'status'; readonly patch: Record<string, unknown> };

export interface NodeMaintenanceFacts {
  readonly nm: NodeMaintenance;
  readonly node: V1Node | undefined;
  readonly record: EvacuationObject | undefined;
  /** Why node-maintenance-operator is taken to be installed, if it is (from its CRD). */
  readonly nmoInstalled: string | undefined;
  /** `refuse` (default): leave NodeMaintenances to NMO when it is there; `act`: handle them anyway. */
  readonly coexistence: 'refuse' | 'act';
  readonly now: Date;
}

function refusal(facts: NodeMaintenanceFacts): string | undefined {
  if (facts.coexistence === 'act') return undefined;
  if (facts.nm.metadata.finalizers?.includes(NMO_FINALIZER)) {
    return `node-maintenance-operator handles NodeMaintenance ${facts.nm.metadata.name} (it carries NMO's finalizer ${NMO_FINALIZER})`;
  }
  if (facts.nmoInstalled)
    return `node-maintenance-operator is installed (${facts.nmoInstalled}) and acts on every NodeMaintenance`;
  return undefined;
}

function statusAction(
  facts: NodeMaintenanceFacts,
  desired: ReturnType<typeof statusFromRecord>,
): NodeMaintenanceAction[] {
  const patch = statusPatch(facts.nm.status, desired, facts.now);
  return patch ? [{ kind: 'status', patch }] : [];
}

function planDeletion(facts: NodeMaintenanceFacts, requestId: string): NodeMaintenanceAction[] {
  if (!facts.node) return [{ kind: 'remove-finalizer' }];
  // A ledger that cannot be read may still hold the request: the finalizer stays (the node stays in the
  // safe state) until drainbridge repair makes it readable.
  const read = ledgerOf(facts.node);
  if (read.status === 'unreadable') return [];
  const ledger = read.ledger;
  if (Object.hasOwn(ledger.released, requestId) && !Object.hasOwn(ledger.holds, requestId)) {
    return [{ kind: 'remove-finalizer' }];
  }
  return [{ kind: 'publish', detailType: 'Maintenance Ended' }];
}

export function planNodeMaintenance(facts: NodeMaintenanceFacts): NodeMaintenanceAction[] {
  const { nm, node } = facts;
  const requestId = nodeMaintenanceRequestId(nm);
  const adopted = nm.metadata.finalizers?.includes(DRAINBRIDGE_FINALIZER) ?? false;
  if (nm.metadata.deletionTimestamp) return adopted ? planDeletion(facts, requestId) : [];
  if (!adopted) {
    const reason = refusal(facts);
    if (reason) return [{ kind: 'refuse', reason }];
    if (!node) return statusAction(facts, nodeNotFoundStatus(nm.spec.nodeName));
    return [{ kind: 'add-finalizer' }];
  }
  if (!node) return statusAction(facts, nodeNotFoundStatus(nm.spec.nodeName));
  const read = ledgerOf(node);
  const actions: NodeMaintenanceAction[] = [];
  // Unreadable, the ledger cannot say whether the request was delivered: nothing is published (a request
  // would fail at once on the same ledger); the status follows the record as before.
  const delivered =
    read.status === 'unreadable' ||
    Object.hasOwn(read.ledger.holds, requestId) ||
    Object.hasOwn(read.ledger.released, requestId) ||
    !!facts.record;
  if (!delivered) actions.push({ kind: 'publish', detailType: 'Maintenance Requested' });
  actions.push(...statusAction(facts, statusFromRecord(facts.record)));
  return actions;
}
