/**
 * Cordon means evacuate (nova-kubernetes-drain's behaviour), decided from one node as it is now. Pure.
 *
 *  - cordoned by someone else, on a node the selector picks, and not yet held for a cordon → `Node Cordoned`;
 *  - cordoned by drainbridge itself (the ledger says drainbridge set `spec.unschedulable`) → nothing: never echoed;
 *  - schedulable again while the ledger holds the node for a cordon request (or this process published a
 *    cordon not yet admitted) → `Node Uncordoned` with that request's id — the ledger's hold is how a
 *    restarted or newly elected forwarder knows which request an uncordon ends.
 */
import type { V1Node } from '@kubernetes/client-node';
import { matchesAll, type Requirement } from '../../clients/kube/selectors.ts';
import { isHeld, type Ledger, ledgerOf } from '../../node/ledger.ts';
import { cordonRequestId } from './request-id.ts';

export interface CordonRequest {
  readonly requestId: string;
  readonly requester: string;
}

export interface CordonPlan {
  readonly cordoned?: CordonRequest;
  readonly uncordoned: readonly CordonRequest[];
  /** Why nothing is to be published (for debug logs). */
  readonly why: string;
}

/** Which nodes' cordons mean evacuate: none (off, the default), or those a label selector picks. */
export type CordonSelection =
  | { readonly enabled: false }
  | { readonly enabled: true; readonly selector: Requirement[] };

/** Requests the ledger holds the node for because of a cordon, oldest first. */
export function cordonHolds(ledger: Ledger): CordonRequest[] {
  return Object.entries(ledger.holds)
    .filter(([, hold]) => hold.origin === 'cordon')
    .sort(([, a], [, b]) => a.since.localeCompare(b.since))
    .map(([requestId, hold]) => ({ requestId, requester: hold.requester }));
}

/** drainbridge set `spec.unschedulable` itself (and nobody uncordoned it since). */
export function isOwnCordon(ledger: Ledger): boolean {
  return isHeld(ledger) && ledger.changes?.cordoned === true && !ledger.outOfBandUncordonAt;
}

function planCordoned(node: V1Node, ledger: Ledger, selection: CordonSelection, remembered?: string): CordonPlan {
  const none = (why: string): CordonPlan => ({ uncordoned: [], why });
  const held = cordonHolds(ledger)[0];
  if (held) return none(`already held for cordon request ${held.requestId}`);
  if (isOwnCordon(ledger)) return none("drainbridge's own cordon");
  if (!selection.enabled) return none('cordon-means-evacuate is off');
  if (!matchesAll(selection.selector, node.metadata?.labels))
    return none('node not selected for cordon-means-evacuate');
  const derived = cordonRequestId(node);
  const requestId = remembered ?? derived.requestId;
  if (Object.hasOwn(ledger.released, requestId)) return none(`cordon request ${requestId} was already restored`);
  return { cordoned: { requestId, requester: derived.requester }, uncordoned: [], why: 'cordoned' };
}

/** What the node's cordon state asks to publish. `remembered`: the cordon id this process published for it. */
export function planCordon(node: V1Node, selection: CordonSelection, remembered?: string): CordonPlan {
  // A ledger that cannot be read publishes nothing either way: read as empty, a cordon drainbridge holds
  // would look like a person's (a new request) and an uncordon could not be matched to its hold (issue 12).
  const read = ledgerOf(node);
  if (read.status === 'unreadable') {
    return { uncordoned: [], why: `${read.reason}; nothing published until drainbridge repair ${node.metadata?.name}` };
  }
  const ledger = read.ledger;
  if (node.spec?.unschedulable === true) return planCordoned(node, ledger, selection, remembered);
  const uncordoned = cordonHolds(ledger);
  if (
    remembered &&
    !Object.hasOwn(ledger.released, remembered) &&
    !uncordoned.some((r) => r.requestId === remembered)
  ) {
    uncordoned.push({ requestId: remembered, requester: 'unknown (uncordon)' });
  }
  return { uncordoned, why: uncordoned.length > 0 ? 'uncordoned' : 'schedulable, nothing held for a cordon' };
}
