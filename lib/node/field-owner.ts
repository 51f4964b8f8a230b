/**
 * Who last set `spec.unschedulable`, from the node's `metadata.managedFields` (the apiserver's record of
 * which field manager wrote which field). drainbridge writes nodes as field manager `drainbridge`, so a
 * cordon written by anyone else after drainbridge's — `kubectl uncordon` then `kubectl cordon`, a
 * controller, a `kubectl patch` — shows another manager as the owner, and Restore leaves that cordon.
 *
 * What cannot be told, by design of the API: `kubectl cordon` on a node that is already cordoned sends no
 * write at all (kubectl prints "already cordoned"), so a person who cordons over drainbridge's cordon
 * leaves no trace in the API, in managedFields or in any watch; nor does a write that sets the same
 * value again (the apiserver records no change). A cluster that strips managedFields gives no answer
 * either; then the ledger decides as before.
 */
import type { V1ManagedFieldsEntry, V1Node } from '@kubernetes/client-node';
import { FIELD_MANAGER } from '../clients/kube/field-manager.ts';

export { FIELD_MANAGER };

export type CordonOwner =
  /** The node carries no managedFields, or none owns the field: the API cannot say. */
  | { readonly known: false }
  | { readonly known: true; readonly manager: string; readonly operation?: string; readonly time?: string };

function ownsUnschedulable(entry: V1ManagedFieldsEntry): boolean {
  const fields = entry.fieldsV1 as Record<string, unknown> | undefined;
  const spec = fields?.['f:spec'] as Record<string, unknown> | undefined;
  return spec !== undefined && Object.hasOwn(spec, 'f:unschedulable');
}

/** The field manager that owns `spec.unschedulable` (main resource, not a subresource). */
export function cordonOwner(node: V1Node): CordonOwner {
  const entry = (node.metadata?.managedFields ?? []).find((e) => !e.subresource && ownsUnschedulable(e));
  if (!entry?.manager) return { known: false };
  return {
    known: true,
    manager: entry.manager,
    ...(entry.operation ? { operation: entry.operation } : {}),
    ...(entry.time ? { time: new Date(entry.time).toISOString() } : {}),
  };
}

/** The cordon is someone else's: the API says another field manager set `spec.unschedulable` last. */
export function isCordonedBySomeoneElse(node: V1Node): (CordonOwner & { known: true }) | undefined {
  if (node.spec?.unschedulable !== true) return undefined;
  const owner = cordonOwner(node);
  return owner.known && owner.manager !== FIELD_MANAGER ? owner : undefined;
}

/**
 * The field manager that owns annotation `key` (`f:metadata.f:annotations.f:<key>`). Annotations are a
 * map, so the apiserver records each key's owner on its own: unlike the atomic taints list, the answer
 * survives other managers writing other keys.
 */
export function annotationOwner(node: V1Node, key: string): string | undefined {
  const entry = (node.metadata?.managedFields ?? []).find((e) => {
    if (e.subresource) return false;
    const metadata = (e.fieldsV1 as Record<string, unknown> | undefined)?.['f:metadata'] as
      | Record<string, unknown>
      | undefined;
    const annotations = metadata?.['f:annotations'] as Record<string, unknown> | undefined;
    return annotations !== undefined && Object.hasOwn(annotations, `f:${key}`);
  });
  return entry?.manager;
}
