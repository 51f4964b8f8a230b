/**
 * DrainSafe's rule for approving an Azure event early: approve only when drainbridge drained for it, and
 * — because an approval lets the event proceed for every resource it lists — only when every listed
 * resource is a node that drainbridge drained for this very event. Pure: the agent reads the nodes and
 * Evacuation records and asks here.
 */
import type { V1Node } from '@kubernetes/client-node';
import type { EvacuationObject } from '../../../clients/kube/paths.ts';
import { ledgerOf } from '../../../node/ledger.ts';
import { readPhase } from '../../../node/phase.ts';
import type { ResourceMapping } from './resources.ts';

/** What the cluster shows for one node and the request drainbridge would have for it. */
export interface DrainEvidence {
  readonly nodeName: string;
  readonly requestId: string;
  readonly node: V1Node | undefined;
  readonly evacuation: EvacuationObject | undefined;
}

/**
 * Drained for this request: its Evacuation record reached NodeDrained on this node, the node's phase
 * is still NodeDrained (nothing restored or failed it since) and the request still holds it.
 */
export function whyNotDrained(evidence: DrainEvidence): string | undefined {
  const { nodeName, requestId, node, evacuation } = evidence;
  if (!node) return `node ${nodeName} is gone`;
  if (!evacuation) return `no evacuation of ${nodeName} for ${requestId}`;
  if (evacuation.spec.nodeName !== nodeName) return `the evacuation for ${requestId} is of another node`;
  if (evacuation.status?.phase !== 'NodeDrained') {
    return `the evacuation of ${nodeName} is at ${evacuation.status?.phase ?? 'its start'}, not NodeDrained`;
  }
  if (readPhase(node) !== 'NodeDrained') return `node ${nodeName} is at phase ${readPhase(node) ?? 'none'}`;
  const read = ledgerOf(node);
  if (read.status === 'unreadable') return `${read.reason} (drainbridge repair ${nodeName})`;
  if (!Object.hasOwn(read.ledger.holds, requestId)) return `${requestId} no longer holds node ${nodeName}`;
  return undefined;
}

export type ApprovalDecision = { readonly approve: true } | { readonly approve: false; readonly why: string };

/** Approve when every resource maps to a node and every one of those nodes is drained for the event. */
export function decideApproval(mapping: ResourceMapping, evidence: readonly DrainEvidence[]): ApprovalDecision {
  if (mapping.unmapped.length > 0) {
    return { approve: false, why: `resources ${mapping.unmapped.join(', ')} are no Kubernetes node drainbridge knows` };
  }
  const waiting = evidence.map(whyNotDrained).filter((why): why is string => why !== undefined);
  if (waiting.length > 0) return { approve: false, why: waiting.join('; ') };
  return { approve: true };
}
