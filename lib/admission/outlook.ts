/**
 * What admission would decide for a new request on a node now, for `drainbridge plan`: the same decision
 * as a request's (decide), on the nodes and the Lease read without the mutex, writing nothing. A new
 * request goes to the back of the line, so it is told how many wait ahead of it.
 */
import type { V1Node } from '@kubernetes/client-node';
import type { KubeClient } from '../clients/kube/client.ts';
import { readLease } from '../clients/kube/lease.ts';
import { RecordUnreadable } from '../errors/index.ts';
import { blockingReason } from './gates/gate.ts';
import { checkGates, type NamedVerdict } from './gates/index.ts';
import { nodesInFlight } from './intents.ts';
import { type AdmissionSettings, decide, observeNodes } from './observe.ts';
import { ADMISSION_LEASE, readAdmitted, readIntents } from './records.ts';

export interface AdmissionOutlook {
  /** Whether a request for the node would be admitted now. */
  readonly admit: boolean;
  /** Why: the slot it would take, or what it would wait on. */
  readonly why: string;
  /** Each configured health gate's verdict and reason, in configuration order (none configured: empty). */
  readonly gates: readonly NamedVerdict[];
}

/** The plan's own id in the decision: never in the queue, so it counts every waiting request as ahead. */
const PLAN_REQUEST = 'drainbridge-plan';

export async function admissionOutlook(
  client: KubeClient,
  node: V1Node,
  settings: AdmissionSettings,
  now: Date,
): Promise<AdmissionOutlook> {
  const nodeName = node.metadata?.name ?? '';
  const lease = await readLease(client, settings.namespace, ADMISSION_LEASE);
  // Every gate is asked, open or not, so that the plan shows each one's verdict.
  const gates = await checkGates(settings.gates, { client, node, now });
  try {
    const intents = readIntents(lease, nodeName);
    const nodes = await observeNodes(
      client,
      node,
      { admitted: readAdmitted(lease), alsoRead: [...nodesInFlight(intents, PLAN_REQUEST, now), nodeName] },
      settings.minSchedulable,
    );
    const request = { requestId: PLAN_REQUEST, nodeName, requester: 'drainbridge plan' };
    const gated = blockingReason(gates);
    const decision = decide(request, settings, { nodes, lease, intents, now, gated });
    return { admit: decision.admit, why: decision.why, gates };
  } catch (error) {
    // A damaged queue stops admission too: the plan says so rather than fail.
    if (!(error instanceof RecordUnreadable)) throw error;
    return { admit: false, why: `admission cannot decide: ${error.message}`, gates };
  }
}
