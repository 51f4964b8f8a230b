/**
 * Kubernetes Events on a NodeMaintenance (`kubectl describe nodemaintenance`), with NMO's reasons where
 * NMO has one. Cluster-scoped objects' events live in `default`. Best effort: a lost Event never stops
 * the controller, so the error is logged by the caller's logger, not thrown.
 */
import type { CoreV1Event } from '@kubernetes/client-node';
import { NODE_MAINTENANCE_API, type NodeMaintenance } from './types.ts';

export interface ObjectEventInput {
  readonly reason: string;
  readonly message: string;
  readonly type?: 'Normal' | 'Warning';
}

export function buildObjectEvent(nm: NodeMaintenance, input: ObjectEventInput, now: Date): CoreV1Event {
  const name = nm.metadata.name ?? '';
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: {
      name: `${name}.${now.getTime().toString(16)}${Math.floor(Math.random() * 0xffff).toString(16)}`,
      namespace: 'default',
    },
    involvedObject: {
      apiVersion: `${NODE_MAINTENANCE_API.group}/${NODE_MAINTENANCE_API.version}`,
      kind: 'NodeMaintenance',
      name,
      uid: nm.metadata.uid,
    },
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
  nm: NodeMaintenance,
  input: ObjectEventInput,
  now = new Date(),
): Promise<void> {
  try {
    await client.createEvent(buildObjectEvent(nm, input, now));
  } catch {
    // best effort (see above)
  }
}
