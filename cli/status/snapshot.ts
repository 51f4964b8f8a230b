/**
 * What `drainbridge status` reads, in one go: the nodes drainbridge may hold (or the one asked about),
 * the Evacuation records, and the admission Lease with its queue. Reads only — get and list calls, the
 * ones the preflight's `status` list names (lib/preflight/access.ts).
 */
import type { V1Lease, V1Node } from '@kubernetes/client-node';
import { readAdmissionLease } from '../../lib/admission/index.ts';
import type { KubeClient } from '../../lib/clients/kube/client.ts';
import type { EvacuationObject } from '../../lib/clients/kube/paths.ts';
import { listNodesMaybeHeld } from '../../lib/node/index.ts';
import { readNamedNode } from '../node-state.ts';

export interface Snapshot {
  /** When it was read. */
  readonly at: Date;
  /** The node asked about (`drainbridge status NODE`), if any. */
  readonly node?: string;
  /** The nodes read: the one asked about, or every node drainbridge may hold (labelled held, or cordoned). */
  readonly nodes: readonly V1Node[];
  readonly records: readonly EvacuationObject[];
  /** The admission Lease (its queue of waiting requests), if it exists. */
  readonly lease: V1Lease | undefined;
  /** DRAINBRIDGE_RECORD_TTL_HOURS: when a restored record expires. */
  readonly recordTtlHours: number;
}

export interface SnapshotSource {
  readonly client: KubeClient;
  readonly namespace: string;
  readonly recordTtlHours: number;
}

/** Reads the cluster's maintenance state (`node`: only that node's; a node that does not exist is exit 2). */
export async function readSnapshot(source: SnapshotSource, node?: string): Promise<Snapshot> {
  const { client, namespace } = source;
  const [nodes, records, lease] = await Promise.all([
    node ? readNamedNode(client, node).then((found) => [found]) : listNodesMaybeHeld(client),
    client.listEvacuations(node ? `drainbridge.io/node=${node}` : undefined),
    readAdmissionLease(client, namespace),
  ]);
  return {
    at: new Date(),
    ...(node ? { node } : {}),
    nodes,
    records,
    lease,
    recordTtlHours: source.recordTtlHours,
  };
}
