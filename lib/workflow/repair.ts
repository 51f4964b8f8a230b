/**
 * `drainbridge repair NODE`: the one way a record drainbridge cannot read is written again. Every
 * unreadable record blocks what it is about (issue 12); this finds each one that concerns the node —
 * its ledger, the admission queue, and the owner claim and branch states of the node's Evacuation
 * records — and plans what to write instead, for the operator to read before anything is written.
 *
 * Planning reads only. Each action writes conditionally on the resourceVersion it was planned from, so a
 * record that changed since the operator looked is not overwritten (run repair again).
 */
import type { V1Node } from '@kubernetes/client-node';
import { planAdmissionRepair } from '../admission/index.ts';
import { BRANCH_REGISTRY } from '../branches/registry.ts';
import type { KubeClient } from '../clients/kube/client.ts';
import type { EvacuationObject } from '../clients/kube/paths.ts';
import type { RepairAction } from '../model/repair-action.ts';
import { emitNodeEvent } from '../node/kube-events.ts';
import { LEDGER_ANNOTATION, LEDGER_FORMAT, ledgerOf } from '../node/ledger.ts';
import { salvageLedger } from '../node/salvage.ts';
import { withoutBlocked } from '../progress/mailboxes.ts';
import { decodeRecord, writeJsonRecord } from '../util/json-record.ts';
import { damagedOwner, withOwner } from './ownership.ts';

export type { RepairAction };

export interface RepairSettings {
  /** Where the admission Lease lives (DRAINBRIDGE_NAMESPACE). */
  readonly namespace: string;
  readonly now: Date;
  /** Who repairs, recorded in a hold repair has to add and in the node Event. */
  readonly operator: string;
}

function ledgerAction(kube: KubeClient, node: V1Node, settings: RepairSettings): RepairAction | undefined {
  const read = ledgerOf(node);
  if (read.status !== 'unreadable') return undefined;
  const nodeName = node.metadata?.name ?? '';
  const salvaged = salvageLedger(node, read.text, settings.now, settings.operator);
  const next = writeJsonRecord(salvaged.ledger, LEDGER_FORMAT);
  return {
    record: `${LEDGER_FORMAT.what} of node ${nodeName}`,
    problem: read.reason,
    current: read.text,
    next,
    notes: salvaged.notes,
    apply: async () => {
      const patch = {
        metadata: { resourceVersion: node.metadata?.resourceVersion ?? '', annotations: { [LEDGER_ANNOTATION]: next } },
      };
      const written = await kube.patchNode(nodeName, patch);
      const message = `ledger repaired by ${settings.operator}: ${salvaged.notes.join('; ')}`;
      await emitNodeEvent(kube, written, { reason: 'RecordRepaired', message }, settings.now);
    },
  };
}

/** The record with its damaged owner claim removed and its damaged branch states reset, and what changed. */
function repairedRecord(record: EvacuationObject): { record: EvacuationObject; found: Omit<RepairAction, 'apply'>[] } {
  const found: Omit<RepairAction, 'apply'>[] = [];
  const name = record.metadata.name;
  const owner = damagedOwner(record);
  if (owner) {
    found.push({
      record: owner.what,
      problem: owner.reason,
      current: owner.text,
      next: '(removed)',
      notes: ['the next step of a running evacuation claims the request again'],
    });
  }
  const annotations = { ...(owner ? withOwner(record, undefined) : record).metadata.annotations };
  const branches = { ...record.status?.branches };
  for (const definition of BRANCH_REGISTRY) {
    const entry = branches[definition.name];
    if (entry?.state === undefined || entry.state === null) continue;
    const read = decodeRecord(entry.state, definition.stateFormat);
    if (read.status !== 'unreadable') continue;
    found.push({
      record: `${definition.name} branch state of Evacuation ${name}`,
      problem: read.reason,
      current: JSON.stringify(entry.state),
      next: '(reset: the next pass starts from what it observes)',
      notes: [
        'what the branch had in flight is forgotten; the next pass re-plans from the node (and Nova) as they are',
      ],
    });
    // No state (JSON drops the undefined): the pass reads "nothing yet" and writes a fresh one.
    branches[definition.name] = { ...entry, state: undefined, version: String(Number(entry.version) + 1 || 1) };
  }
  const status = record.status ? withoutBlocked({ ...record.status, branches }) : record.status;
  const next = { ...record, metadata: { ...record.metadata, annotations }, status };
  return { record: next, found };
}

function recordActions(kube: KubeClient, record: EvacuationObject): RepairAction[] {
  const { record: next, found } = repairedRecord(record);
  // One write per record: every action on it applies it (the first one writes, the rest find it done).
  let written: Promise<unknown> | undefined;
  const apply = async () => {
    written ??= kube.replaceEvacuation(next);
    await written;
  };
  return found.map((action) => ({ ...action, apply }));
}

/** Every unreadable record that concerns `nodeName`, and what repair would write instead. Reads only. */
export async function planRepair(
  kube: KubeClient,
  nodeName: string,
  settings: RepairSettings,
): Promise<RepairAction[]> {
  const node = await kube.getNode(nodeName);
  const actions: RepairAction[] = [];
  const ledger = ledgerAction(kube, node, settings);
  if (ledger) actions.push(ledger);
  actions.push(...(await planAdmissionRepair(kube, settings.namespace)));
  for (const record of await kube.listEvacuations(`drainbridge.io/node=${nodeName}`)) {
    actions.push(...recordActions(kube, record));
  }
  return actions;
}
