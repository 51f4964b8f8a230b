/**
 * The requestId of a cordon, derived from cluster state alone (the forwarder may only read nodes), so
 * that every replica and every restart computes the same id for the same cordon:
 *
 *   cordon.<node name>.<hash of node uid + the managedFields entry that owns spec.unschedulable>
 *
 * The entry is the API server's own record of who last set `spec.unschedulable` (its manager, operation
 * and time to the second). A new cordon after an uncordon is a new entry time, hence a new request; the
 * node's uid keeps a deleted-and-recreated node of the same name apart. Once the workflow holds the node
 * for a cordon, the ledger's hold names the request and wins (see decide.ts), so later writes by the same
 * manager that move the entry's time cannot start a second evacuation. Pure.
 */
import { createHash } from 'node:crypto';
import type { V1ManagedFieldsEntry, V1Node } from '@kubernetes/client-node';

/** The managedFields entry that owns `spec.unschedulable`, if the API server recorded one. */
export function unschedulableOwner(node: V1Node): V1ManagedFieldsEntry | undefined {
  const entries = node.metadata?.managedFields ?? [];
  return entries.find((entry) => {
    if (entry.subresource) return false;
    const spec = (entry.fieldsV1 as Record<string, Record<string, unknown>> | undefined)?.['f:spec'];
    return spec !== undefined && Object.hasOwn(spec, 'f:unschedulable');
  });
}

/** `metav1.Time` as the API server wrote it (client-node may have turned it into a Date). */
function timeText(time: unknown): string {
  if (time instanceof Date) return `${time.toISOString().slice(0, 19)}Z`;
  return typeof time === 'string' ? time : '';
}

/** The label part of the id: the node name, shortened so the whole id stays within 128 characters. */
function namePart(nodeName: string): string {
  return nodeName.slice(0, 100).replace(/[-.]+$/, '') || 'node';
}

/** The cordon's requestId and who cordoned (the entry's manager), from the node as it is now. */
export function cordonRequestId(node: V1Node): { requestId: string; requester: string } {
  const owner = unschedulableOwner(node);
  const identity = [node.metadata?.uid ?? '', owner?.manager ?? '', owner?.operation ?? '', timeText(owner?.time)].join(
    '|',
  );
  const hash = createHash('sha256').update(identity).digest('hex').slice(0, 12);
  return {
    requestId: `cordon.${namePart(node.metadata?.name ?? '')}.${hash}`,
    requester: owner?.manager ? `${owner.manager} (cordon)` : 'unknown (cordon)',
  };
}

/** Keeps only what the cordon source reads of managedFields: the entry owning `spec.unschedulable`. */
export function trimManagedFields(node: V1Node): V1Node {
  if (!node.metadata?.managedFields) return node;
  const owner = unschedulableOwner(node);
  return { ...node, metadata: { ...node.metadata, managedFields: owner ? [owner] : [] } };
}
