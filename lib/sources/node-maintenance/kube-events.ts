/**
 * Kubernetes Events on a NodeMaintenance (`kubectl describe nodemaintenance`), with NMO's reasons where
 * NMO has one (UncordonNode on the Node, as NMO records it). Cluster-scoped objects' events live in `default`. Best effort: a lost Event never stops
 * the controller, so the error is logged by the caller's logger, not thrown.
 */
import type { CoreV1Event, V1Node } from '@kubernetes/client-node';
import type { NodeMaintenance, NodeMaintenanceFlavor } from './types.ts';

export interface ObjectEventInput {
  readonly reason: string;
  readonly message: string;
  readonly type?: 'Normal' | 'Warning';
}

type InvolvedObject = NonNullable<CoreV1Event['involvedObject']>;

/** The NodeMaintenance as an Event's subject. */
export function maintenanceSubject(flavor: NodeMaintenanceFlavor, nm: NodeMaintenance): InvolvedObject {
  return {
    apiVersion: `${flavor.api.group}/${flavor.api.version}`,
    kind: 'NodeMaintenance',
    name: nm.metadata.name ?? '',
    uid: nm.metadata.uid,
  };
}

/** A Node as an Event's subject (NMO records UncordonNode there). */
export function nodeSubject(node: V1Node): InvolvedObject {
  return { apiVersion: 'v1', kind: 'Node', name: node.metadata?.name ?? '', uid: node.metadata?.uid };
}

export function buildObjectEvent(subject: InvolvedObject, input: ObjectEventInput, now: Date): CoreV1Event {
  const name = subject.name ?? '';
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: {
      name: `${name}.${now.getTime().toString(16)}${Math.floor(Math.random() * 0xffff).toString(16)}`,
      namespace: 'default',
    },
    involvedObject: subject,
    reason: input.reason,
    message: input.message,
    type: input.type ?? 'Normal',
    source: { component: 'drainbridge-forwarder' },
    reportingComponent: 'drainbridge-forwarder',
    reportingInstance: 'drainbridge-forwarder',
    firstTimestamp: now,
    lastTimestamp: now,
    count: 1,
  };
}

export async function emitObjectEvent(
  client: { createEvent(event: CoreV1Event): Promise<unknown> },
  subject: InvolvedObject,
  input: ObjectEventInput,
  now = new Date(),
): Promise<void> {
  try {
    await client.createEvent(buildObjectEvent(subject, input, now));
  } catch {
    // best effort (see above)
  }
}
