/**
 * The forwarder: shared informers, the event sources, leader election, the publishing path and the
 * operations endpoint, wired together with one lifecycle. Every replica watches (warm caches, fast
 * takeover); only the leader offers events and writes to the cluster. Another source (the node agent's
 * cloud notices) plugs in through `extraSources`.
 */
import type { V1Node } from '@kubernetes/client-node';
import type { BusAdapter } from '../../bus/types.ts';
import type { KubeHttpClient } from '../../clients/kube/http/client.ts';
import { ResilientInformer } from '../../clients/kube/http/informer.ts';
import type { Logger } from '../../log/logger.ts';
import type { DrainOptions } from '../../model/request.ts';
import { LEDGER_ANNOTATION } from '../../node/ledger.ts';
import { trimManagedFields } from '../cordon/request-id.ts';
import { CordonSource } from '../cordon/source.ts';
import { NodeMaintenanceSource } from '../node-maintenance/source.ts';
import { KUBEVIRT_FLAVOR, MEDIK8S_FLAVOR, type NodeMaintenanceFlavor } from '../node-maintenance/types.ts';
import type { WebhookServer } from '../node-maintenance/webhook.ts';
import { serveNodeMaintenanceWebhook } from '../node-maintenance/webhook-start.ts';
import type { ForwarderSource, PublishReceipt } from '../types.ts';
import { drainOptionsOutlet } from './drain-outlet.ts';
import { electionTimings, LeaderElector } from './leader.ts';
import { createForwarderMetrics, type ForwarderMetrics } from './metrics.ts';
import { type OpsServer, startOpsServer } from './ops-server.ts';
import { Publisher } from './publisher.ts';
import type { ForwarderSettings } from './settings.ts';

export interface ForwarderParts {
  /** The lean client (lib/clients/kube/http): the forwarder's only way to the API server; closed by stop(). */
  readonly client: KubeHttpClient;
  readonly settings: ForwarderSettings;
  /** Where the leader-election Lease lives (DRAINBRIDGE_NAMESPACE). */
  readonly namespace: string;
  readonly sink: BusAdapter;
  readonly logger: Logger;
  readonly metrics?: ForwarderMetrics;
  readonly extraSources?: readonly ForwarderSource[];
  /** Serve /healthz, /readyz, /metrics (default true; `drainbridge run` serves them itself). */
  readonly serveOps?: boolean;
  /** Extra reasons not to be ready (e.g. `drainbridge run`'s runtime). */
  readonly notReady?: () => string[];
  /** Told when this replica starts or stops leading (`drainbridge run` resumes work then). */
  readonly onLeadership?: (leading: boolean, previousHolder: string | undefined) => void;
  /** Informer tuning (tests, benchmarks). */
  readonly watchTimeoutSeconds?: number;
  readonly informerBackoff?: { readonly baseMs: number; readonly maxMs: number };
  /** `drainbridge forwarder`'s drain flags, laid on every event that starts an evacuation (drain-outlet.ts). */
  readonly drain?: Partial<DrainOptions>;
}

/** What the forwarder keeps of a node: enough for the ledger, the cordon and the selector; no status. */
export function trimNode(node: V1Node): V1Node {
  const annotations = node.metadata?.annotations?.[LEDGER_ANNOTATION];
  const trimmed = trimManagedFields(node);
  return {
    metadata: {
      name: node.metadata?.name,
      uid: node.metadata?.uid,
      resourceVersion: node.metadata?.resourceVersion,
      labels: node.metadata?.labels,
      ...(annotations ? { annotations: { [LEDGER_ANNOTATION]: annotations } } : {}),
      managedFields: trimmed.metadata?.managedFields,
    },
    spec: node.spec?.unschedulable ? { unschedulable: true } : {},
  };
}

export class Forwarder {
  readonly metrics: ForwarderMetrics;
  readonly nodes: ResilientInformer<V1Node>;
  readonly sources: ForwarderSource[];
  readonly publisher: Publisher;
  readonly elector: LeaderElector;
  readonly #parts: ForwarderParts;
  #ops: OpsServer | undefined;
  #webhook: WebhookServer | undefined;
  readonly #flavors: readonly NodeMaintenanceFlavor[];
  #stopping = false;

  constructor(parts: ForwarderParts) {
    this.#parts = parts;
    const { settings, logger, client } = parts;
    const metrics = parts.metrics ?? createForwarderMetrics();
    this.metrics = metrics;
    const restart = (resource: string, reason: string) => metrics.watchRestarts.inc({ resource, reason });
    const informer = {
      client,
      ...(parts.watchTimeoutSeconds ? { watchTimeoutSeconds: parts.watchTimeoutSeconds } : {}),
      ...(parts.informerBackoff ? { backoff: parts.informerBackoff } : {}),
    };
    this.nodes = new ResilientInformer<V1Node>({
      ...informer,
      resource: 'nodes',
      path: '/api/v1/nodes',
      transform: trimNode,
      logger,
      onRestart: (reason) => restart('nodes', reason),
    });
    this.sources = [new CordonSource(this.nodes, settings.cordon, logger)];
    const flavors = [
      ...(settings.nodeMaintenance ? [MEDIK8S_FLAVOR] : []),
      ...(settings.nodeMaintenanceKubevirt ? [KUBEVIRT_FLAVOR] : []),
    ];
    this.#flavors = flavors;
    for (const flavor of flavors) {
      this.sources.push(
        new NodeMaintenanceSource({
          client,
          nodes: this.nodes,
          informer,
          coexistence: settings.coexistence,
          logger,
          onRestart: restart,
          flavor,
        }),
      );
    }
    this.sources.push(...(parts.extraSources ?? []));
    this.publisher = new Publisher({
      sink: parts.sink,
      capacity: settings.queueCapacity,
      metrics,
      logger,
      onReceipt: (receipt) => this.#route(receipt),
    });
    this.elector = new LeaderElector({
      client,
      namespace: parts.namespace,
      name: settings.leaseName,
      identity: settings.identity,
      ...electionTimings(settings.leaseDurationMs),
      logger,
      onStartedLeading: (previous) => this.#lead(previous),
      onStoppedLeading: () => this.#follow(),
    });
  }

  /** The operations endpoint's URL, once started. */
  get opsUrl(): string | undefined {
    return this.#ops?.url;
  }

  get isLeader(): boolean {
    return this.elector.isLeader;
  }

  /** Why this replica is not ready yet (empty when it is). */
  notReady(): string[] {
    const reasons = this.sources.filter((s) => !s.synced).map((s) => `source ${s.name}: caches not synced`);
    if (!this.nodes.synced) reasons.push('nodes: not listed yet');
    return [...reasons, ...(this.#parts.notReady?.() ?? [])];
  }

  async start(): Promise<void> {
    const { settings, logger } = this.#parts;
    this.metrics.leader.set(0);
    // Every replica serves the admission webhook (the Service spreads the API server's calls); first, so
    // that a certificate it cannot have stops the start before anything watches.
    if (settings.webhookAddress && this.#flavors.length > 0) {
      this.#webhook = await serveNodeMaintenanceWebhook({
        client: this.#parts.client,
        namespace: this.#parts.namespace,
        address: settings.webhookAddress,
        flavors: this.#flavors,
        logger,
      });
    }
    const outlet = drainOptionsOutlet(this.publisher, this.#parts.drain ?? {});
    for (const source of this.sources) await source.start(outlet);
    this.nodes.start();
    this.publisher.start();
    if (this.#parts.serveOps !== false) {
      this.#ops = await startOpsServer({
        ...settings.metricsAddress,
        registry: this.metrics.registry,
        notReady: () => this.notReady(),
      });
    }
    this.elector.start();
    logger.info('forwarder started', {
      identity: settings.identity,
      sink: this.#parts.sink.name,
      sources: this.sources.map((s) => s.name),
      cordonEvacuates: settings.cordon.enabled,
      ops: this.#ops?.url,
    });
  }

  /**
   * Graceful stop, within `graceMs` (plus the moment it takes to close sockets): stop watching; flush what
   * waits while still leading; release the Lease so another replica takes over at once; then cancel
   * whatever is still in flight (a send, a Lease or NodeMaintenance request) and close every socket and
   * timer — the process exits by itself afterwards.
   */
  async stop(graceMs = 10_000): Promise<void> {
    const deadline = Date.now() + graceMs;
    this.#stopping = true;
    // Watches and sources stop at once; work a source has in flight ends when the client closes below.
    const stopped = Promise.all([this.nodes.stop(), ...this.sources.map((source) => source.stop())]);
    const flushed = await this.publisher.flush(Math.max(0, deadline - Date.now()));
    if (!flushed)
      this.#parts.logger.warn('stopping with events still queued; the next leader derives them again', {
        depth: this.publisher.depth,
      });
    await this.elector.stop(Math.max(1000, deadline - Date.now()));
    await this.publisher.stop();
    this.#parts.client.close();
    await stopped;
    await this.#ops?.close();
    await this.#webhook?.close();
  }

  #lead(previousHolder: string | undefined): void {
    if (this.#stopping) return;
    this.metrics.leader.set(1);
    this.publisher.activate();
    for (const source of this.sources) source.lead();
    this.#parts.onLeadership?.(true, previousHolder);
  }

  #follow(): void {
    this.metrics.leader.set(0);
    for (const source of this.sources) source.follow();
    this.publisher.deactivate();
    this.#parts.onLeadership?.(false, undefined);
  }

  #route(receipt: PublishReceipt): void {
    const prefix = receipt.event.key.split('/')[0];
    this.sources.find((source) => source.name === prefix)?.receipt?.(receipt);
  }
}
