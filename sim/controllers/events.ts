/**
 * Records core/v1 Events the way client-go's event recorder does, so `kubectl describe` and
 * `kubectl get events` show what the simulated components did. Best effort: an event that cannot be
 * written (namespace terminating, store stopped) is dropped, never fails the loop that recorded it.
 */
import type { Clock, KubeObject, ObjectStore } from '../store/types.ts';
import { REFS } from './types.ts';

export interface EventSource {
  /** `default-scheduler`, `kubelet`, `replicaset-controller`, … */
  readonly component: string;
  /** The node, for kubelet events. */
  readonly host?: string;
}

export interface EventRecorder {
  /** Records one event about `object`. `type` is `Normal` or `Warning`. */
  record(object: KubeObject, type: 'Normal' | 'Warning', reason: string, message: string): void;
}

/** Event recording turned off (`events: false`), for benchmarks that count writes. */
export const SILENT_RECORDER: EventRecorder = { record: () => {} };

let sequence = 0;

function eventFor(object: KubeObject, clock: Clock, source: EventSource): KubeObject {
  const now = clock.nowIso();
  const name = object.metadata.name ?? 'unknown';
  sequence += 1;
  // client-go names events `<object>.<unix nanos in hex>`; the sequence keeps same-tick names apart.
  const suffix = (BigInt(Math.floor(clock.now())) * 1_000_000n + BigInt(sequence)).toString(16);
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: `${name}.${suffix}`, namespace: object.metadata.namespace ?? 'default' },
    involvedObject: {
      apiVersion: object.apiVersion,
      kind: object.kind,
      name,
      ...(object.metadata.namespace ? { namespace: object.metadata.namespace } : {}),
      // The kubelet names its node by name, not uid, and `kubectl describe node` searches for that.
      uid: object.kind === 'Node' ? name : object.metadata.uid,
      resourceVersion: object.metadata.resourceVersion,
    },
    source: source.host ? { component: source.component, host: source.host } : { component: source.component },
    reportingComponent: source.component,
    reportingInstance: source.host ?? source.component,
    firstTimestamp: now,
    lastTimestamp: now,
    eventTime: null,
    count: 1,
  };
}

/** A recorder writing Events for one component straight into the store. */
export function createRecorder(store: ObjectStore, source: EventSource): EventRecorder {
  return {
    record(object, type, reason, message) {
      const event = { ...eventFor(object, store.clock, source), type, reason, message };
      try {
        store.create(REFS.events, event);
      } catch {
        // Dropped on purpose: events are diagnostics, and the upstream recorder drops on failure too.
      }
    },
  };
}
