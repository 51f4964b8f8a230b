/**
 * Kubernetes Events about a node, so that a person reads what drainbridge did in `kubectl describe node`.
 * Node events live in the `default` namespace, as the kubelet's do.
 */
import type { CoreV1Event, V1Node } from '@kubernetes/client-node';
import type { KubeClient } from '../clients/kube/client.ts';

export const EVENT_NAMESPACE = 'default';
export const EVENT_SOURCE = 'drainbridge';

/** Reasons drainbridge uses (CamelCase, as Kubernetes event reasons are). */
export const EVENT_REASONS = [
  'MaintenanceHoldAcquired',
  'MaintenanceHoldReleased',
  'PhaseChanged',
  'OutOfBandUncordon',
  'EvictionBlocked',
  'RecordUnreadable',
  'RecordRepaired',
  'AdmissionPaused',
  'NoticeSourceUnreadable',
  'GracePeriodCut',
] as const;
export type EventReason = (typeof EVENT_REASONS)[number];

export interface NodeEventInput {
  readonly reason: EventReason;
  readonly message: string;
  readonly type?: 'Normal' | 'Warning';
}

/** The Event object for a node. Pure; the name is unique per node and instant. */
export function buildNodeEvent(node: V1Node, input: NodeEventInput, now: Date): CoreV1Event {
  const nodeName = node.metadata?.name ?? '';
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: `${nodeName}.${now.getTime().toString(16)}${randomSuffix()}`, namespace: EVENT_NAMESPACE },
    involvedObject: { apiVersion: 'v1', kind: 'Node', name: nodeName, uid: node.metadata?.uid },
    reason: input.reason,
    message: input.message,
    type: input.type ?? 'Normal',
    source: { component: EVENT_SOURCE },
    reportingComponent: EVENT_SOURCE,
    reportingInstance: EVENT_SOURCE,
    firstTimestamp: now,
    lastTimestamp: now,
    count: 1,
  };
}

function randomSuffix(): string {
  return Math.floor(Math.random() * 0xffff)
    .toString(16)
    .padStart(4, '0');
}

/**
 * Records an event on the node. Best effort: an event that cannot be written must not fail the
 * evacuation, so the error is returned for logging instead of thrown.
 */
export async function emitNodeEvent(
  client: KubeClient,
  node: V1Node,
  input: NodeEventInput,
  now = new Date(),
): Promise<Error | undefined> {
  try {
    await client.createEvent(buildNodeEvent(node, input, now));
    return undefined;
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
}
