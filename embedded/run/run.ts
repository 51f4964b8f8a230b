/**
 * `drainbridge run`: the whole product in one process — the forwarder publishing to the in-process bus,
 * whose packaged rules (state-machines/definitions.json) start the embedded state machines; the schedule
 * rules; Nova when configured. Only the holder of the run Lease works (schedules, executions, events),
 * so a second replica during a rollout waits. On taking the Lease it resumes what the cluster says is
 * unfinished (resume.ts): executions of an earlier `run` process are known dead once this one holds
 * the Lease, so their owner marks are cleared and the resumed executions take over at once.
 */
import { randomUUID } from 'node:crypto';
import type { Registry } from 'prom-client';
import { readAdmissionLease, readAdmissionView, SlotWaker } from '../../lib/admission/index.ts';
import { startBusEndpoint } from '../../lib/bus/bus-endpoint.ts';
import type { BusServerSettings } from '../../lib/bus/bus-key.ts';
import type { TlsMaterial } from '../../lib/bus/bus-tls.ts';
import { InProcessPublisher } from '../../lib/bus/in-process-publisher.ts';
import type { PutEventsServer } from '../../lib/bus/put-events-server.ts';
import { SYSTEM_CLOCK } from '../../lib/bus/scheduler.ts';
import { KubeClient } from '../../lib/clients/kube/client.ts';
import { isNotFound } from '../../lib/clients/kube/errors.ts';
import type { KubeHttpClient } from '../../lib/clients/kube/http/client.ts';
import { buildKubeConfig, type Config } from '../../lib/config/index.ts';
import { isWaitingStep } from '../../lib/errors/registry.ts';
import type { Logger } from '../../lib/log/logger.ts';
import { NotificationSubscription, WebhookSender, type WebhookSettings } from '../../lib/notify/index.ts';
import { Forwarder } from '../../lib/sources/forwarder/forwarder.ts';
import { connectKube } from '../../lib/sources/forwarder/kube.ts';
import { createForwarderMetrics } from '../../lib/sources/forwarder/metrics.ts';
import type { ForwarderSettings } from '../../lib/sources/forwarder/settings.ts';
import { RebootSource } from '../../lib/sources/reboot/source.ts';
import { WindowScheduler } from '../../lib/sources/windows/scheduler.ts';
import type { BranchConnectors } from '../../lib/workflow/deps.ts';
import { clearDeadOwner } from '../../lib/workflow/ownership.ts';
import { planResume } from '../../lib/workflow/resume.ts';
import { EmbeddedRuntime, type TrackedExecution } from '../runtime.ts';
import { createRunMetrics, type RunMetrics } from './metrics.ts';

export interface RunOptions {
  readonly config: Config;
  /** The forwarder's settings; its Lease is the run Lease. */
  readonly settings: ForwarderSettings;
  readonly logger: Logger;
  /** Replaces every Retry interval of the state machines (demos and tests on a fast simulated clock). */
  readonly retryIntervalMs?: number;
  readonly connectors?: BranchConnectors;
  /** Serve the bus endpoint for node agents (DRAINBRIDGE_BUS_ADDRESS, lib/bus/bus-endpoint.ts). */
  readonly busEndpoint?: BusServerSettings;
  /** The endpoint's certificate and key, read at start (else read from busEndpoint.tls's files). */
  readonly busTls?: TlsMaterial;
  /** Why this process is not ready besides its caches (the startup preflight's sources left out), for /readyz. */
  readonly notReady?: () => string[];
  /** Post notifications to this webhook (lib/notify; `url` already resolved from its secret reference). */
  readonly webhook?: WebhookSettings;
  /**
   * Wake requests waiting in line when a slot frees (default true). False leaves only the waits'
   * fallbacks: what a lost wake-up costs (the benchmark's reference, and the test that it still admits).
   */
  readonly wakeUps?: boolean;
}

/** The webhook's sender and what feeds it, when a webhook is configured. */
export interface RunNotifications {
  readonly sender: WebhookSender;
  readonly subscription: NotificationSubscription;
}

/** The execution name prefix that marks `drainbridge run`'s executions, with the process identity. */
export const RUN_EXECUTION_PREFIX = 'run.';

/** Whether an execution id belongs to a `drainbridge run` process other than `identity`. */
export function isOtherRunExecution(executionId: string, identity: string): boolean {
  const name = executionId.slice(executionId.lastIndexOf(':') + 1);
  return name.startsWith(RUN_EXECUTION_PREFIX) && !name.startsWith(`${RUN_EXECUTION_PREFIX}${identity}.`);
}

function notificationsFor(webhook: WebhookSettings, logger: Logger, registry: Registry): RunNotifications {
  const sender = new WebhookSender({ ...webhook, logger, registry });
  return { sender, subscription: new NotificationSubscription((n) => sender.send(n), webhook.blockedAfterMs) };
}

export class DrainbridgeRun {
  readonly runtime: EmbeddedRuntime;
  readonly forwarder: Forwarder;
  readonly metrics: RunMetrics;
  /** The maintenance windows of the configuration (DRAINBRIDGE_MAINTENANCE_WINDOWS), armed while leading. */
  readonly windows: WindowScheduler;
  readonly notifications: RunNotifications | undefined;
  /** Wakes requests waiting in line as slots free (undefined when wake-ups are off). */
  readonly waker: SlotWaker | undefined;
  readonly #client: KubeClient;
  readonly #options: RunOptions;
  readonly #settled = new WeakSet<TrackedExecution>();
  readonly #watched = new WeakSet<TrackedExecution>();
  #resuming: Promise<void> | undefined;
  #busEndpoint: PutEventsServer | undefined;

  private constructor(
    options: RunOptions,
    runtime: EmbeddedRuntime,
    kube: { client: KubeClient; forwarderClient: KubeHttpClient },
  ) {
    this.#options = options;
    this.runtime = runtime;
    this.#client = kube.client;
    this.windows = new WindowScheduler(options.config.windows, SYSTEM_CLOCK, (window, at) => {
      this.runtime.openWindow(window, at).then(
        (opened) => options.logger.info('maintenance window opened', { ...opened }),
        (error: unknown) =>
          options.logger.error('maintenance window could not open', {
            window: window.name,
            error: error instanceof Error ? error.message : String(error),
          }),
      );
    });
    const forwarderMetrics = createForwarderMetrics();
    const namespace = options.config.namespace;
    this.metrics = createRunMetrics(
      forwarderMetrics.registry,
      () => this.#inProgress(),
      async () => readAdmissionView(await readAdmissionLease(kube.client, namespace)).paused !== undefined,
    );
    this.notifications = options.webhook
      ? notificationsFor(options.webhook, options.logger, forwarderMetrics.registry)
      : undefined;
    this.forwarder = new Forwarder({
      client: kube.forwarderClient,
      settings: options.settings,
      namespace: options.config.namespace,
      sink: new InProcessPublisher(runtime.bus),
      logger: options.logger,
      metrics: forwarderMetrics,
      extraSources: [new RebootSource({ client: kube.forwarderClient, logger: options.logger })],
      ...(options.notReady ? { notReady: options.notReady } : {}),
      onLeadership: (leading) => (leading ? this.#lead() : this.#follow()),
    });
    this.waker =
      options.wakeUps === false
        ? undefined
        : new SlotWaker({
            client: kube.forwarderClient,
            namespace,
            logger: options.logger,
            deliver: (token) => runtime.executor.sendTaskSuccess(token),
            leading: () => this.forwarder.isLeader,
          });
  }

  static async create(options: RunOptions): Promise<DrainbridgeRun> {
    const { logger, settings } = options;
    let run: DrainbridgeRun | undefined;
    const runtime = await EmbeddedRuntime.create({
      config: options.config,
      ...(options.connectors ? { connectors: options.connectors } : {}),
      ...(options.retryIntervalMs !== undefined ? { retryIntervalMs: options.retryIntervalMs } : {}),
      executionName: () => `${RUN_EXECUTION_PREFIX}${settings.identity}.${randomUUID()}`,
      onTask: (call) => {
        run?.metrics.observeTask(call);
        run?.notifications?.subscription.onTask(call);
        if (call.error && !isWaitingStep(call.error.name)) {
          logger.warn('step failed', { executionId: call.executionId, state: call.stateName, error: call.error });
        }
      },
      onBusEvent: (detailType, detail) => {
        run?.metrics.observeOutcome(detailType, detail as Record<string, unknown>);
        run?.notifications?.subscription.onBusEvent(detailType, detail);
        logger.info(detailType, { detail });
      },
    });
    // The workflow's client for the resumption; the forwarder has its own lean one (lib/clients/kube/http), as deployed.
    const client = new KubeClient(await buildKubeConfig(options.config));
    run = new DrainbridgeRun(options, runtime, {
      client,
      forwarderClient: await connectKube(options.config),
    });
    return run;
  }

  async start(): Promise<void> {
    // The endpoint first: a port already taken fails the start before anything else runs.
    const settings = this.#options.busEndpoint;
    if (settings) {
      this.#busEndpoint = await startBusEndpoint({
        settings,
        ...(this.#options.busTls ? { tls: this.#options.busTls } : {}),
        bus: this.runtime.bus,
        // A replica that does not lead has no running executions: the agent's retries find the leader.
        available: () =>
          this.forwarder.isLeader
            ? undefined
            : 'this drainbridge run replica does not lead; try again (the leader takes events)',
        logger: this.#options.logger,
      });
      this.#options.logger.info('bus endpoint listening', { url: this.#busEndpoint.url });
    }
    try {
      await this.forwarder.start();
    } catch (error) {
      await this.#busEndpoint?.close();
      throw error;
    }
    this.waker?.start();
  }

  /** The bus endpoint's URL, when one is served. */
  get busEndpointUrl(): string | undefined {
    return this.#busEndpoint?.url;
  }

  /** Flushes the forwarder, gives up the Lease (stopping executions at their next step) and stops. */
  async stop(graceMs = 10_000): Promise<void> {
    await this.#busEndpoint?.close();
    await this.waker?.stop();
    await this.forwarder.stop(graceMs);
    this.runtime.stop();
    await this.#resuming;
    this.notifications?.subscription.stop();
  }

  /** Resolves when the resumption started at the latest leadership is done (tests). */
  whenResumed(): Promise<void> {
    return this.#resuming ?? Promise.resolve();
  }

  #inProgress(): number {
    let count = 0;
    for (const execution of this.runtime.executions) {
      if (!this.#watched.has(execution)) {
        this.#watched.add(execution);
        void execution.outcome.then(() => this.#settled.add(execution));
      }
      if (execution.machine === 'evacuate' && !this.#settled.has(execution)) count++;
    }
    return count;
  }

  #lead(): void {
    this.runtime.bus.startSchedules();
    this.windows.start();
    this.#resuming = this.#resume().catch((error: unknown) => {
      this.#options.logger.error('resuming unfinished requests failed; their sources publish them again', {
        error: error instanceof Error ? error.message : String(error),
      });
    });
  }

  #follow(): void {
    // Another process holds the Lease (or this one is stopping): nothing runs here any more.
    this.windows.stop();
    this.runtime.stop();
  }

  async #resume(): Promise<void> {
    await this.forwarder.nodes.whenSynced();
    const identity = this.#options.settings.identity;
    for (const record of await this.#client.listEvacuations()) {
      const node = this.forwarder.nodes.get(record.spec?.nodeName ?? '');
      const decision = planResume(record, node);
      if (decision.action === 'none') continue;
      try {
        await clearDeadOwner(this.#client, decision.detail.requestId, (owner) =>
          isOtherRunExecution(owner.executionId, identity),
        );
      } catch (error) {
        if (!isNotFound(error)) throw error;
      }
      this.#options.logger.info('resuming an unfinished request', {
        requestId: decision.detail.requestId,
        action: decision.action,
      });
      if (decision.action === 'evacuate') await this.runtime.put('Maintenance Requested', decision.detail);
      else await this.runtime.put('Maintenance Ended', decision.detail);
    }
  }
}
