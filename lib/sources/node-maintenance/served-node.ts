/**
 * The node a NodeMaintenance serves: the one recorded when drainbridge took it (SERVED_NODE_ANNOTATION),
 * whatever `spec.nodeName` says since. A CR taken before the record existed: the node whose ledger
 * names its request (held or released), so a deletion always restores the node actually held. Pure.
 */
import type { V1Node } from '@kubernetes/client-node';
import { ledgerOf } from '../../node/ledger.ts';
import {
  DRAINBRIDGE_FINALIZER,
  type NodeMaintenance,
  nodeMaintenanceRequestId,
  SERVED_NODE_ANNOTATION,
} from './types.ts';

export function servedNodeOf(nm: NodeMaintenance, nodes: () => Iterable<V1Node>): string {
  const recorded = nm.metadata.annotations?.[SERVED_NODE_ANNOTATION];
  if (recorded) return recorded;
  const specified = nm.spec?.nodeName ?? '';
  if (!nm.metadata.finalizers?.includes(DRAINBRIDGE_FINALIZER)) return specified;
  const requestId = nodeMaintenanceRequestId(nm);
  for (const node of nodes()) {
    const read = ledgerOf(node);
    if (read.status !== 'ok') continue;
    if (Object.hasOwn(read.ledger.holds, requestId) || Object.hasOwn(read.ledger.released, requestId)) {
      return node.metadata?.name ?? specified;
    }
  }
  return specified;
}

/** The node to watch for a NodeMaintenance without reading ledgers (informer fan-out). */
export function nodeNamedBy(nm: NodeMaintenance): string | undefined {
  return nm.metadata.annotations?.[SERVED_NODE_ANNOTATION] ?? nm.spec?.nodeName;
}
