/**
 * What the cluster remembers of this node's requests, read by the agent when it starts (and by the GCE
 * source when a maintenance begins): the ledger's holds and tombstones, and the node's Evacuation records
 * (`drainbridge.io/node=<node>`). Reads only.
 *
 *  - `held`: requests holding the node (admitted);
 *  - `known`: every request id the cluster still knows for the node (holds, tombstones, records);
 *  - `open`: requests the cluster shows as not yet released — holding the node, or with a record that no
 *    Restore finished and no end closed, and no tombstone (waiting for their start or in line too) — so a
 *    notice that vanished while the agent was down is still ended, and an end the workflow never received
 *    is seen.
 */
import { apiCodeOf } from '../../clients/kube/errors.ts';
import type { EvacuationObject } from '../../clients/kube/paths.ts';
import { readLedger } from '../../node/ledger.ts';
import type { NoticeKube } from './loop.ts';

/** The label the Evacuation store puts on each record (lib/progress/evacuation-store.ts). */
export const EVACUATION_NODE_LABEL = 'drainbridge.io/node';

export interface NodeRequestHistory {
  readonly held: readonly string[];
  readonly known: readonly string[];
  readonly open: readonly string[];
  /** False when the records could not be listed (RBAC without `list evacuations`): only the ledger was read. */
  readonly recordsRead: boolean;
}

/** A record no Restore finished and no end closed, for a request the ledger has not released. */
function isOpen(record: EvacuationObject, released: Readonly<Record<string, string>>): boolean {
  const status = record.status;
  return !Object.hasOwn(released, record.spec.requestId) && !status?.restore?.finishedAt && !status?.endedAt;
}

/** This node's requests as the cluster knows them. A 403 on the records reads the ledger alone. */
export async function readNodeHistory(kube: NoticeKube, nodeName: string): Promise<NodeRequestHistory> {
  const ledger = readLedger(await kube.getNode(nodeName));
  let records: EvacuationObject[] = [];
  let recordsRead = true;
  try {
    // A label value holds at most 63 characters: the store could not have labelled a longer name's records.
    if (nodeName.length <= 63) records = await kube.listEvacuations(`${EVACUATION_NODE_LABEL}=${nodeName}`);
    else recordsRead = false;
  } catch (error) {
    if (apiCodeOf(error) !== 403) throw error;
    recordsRead = false;
  }
  const mine = records.filter((record) => record.spec?.nodeName === nodeName && record.spec.requestId);
  return {
    held: Object.keys(ledger.holds),
    known: [
      ...new Set([...Object.keys(ledger.holds), ...Object.keys(ledger.released), ...mine.map((r) => r.spec.requestId)]),
    ],
    open: [
      ...new Set([
        ...Object.keys(ledger.holds),
        ...mine.filter((record) => isOpen(record, ledger.released)).map((r) => r.spec.requestId),
      ]),
    ],
    recordsRead,
  };
}
