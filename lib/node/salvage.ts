/**
 * What `drainbridge repair` writes in place of a ledger that cannot be read. Pure. It keeps every part of
 * the damaged text that still reads as drainbridge wrote it (each hold, tombstone and the first hold's
 * record of changes on its own), and fills in the rest from the node as it is, choosing the safe side
 * wherever the damage hides what drainbridge did:
 * - a node that is cordoned stays held (a hold named `repaired-<node>` when none survived), so it keeps
 *   counting against the maintenance limit until someone ends it with `drainbridge restore`;
 * - the cordon is recorded as drainbridge's only when managedFields say drainbridge wrote it; otherwise
 *   Restore leaves it (a person uncordons by hand);
 * - an autoscaler annotation is claimed only when managedFields say drainbridge wrote that key with the
 *   value drainbridge sets; otherwise Restore leaves it, because removing someone else's
 *   `scale-down-disabled` could let an autoscaler take a node away;
 * - compatibility taints are not claimed: the taints list is atomic, so its owner is whoever wrote any
 *   taint last (the node lifecycle controller, for one), which says nothing about who added this one.
 */
import type { V1Node } from '@kubernetes/client-node';
import { FIELD_MANAGER } from '../clients/kube/field-manager.ts';
import { annotationOwner, cordonOwner } from './field-owner.ts';
import { CHANGES_SCHEMA, HOLD_ANNOTATIONS, HOLD_SCHEMA, type Hold, type Ledger, type LedgerChanges } from './ledger.ts';

export interface SalvagedLedger {
  readonly ledger: Ledger;
  /** What was kept, dropped, derived or added, as sentences for the operator. */
  readonly notes: readonly string[];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parsed(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    return isObject(value) ? value : {};
  } catch {
    return {};
  }
}

function salvageHolds(damaged: Record<string, unknown>, notes: string[]): Record<string, Hold> {
  const holds: Record<string, Hold> = {};
  if (!isObject(damaged.holds)) {
    if (damaged.holds !== undefined) notes.push('holds: not a map; nothing could be kept from it');
    return holds;
  }
  for (const [requestId, value] of Object.entries(damaged.holds)) {
    const hold = HOLD_SCHEMA.safeParse(value);
    if (hold.success) {
      holds[requestId] = hold.data;
      notes.push(`kept hold ${requestId} (${hold.data.origin}, ${hold.data.requester}, since ${hold.data.since})`);
    } else notes.push(`dropped hold ${requestId}: ${JSON.stringify(value)} is not a hold`);
  }
  return holds;
}

function salvageReleased(damaged: Record<string, unknown>, notes: string[]): Record<string, string> {
  const released: Record<string, string> = {};
  if (!isObject(damaged.released)) return released;
  for (const [requestId, at] of Object.entries(damaged.released)) {
    if (typeof at === 'string' && !Number.isNaN(Date.parse(at)) && /^\d{4}-\d\d-\d\dT/.test(at)) {
      released[requestId] = new Date(at).toISOString();
    } else notes.push(`dropped tombstone ${requestId}: ${JSON.stringify(at)} is not a date`);
  }
  return released;
}

/** The first hold's record of changes, derived from the node when the damaged one cannot be read. */
function derivedChanges(node: V1Node, notes: string[]): LedgerChanges {
  const cordoned = node.spec?.unschedulable === true;
  const owner = cordonOwner(node);
  const ours = cordoned && owner.known && owner.manager === FIELD_MANAGER;
  if (ours) notes.push("the cordon is drainbridge's (managedFields): restore will uncordon the node");
  else if (cordoned) {
    const who = owner.known ? `it was set by ${owner.manager}` : 'the API cannot say who set it';
    notes.push(`the cordon is not known to be drainbridge's (${who}): restore will leave it; uncordon by hand`);
  }
  const annotations = claimedAnnotations(node, notes);
  notes.push('taints on the node are not claimed: restore will leave them');
  return { priorUnschedulable: cordoned && !ours, cordoned: ours, annotations, taints: [] };
}

/** The hold annotations on the node that managedFields say drainbridge set, with drainbridge's value. */
function claimedAnnotations(node: V1Node, notes: string[]): Record<string, string> {
  const present = node.metadata?.annotations ?? {};
  const claimed: Record<string, string> = {};
  for (const [key, value] of Object.entries(HOLD_ANNOTATIONS)) {
    if (present[key] === undefined) continue;
    const owner = annotationOwner(node, key);
    if (owner === FIELD_MANAGER && present[key] === value) {
      claimed[key] = value;
      notes.push(`annotation ${key} is drainbridge's (managedFields): restore will remove it`);
    } else {
      const who = owner ? `it was set by ${owner}` : 'the API cannot say who set it';
      notes.push(`annotation ${key} is not known to be drainbridge's (${who}): restore will leave it`);
    }
  }
  return claimed;
}

/** The ledger to write in place of `text` on `node` (`operator` names whoever runs the repair). */
export function salvageLedger(node: V1Node, text: string, now: Date, operator: string): SalvagedLedger {
  const notes: string[] = [];
  const damaged = parsed(text);
  const holds = salvageHolds(damaged, notes);
  const released = salvageReleased(damaged, notes);
  const kept = CHANGES_SCHEMA.safeParse(damaged.changes);
  const cordoned = node.spec?.unschedulable === true;
  if (Object.keys(holds).length === 0 && cordoned) {
    const requestId = `repaired-${node.metadata?.name ?? 'node'}`;
    holds[requestId] = { requester: operator, origin: 'manual', since: now.toISOString() };
    notes.push(
      `no hold survived and the node is cordoned: hold ${requestId} keeps it held; end it with drainbridge restore`,
    );
  }
  if (Object.keys(holds).length === 0) {
    notes.push('no hold survived and the node is not cordoned: the node is free');
    return { ledger: { holds: {}, released }, notes };
  }
  let changes: LedgerChanges;
  if (kept.success) {
    changes = kept.data;
    notes.push('kept the record of what the first hold changed');
  } else changes = derivedChanges(node, notes);
  return { ledger: { holds, released, changes }, notes };
}
