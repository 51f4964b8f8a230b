/**
 * The forwarder's Prometheus metrics (prom-client), on a registry of its own so that two forwarders in
 * one process (tests) do not share counters. Names follow Prometheus conventions: `_total` counters,
 * base units, one metric per thing with labels for the kind.
 */
import { Counter, collectDefaultMetrics, Gauge, Registry } from 'prom-client';

export interface ForwarderMetrics {
  readonly registry: Registry;
  readonly published: Counter<'detail_type' | 'source'>;
  readonly publishFailures: Counter<'detail_type' | 'kind'>;
  readonly watchRestarts: Counter<'resource' | 'reason'>;
  readonly queueDepth: Gauge;
  readonly leader: Gauge;
}

/** Creates the metrics on a fresh registry (with the process metrics: RSS, heap, event-loop lag, …). */
export function createForwarderMetrics(registry = new Registry()): ForwarderMetrics {
  collectDefaultMetrics({ register: registry, prefix: 'drainbridge_' });
  return {
    registry,
    published: new Counter({
      name: 'drainbridge_forwarder_events_published_total',
      help: 'Events put on the bus, by detail-type and source',
      labelNames: ['detail_type', 'source'],
      registers: [registry],
    }),
    publishFailures: new Counter({
      name: 'drainbridge_forwarder_publish_failures_total',
      help: 'Events not put on the bus: kind=transient (retried), rejected (refused, not retried), dropped (queue full; derived again from cluster state)',
      labelNames: ['detail_type', 'kind'],
      registers: [registry],
    }),
    watchRestarts: new Counter({
      name: 'drainbridge_forwarder_watch_restarts_total',
      help: 'Watches started again, by resource and reason (closed: the server ended it; expired: 410, re-listed; error: failed, restarted with backoff; stalled: silent too long)',
      labelNames: ['resource', 'reason'],
      registers: [registry],
    }),
    queueDepth: new Gauge({
      name: 'drainbridge_forwarder_queue_depth',
      help: 'Events waiting to be put on the bus',
      registers: [registry],
    }),
    leader: new Gauge({
      name: 'drainbridge_forwarder_leader',
      help: '1 while this replica holds the forwarder Lease and publishes, else 0',
      registers: [registry],
    }),
  };
}
