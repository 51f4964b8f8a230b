/**
 * drainbridge embedded: the in-process bus, the local executor and the function handlers, wired to
 * one cluster (and Nova, when configured). The same definitions and handlers as on AWS; what differs
 * is only who delivers events and who runs the state machines.
 */
import { readFileSync } from 'node:fs';
import { InProcessBus, InProcessPublisher } from '../lib/bus/index.ts';
import type { EventPublisher } from '../lib/bus/types.ts';
import type { Config } from '../lib/config/index.ts';
import type { DetailByType, DetailType } from '../lib/events/contracts.ts';
import { CONTRACTS } from '../lib/events/contracts.ts';
import { parseDetail } from '../lib/events/parse.ts';
import type { KubeClientOptions } from '../lib/kube/client.ts';
import { connectDeps, type NovaFactory, type WorkflowDeps } from '../lib/workflow/deps.ts';
import { EmbeddedExecutor, type Execution, type ExecutorOptions, type MachineDefinition } from './executor.ts';
import { type Definitions, EMBEDDED_BUS } from './extract.ts';
import { embeddedHandlers } from './functions.ts';

export function loadDefinitions(): Definitions {
  return JSON.parse(readFileSync(new URL('../workflow/definitions.json', import.meta.url), 'utf8')) as Definitions;
}

/** One execution as the runtime tracks it. */
export interface TrackedExecution extends Execution {
  readonly requestId: string | undefined;
  readonly input: unknown;
  /** Settles when the execution ends: its output, or the error that ended it. */
  readonly outcome: Promise<{ ok: true; output: unknown } | { ok: false; error: Error }>;
}

export interface EmbeddedOptions extends ExecutorOptions {
  readonly config: Config;
  readonly nova?: NovaFactory;
  /** Deliver every bus event twice (EventBridge is at-least-once), to test idempotency. */
  readonly duplicateDeliveries?: boolean | 'concurrent';
  /** Called for every event put on the bus (requests and outcomes). */
  readonly onBusEvent?: (detailType: string, detail: unknown) => void;
  /** The clock the tasks read (tests). */
  readonly now?: () => Date;
  /** Kubernetes client timeout and retries (tests that inject faults want them short). */
  readonly kubeClient?: Omit<KubeClientOptions, 'chunkSize'>;
  /**
   * How outcome events reach the bus; the in-process publisher by default. Tests of PutEvents failures
   * put an EventBridgePublisher (the real SDK) in front of an endpoint that feeds this bus.
   */
  readonly publisherFor?: (bus: InProcessBus) => EventPublisher;
}

export class EmbeddedRuntime {
  readonly deps: WorkflowDeps;
  readonly bus: InProcessBus;
  readonly executor: EmbeddedExecutor;
  readonly executions: TrackedExecution[] = [];

  private constructor(deps: WorkflowDeps, bus: InProcessBus, executor: EmbeddedExecutor) {
    this.deps = deps;
    this.bus = bus;
    this.executor = executor;
  }

  static async create(options: EmbeddedOptions): Promise<EmbeddedRuntime> {
    const definitions = loadDefinitions();
    let runtime: EmbeddedRuntime | undefined;
    const bus = new InProcessBus({
      rules: definitions.rules as never,
      schedules: definitions.schedules as never,
      busName: EMBEDDED_BUS,
      start: async (machine, input) => {
        runtime?.startExecution(machine, input);
      },
      ...(options.duplicateDeliveries ? { duplicateDeliveries: options.duplicateDeliveries } : {}),
    });
    const publisher = options.publisherFor?.(bus) ?? new InProcessPublisher(bus);
    const observed = {
      publish: async <T extends DetailType>(detailType: T, detail: DetailByType[T]) => {
        options.onBusEvent?.(detailType, detail);
        await publisher.publish(detailType, detail);
      },
    };
    const deps = await connectDeps(
      { ...options.config, eventBusName: EMBEDDED_BUS },
      observed,
      options.nova,
      options.kubeClient,
    );
    const executor = new EmbeddedExecutor(
      definitions.stateMachines as Record<string, MachineDefinition>,
      embeddedHandlers(deps, options.now),
      options,
    );
    runtime = new EmbeddedRuntime(deps, bus, executor);
    return runtime;
  }

  /** Starts an execution directly (what a bus rule does), and tracks it. */
  startExecution(machine: string, input: unknown): TrackedExecution {
    const execution = this.executor.start(machine, input);
    const detail = (input as { detail?: { requestId?: unknown } } | undefined)?.detail;
    const requestId = typeof detail?.requestId === 'string' ? detail.requestId : undefined;
    const outcome = execution.result.then(
      (output) => ({ ok: true as const, output }),
      (error: unknown) => ({ ok: false as const, error: error instanceof Error ? error : new Error(String(error)) }),
    );
    const tracked: TrackedExecution = { ...execution, requestId, input, outcome };
    this.executions.push(tracked);
    return tracked;
  }

  /** Puts a request on the bus, as a producer would (the rules start the executions). */
  async put<T extends DetailType>(detailType: T, detail: DetailByType[T]): Promise<void> {
    parseDetail(detailType, detail); // a bad request is refused here, before anything runs
    await this.bus.putEvents([
      {
        Source: CONTRACTS[detailType].source,
        DetailType: detailType,
        Detail: JSON.stringify(detail),
        EventBusName: EMBEDDED_BUS,
      },
    ]);
    await this.bus.idle();
  }

  /** Executions started for a request. */
  executionsFor(requestId: string): TrackedExecution[] {
    return this.executions.filter((execution) => execution.requestId === requestId);
  }

  /** Waits for every execution started so far (and those they lead to) to end. */
  async settle(): Promise<void> {
    for (let seen = -1; seen !== this.executions.length; ) {
      seen = this.executions.length;
      await Promise.all(this.executions.map((execution) => execution.outcome));
      await this.bus.idle();
    }
  }

  stop(): void {
    this.bus.stop();
    for (const execution of this.executions) execution.abort();
  }
}
