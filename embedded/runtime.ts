/**
 * drainbridge embedded: the in-process bus, the local executor and the function handlers, wired to
 * one cluster (and Nova, when configured). The same definitions and handlers as on AWS; what differs
 * is only who delivers events and who runs the state machines.
 */
import { readFileSync } from 'node:fs';
import type { DetailByType, DetailType } from '../lib/bus/contracts/contracts.ts';
import { CONTRACTS } from '../lib/bus/contracts/contracts.ts';
import { parseDetail } from '../lib/bus/contracts/parse.ts';
import { InProcessBus, InProcessPublisher } from '../lib/bus/index.ts';
import type { EventPublisher } from '../lib/bus/types.ts';
import type { KubeClientOptions } from '../lib/clients/kube/client.ts';
import type { Config } from '../lib/config/index.ts';
import type { WindowDefinition } from '../lib/sources/windows/definition.ts';
import { type BranchConnectors, connectDeps, type WorkflowDeps } from '../lib/workflow/deps.ts';
import type { WindowOpened } from '../lib/workflow/tasks/window-steps.ts';
import {
  EmbeddedExecutor,
  type Execution,
  type ExecutorOptions,
  type LocalHandler,
  lambdaContext as localContext,
  type MachineDefinition,
} from './executor.ts';
import { type Definitions, EMBEDDED_BUS } from './extract.ts';
import { embeddedHandlers } from './functions.ts';

let packagedDefinitions: Definitions | undefined;

/** The single-file bundle (scripts/bundle.ts) carries the definitions inside itself instead of beside it. */
export function usePackagedDefinitions(definitions: Definitions): void {
  packagedDefinitions = definitions;
}

type Outcome = { ok: true; output: unknown } | { ok: false; error: Error };

/** The execution an ended one continued as: the ContinueAsNew state's `continued.ExecutionArn` in its output. */
export function continuedAs(outcome: Outcome): string | undefined {
  if (!outcome.ok) return undefined;
  return (outcome.output as { continued?: { ExecutionArn?: string } } | undefined)?.continued?.ExecutionArn;
}

export function loadDefinitions(): Definitions {
  if (packagedDefinitions) return packagedDefinitions;
  return JSON.parse(
    readFileSync(new URL('../state-machines/definitions.json', import.meta.url), 'utf8'),
  ) as Definitions;
}

/** One execution as the runtime tracks it. */
export interface TrackedExecution extends Execution {
  readonly requestId: string | undefined;
  readonly input: unknown;
  /** Settles when the execution ends: its output, or the error that ended it. */
  readonly outcome: Promise<Outcome>;
}

export interface EmbeddedOptions extends ExecutorOptions {
  readonly config: Config;
  /** Connectors that replace branches' own (tests: Nova against a lab with its own credentials). */
  readonly connectors?: BranchConnectors;
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
  /** Names executions (default: a random UUID); `drainbridge run` marks its own with its identity. */
  readonly executionName?: () => string;
  /** How many ended executions `executions` keeps (ENDED_EXECUTIONS_KEPT by default). */
  readonly endedExecutionsKept?: number;
}

/** Ended executions kept for inspection (tests, `chainOf`); older ones are forgotten. */
export const ENDED_EXECUTIONS_KEPT = 1000;

export class EmbeddedRuntime {
  readonly deps: WorkflowDeps;
  readonly bus: InProcessBus;
  readonly executor: EmbeddedExecutor;
  /** Executions running, and the newest ENDED_EXECUTIONS_KEPT that ended (in the order they started). */
  readonly executions: TrackedExecution[] = [];
  readonly #ended: TrackedExecution[] = [];
  readonly #endedKept: number;
  readonly #executionName: (() => string) | undefined;
  readonly #handlers: Record<string, LocalHandler>;

  private constructor(
    parts: {
      deps: WorkflowDeps;
      bus: InProcessBus;
      executor: EmbeddedExecutor;
      handlers: Record<string, LocalHandler>;
    },
    name?: () => string,
    endedKept = ENDED_EXECUTIONS_KEPT,
  ) {
    this.#endedKept = endedKept;
    this.deps = parts.deps;
    this.bus = parts.bus;
    this.executor = parts.executor;
    this.#handlers = parts.handlers;
    this.#executionName = name;
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
      options.connectors,
      options.kubeClient,
    );
    const handlers = embeddedHandlers(deps, options.now);
    const executor = new EmbeddedExecutor(definitions.stateMachines as Record<string, MachineDefinition>, handlers, {
      ...options,
      // Continue-as-new starts executions from inside one: the runtime tracks them like the bus's.
      onStarted: (execution, input) => {
        runtime?.track(execution, input);
        options.onStarted?.(execution, input);
      },
    });
    runtime = new EmbeddedRuntime(
      { deps, bus, executor, handlers },
      options.executionName,
      options.endedExecutionsKept,
    );
    return runtime;
  }

  /**
   * A maintenance window opened (its schedule fired): the openWindow function — what EventBridge
   * Scheduler invokes on AWS — puts one request per matching node on this runtime's bus.
   */
  async openWindow(window: WindowDefinition, scheduledTime: Date): Promise<WindowOpened> {
    const handler = this.#handlers.openWindow as LocalHandler;
    const input = { window, scheduledTime: scheduledTime.toISOString() };
    const opened = (await handler(input, localContext('openWindow'))) as WindowOpened;
    await this.bus.idle();
    return opened;
  }

  /** Starts an execution directly (what a bus rule does), and tracks it. */
  startExecution(machine: string, input: unknown): TrackedExecution {
    return this.track(this.executor.start(machine, input, this.#executionName?.()), input);
  }

  /** Tracks an execution started here (by a rule, directly, or by another execution continuing as new). */
  track(execution: Execution, input: unknown): TrackedExecution {
    const detail = (input as { detail?: { requestId?: unknown } } | undefined)?.detail;
    const requestId = typeof detail?.requestId === 'string' ? detail.requestId : undefined;
    const outcome = execution.result.then(
      (output) => ({ ok: true as const, output }),
      (error: unknown) => ({ ok: false as const, error: error instanceof Error ? error : new Error(String(error)) }),
    );
    const tracked: TrackedExecution = { ...execution, requestId, input, outcome };
    this.executions.push(tracked);
    void outcome.then(() => this.#forgetOldEnded(tracked));
    return tracked;
  }

  /**
   * Keeps the newest ENDED_EXECUTIONS_KEPT ended executions, drops older ones: `drainbridge run` lives for
   * weeks, and every execution it ever ran (input, output, its interpreter's closures) stayed in this list.
   */
  #forgetOldEnded(ended: TrackedExecution): void {
    this.#ended.push(ended);
    if (this.#ended.length <= this.#endedKept) return;
    const oldest = this.#ended.shift() as TrackedExecution;
    const at = this.executions.indexOf(oldest);
    if (at >= 0) this.executions.splice(at, 1);
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

  /** Executions started for a request (a continued evacuation's chain included, in order). */
  executionsFor(requestId: string): TrackedExecution[] {
    return this.executions.filter((execution) => execution.requestId === requestId);
  }

  /**
   * The chain of executions `execution` began, once it has ended: itself and every execution it
   * continued as (continue-as-new), in order; the last one's outcome is the evacuation's.
   */
  async chainOf(execution: TrackedExecution): Promise<{ executions: TrackedExecution[]; outcome: Outcome }> {
    const executions = [execution];
    for (;;) {
      const current = executions.at(-1) as TrackedExecution;
      const outcome = await current.outcome;
      const nextId = continuedAs(outcome);
      const next = nextId ? this.executions.find((candidate) => candidate.id === nextId) : undefined;
      if (!next) return { executions, outcome };
      executions.push(next);
    }
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

  /** Stops starting work and waits for the task calls already running to end (e.g. on Ctrl-C). */
  async stopAtSafePoint(): Promise<void> {
    this.stop();
    await this.executor.idle();
  }
}
