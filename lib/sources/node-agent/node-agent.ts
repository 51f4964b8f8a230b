/**
 * `drainbridge forwarder --node-agent`: the forwarder's mode for a DaemonSet, one per node. It runs the
 * node agent (lib/sources/node-agent/agent.ts: this node's cloud maintenance notices) instead of the cluster's
 * sources, without leader election — each node's agent publishes its own node's notices — through the
 * forwarder's one publishing path (the coalescing queue, PutEvents batches with retries, or the
 * in-process bus), with the same /healthz, /readyz and /metrics.
 *
 * The agent publishes through an `EventPublisher`; here that is `OutletPublisher`, which offers each
 * event to the queue and resolves once the bus took it (the agent's contract), or rejects when the bus
 * refused it or it did not get through within `patienceMs` — the queue keeps trying, and the agent,
 * which did not count it as published, offers it again at its next read (the same key: coalesced).
 */
import { Counter, type Registry } from 'prom-client';
import type { DetailByType, DetailType } from '../../bus/contracts/contracts.ts';
import { toPublishEntry } from '../../bus/entry.ts';
import type { BusAdapter, EventPublisher } from '../../bus/types.ts';
import type { KubeHttpClient } from '../../clients/kube/http/client.ts';
import { DrainbridgeError, TransientError } from '../../errors/index.ts';
import type { Logger } from '../../log/logger.ts';
import type { NoticeSource } from '../../model/notice.ts';
import type { AgentConfig } from '../clouds/config.ts';
import type { AgentLogger } from '../clouds/loop.ts';
import { NOTICE_COUNTERS, type NoticeCounter, type NoticeMetrics } from '../clouds/metrics.ts';
import { createForwarderMetrics, type ForwarderMetrics } from '../forwarder/metrics.ts';
import { type OpsServer, startOpsServer } from '../forwarder/ops-server.ts';
import { Publisher } from '../forwarder/publisher.ts';
import type { EventOutlet, PublishReceipt } from '../types.ts';
import { type NodeAgent, startNodeAgent } from './agent.ts';

/** The name of the agent's events' source (the first part of their queue key). */
export const NODE_AGENT_SOURCE = 'node-agent';

interface Waiter {
  readonly resolve: () => void;
  readonly reject: (error: Error) => void;
}

/** The agent's EventPublisher on the forwarder's publishing path. */
export class OutletPublisher implements EventPublisher {
  readonly #outlet: EventOutlet;
  readonly #patienceMs: number;
  readonly #waiting = new Map<string, Set<Waiter>>();

  constructor(outlet: EventOutlet, patienceMs = 15_000) {
    this.#outlet = outlet;
    this.#patienceMs = patienceMs;
  }

  async publish<T extends DetailType>(detailType: T, detail: DetailByType[T]): Promise<void> {
    // Refused here, before it is queued, when it breaks its contract (InvalidInput names the field).
    toPublishEntry(detailType, detail, 'validation');
    const key = `${NODE_AGENT_SOURCE}/${detail.requestId}/${detailType}`;
    await new Promise<void>((resolve, reject) => {
      const waiters = this.#waiting.get(key) ?? new Set<Waiter>();
      this.#waiting.set(key, waiters);
      const timer = setTimeout(() => {
        waiters.delete(waiter);
        reject(new TransientError(`"${detailType}" ${detail.requestId} is not on the bus yet; it stays queued`));
      }, this.#patienceMs);
      const waiter: Waiter = {
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      };
      waiters.add(waiter);
      this.#outlet.offer({ detailType, detail, key });
    });
  }

  /** What the publishing path did with an event: settles everyone waiting for its key. */
  receipt(receipt: PublishReceipt): void {
    const waiters = this.#waiting.get(receipt.event.key);
    if (!waiters) return;
    this.#waiting.delete(receipt.event.key);
    const what = `"${receipt.event.detailType}" ${receipt.event.detail.requestId}`;
    for (const waiter of waiters) {
      if (receipt.outcome === 'published') waiter.resolve();
      else if (receipt.outcome === 'rejected') waiter.reject(new DrainbridgeError(`the bus refused ${what}`));
      else waiter.reject(new TransientError(`${what} was dropped from the full queue`));
    }
  }

  /** Stopping: nobody waits any more. */
  close(): void {
    for (const [key, waiters] of this.#waiting) {
      for (const waiter of waiters) waiter.reject(new TransientError(`${key}: the forwarder stopped`));
    }
    this.#waiting.clear();
  }
}

/** The agent's counters on the forwarder's Prometheus registry, labelled by provider and source document. */
export function promNoticeMetrics(registry: Registry): NoticeMetrics {
  const counters = new Map<NoticeCounter, Counter<'provider' | 'source'>>();
  for (const [counter, name] of Object.entries(NOTICE_COUNTERS) as [NoticeCounter, string][]) {
    counters.set(
      counter,
      new Counter({ name, help: `node agent: ${counter}`, labelNames: ['provider', 'source'], registers: [registry] }),
    );
  }
  return {
    count(counter: NoticeCounter, source: NoticeSource, by = 1): void {
      counters.get(counter)?.inc({ provider: source.split('-')[0] ?? '', source }, by);
    },
  };
}

export interface NodeAgentProcessParts {
  /** Reads only: this node, and for Azure approvals all nodes and the Evacuation records. Closed by stop(). */
  readonly client: KubeHttpClient;
  readonly config: AgentConfig;
  readonly sink: BusAdapter;
  readonly logger: Logger;
  readonly queueCapacity: number;
  /** Where /healthz, /readyz, /metrics listen (none when not given). */
  readonly metricsAddress?: { readonly host: string; readonly port: number };
  /** How long the agent waits for an event to reach the bus before it counts it as failed (default 15 s). */
  readonly patienceMs?: number;
}

/** The node agent with its publishing path and operations endpoint: one process per node. */
export class NodeAgentProcess {
  readonly metrics: ForwarderMetrics;
  readonly publisher: Publisher;
  readonly #parts: NodeAgentProcessParts;
  readonly #outlet: OutletPublisher;
  #agent: NodeAgent | undefined;
  #ops: OpsServer | undefined;

  constructor(parts: NodeAgentProcessParts) {
    this.#parts = parts;
    this.metrics = createForwarderMetrics();
    this.publisher = new Publisher({
      sink: parts.sink,
      capacity: parts.queueCapacity,
      metrics: this.metrics,
      logger: parts.logger,
      onReceipt: (receipt) => this.#outlet.receipt(receipt),
    });
    this.#outlet = new OutletPublisher(this.publisher, parts.patienceMs);
  }

  get opsUrl(): string | undefined {
    return this.#ops?.url;
  }

  get agent(): NodeAgent | undefined {
    return this.#agent;
  }

  async start(): Promise<void> {
    const { config, logger, metricsAddress } = this.#parts;
    this.publisher.start();
    // No leader election: every node's agent publishes its own node's notices.
    this.publisher.activate();
    if (metricsAddress) {
      this.#ops = await startOpsServer({
        ...metricsAddress,
        registry: this.metrics.registry,
        notReady: () => (this.#agent ? [] : ['node agent: not started']),
      });
    }
    this.#agent = startNodeAgent({
      config,
      publisher: this.#outlet,
      kube: this.#parts.client,
      metrics: promNoticeMetrics(this.metrics.registry),
      logger: agentLogger(logger),
    });
    logger.info('forwarder started', {
      mode: 'node-agent',
      node: config.nodeName,
      provider: config.provider,
      sources: this.#agent.sources,
      sink: this.#parts.sink.name,
      ops: this.#ops?.url,
    });
  }

  /** Stops reading, flushes what waits (up to `graceMs`), then closes everything: the process exits by itself. */
  async stop(graceMs = 10_000): Promise<void> {
    const stopped = this.#agent?.stop();
    const flushed = await this.publisher.flush(graceMs);
    if (!flushed)
      this.#parts.logger.warn('stopping with events still queued; the agent publishes them again when it starts', {
        depth: this.publisher.depth,
      });
    this.#outlet.close();
    await this.publisher.stop();
    this.#parts.client.close();
    await stopped;
    await this.#ops?.close();
  }
}

/** drainbridge's logger behind the agent's logger interface. */
function agentLogger(logger: Logger): AgentLogger {
  return {
    debug: (message, extra) => logger.debug(message, extra ?? {}),
    info: (message, extra) => logger.info(message, extra ?? {}),
    warn: (message, extra) => logger.warn(message, extra ?? {}),
    error: (message, extra) => logger.error(message, extra ?? {}),
  };
}
