/**
 * Runs the packaged state machine definitions in-process with an independent Amazon States Language
 * interpreter (aws-local-stepfunctions). Every Task state resolves to the same Lambda handler that
 * deploys, called with a Lambda-shaped context. Nothing here knows what the tasks do.
 */
import { randomUUID } from 'node:crypto';
import type { Context } from 'aws-lambda';
import { StateMachine } from 'aws-local-stepfunctions';
import { LOCAL_ARN_PREFIX } from './extract.ts';

type RunOptions = NonNullable<Parameters<StateMachine['run']>[1]>;
type Overrides = NonNullable<RunOptions['overrides']>;
type LocalTask = NonNullable<Overrides['taskResourceLocalHandlers']>[string];
type JsonValue = Parameters<LocalTask>[0];

/** A Lambda handler as the executor calls it. */
export type LocalHandler = (event: unknown, context: Context) => Promise<unknown>;

type StateDefinition = {
  Type: string;
  Resource?: string;
  Branches?: MachineDefinition[];
  ItemProcessor?: MachineDefinition;
  Iterator?: MachineDefinition;
};
export interface MachineDefinition {
  readonly StartAt: string;
  readonly States: Record<string, StateDefinition>;
}

/** Task state name → function key, through Parallel branches and Map processors. State names are unique. */
export function taskFunctions(definition: MachineDefinition, out = new Map<string, string>()): Map<string, string> {
  for (const [name, state] of Object.entries(definition.States)) {
    if (state.Type === 'Task' && state.Resource?.startsWith(LOCAL_ARN_PREFIX)) {
      out.set(name, state.Resource.slice(LOCAL_ARN_PREFIX.length));
    }
    for (const branch of state.Branches ?? []) taskFunctions(branch, out);
    const processor = state.ItemProcessor ?? state.Iterator;
    if (processor) taskFunctions(processor, out);
  }
  return out;
}

/** Counts of one execution: what the suite prints and the history-size estimate is built from. */
export interface ExecutionStats {
  stateTransitions: number;
  lambdaInvocations: number;
  lambdaErrors: number;
  retries: number;
  parallelStates: number;
}

/**
 * Events Step Functions writes to the execution history for these counts: per state entry
 * …StateEntered + …StateExited; per Lambda attempt (a Task whose Resource is a Lambda ARN, retries
 * included) LambdaFunctionScheduled + …Started + …Succeeded/Failed; per Parallel state
 * ParallelStateStarted + …Succeeded; ExecutionStarted + the end.
 */
export function estimateHistoryEvents(stats: ExecutionStats): number {
  return 2 * stats.stateTransitions + 3 * stats.lambdaInvocations + 2 * stats.parallelStates + 2;
}

/** One task invocation, as reported to `onTask`. */
export interface TaskCall {
  readonly executionId: string;
  readonly stateName: string;
  readonly functionKey: string;
  readonly output?: unknown;
  /** The error's name and message when the task failed (NotYetDone included). */
  readonly error?: { readonly name: string; readonly message: string };
}

export interface ExecutorOptions {
  /** Replaces every Retry interval with this many ms (tests and the demo); undefined keeps the definition's backoff. */
  readonly retryIntervalMs?: number;
  /** Replaces every Wait state's duration with this many ms. */
  readonly waitMs?: number;
  /** Told of every task call (function, state, ok or error name), e.g. for progress lines. */
  readonly onTask?: (call: TaskCall) => void;
  /**
   * Told when the interpreter asked for a task of an aborted execution and was refused (no handler ran):
   * the observable proof, for tests, that an abort reached the Retry loop.
   */
  readonly onRefused?: (call: { readonly executionId: string; readonly stateName: string }) => void;
}

export interface Execution {
  readonly id: string;
  readonly machine: string;
  readonly result: Promise<unknown>;
  /**
   * Settles once the result has and no task handler of the execution is still running (a Parallel
   * state's result can come while another branch's task is mid-call): from then on the execution
   * touches nothing, so "nothing happened after" can be checked without sleeping.
   */
  readonly settled: Promise<void>;
  readonly stats: ExecutionStats;
  abort(): void;
}

function lambdaContext(functionKey: string, executionId: string): Context {
  const deadline = Date.now() + 60_000;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: `drainbridge-embedded-${functionKey}`,
    functionVersion: '$LATEST',
    invokedFunctionArn: `${LOCAL_ARN_PREFIX}${functionKey}`,
    memoryLimitInMB: '512',
    awsRequestId: randomUUID(),
    logGroupName: `/embedded/${functionKey}`,
    logStreamName: executionId,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

/** Task handler calls of one execution still running, and a wait for none. */
class InFlight {
  #running = 0;
  #waiters: (() => void)[] = [];

  begin(): () => void {
    this.#running++;
    return () => {
      this.#running--;
      if (this.#running > 0) return;
      for (const wake of this.#waiters.splice(0)) wake();
    };
  }

  idle(): Promise<void> {
    return this.#running === 0 ? Promise.resolve() : new Promise((resolve) => this.#waiters.push(resolve));
  }
}

export class EmbeddedExecutor {
  readonly #definitions: Readonly<Record<string, MachineDefinition>>;
  /**
   * One interpreter per machine, built (and its definition validated) once: validation takes hundreds of
   * ms, which at a simulator's speed is minutes of simulated time between `start` and the first task.
   * `run` keeps no state on the instance, so concurrent executions share it.
   */
  readonly #machines: ReadonlyMap<string, StateMachine>;
  readonly #handlers: Readonly<Record<string, LocalHandler>>;
  readonly #options: ExecutorOptions;

  constructor(
    definitions: Readonly<Record<string, MachineDefinition>>,
    handlers: Readonly<Record<string, LocalHandler>>,
    options: ExecutorOptions = {},
  ) {
    this.#definitions = definitions;
    this.#handlers = handlers;
    this.#options = options;
    const machines = new Map<string, StateMachine>();
    for (const [machine, definition] of Object.entries(definitions)) {
      machines.set(machine, new StateMachine(definition as never, { validationOptions: { checkPaths: true } }));
      for (const [state, key] of taskFunctions(definition)) {
        if (!handlers[key])
          throw new Error(`state machine ${machine}: state ${state} needs function ${key}, which has no handler`);
      }
    }
    this.#machines = machines;
  }

  get machines(): string[] {
    return Object.keys(this.#definitions);
  }

  /** Starts an execution of `machine`; `name` is the execution name (unique per run, like on AWS). */
  start(machine: string, input: unknown, name: string = randomUUID()): Execution {
    const definition = this.#definitions[machine];
    const stateMachine = this.#machines.get(machine);
    if (!definition || !stateMachine)
      throw new Error(`no state machine named ${machine} (have ${this.machines.join(', ')})`);
    const id = `arn:aws:states:local:000000000000:execution:drainbridge-${machine}:${name}`;
    const stats: ExecutionStats = {
      stateTransitions: 0,
      lambdaInvocations: 0,
      lambdaErrors: 0,
      retries: 0,
      parallelStates: 0,
    };
    // After abort the interpreter still finishes its current Retry loop without waiting; calling no task
    // once aborted keeps a stopped execution from touching the cluster (a killed process calls nothing either).
    const aborted = { value: false };
    const calls = new InFlight();
    const run = stateMachine.run(input as never, {
      overrides: this.#overrides(definition, { executionId: id, stats, aborted, calls }),
      context: { Execution: { Id: id, Name: name } },
    });
    void this.#countEvents(run.eventLogs as AsyncGenerator<{ type: string; state?: { type?: string } }>, stats);
    const abort = () => {
      aborted.value = true;
      run.abort();
    };
    const settled = run.result.then(
      () => calls.idle(),
      () => calls.idle(),
    );
    return { id, machine, result: run.result, settled, stats, abort };
  }

  #overrides(
    definition: MachineDefinition,
    execution: { executionId: string; stats: ExecutionStats; aborted: { value: boolean }; calls: InFlight },
  ): Overrides {
    const { executionId, stats, aborted, calls } = execution;
    const taskResourceLocalHandlers: Record<string, LocalTask> = {};
    const retryIntervalOverrides: Record<string, number> = {};
    for (const [stateName, key] of taskFunctions(definition)) {
      const handler = this.#handlers[key] as LocalHandler;
      taskResourceLocalHandlers[stateName] = async (input: JsonValue) => {
        if (aborted.value) {
          this.#options.onRefused?.({ executionId, stateName });
          throw Object.assign(new Error(`execution ${executionId} was aborted`), { name: 'ExecutionAborted' });
        }
        stats.lambdaInvocations++;
        const done = calls.begin();
        try {
          const output = await handler(input, lambdaContext(key, executionId));
          this.#options.onTask?.({ executionId, stateName, functionKey: key, output });
          return output as JsonValue;
        } catch (error) {
          stats.lambdaErrors++;
          const { name, message } = error as Error;
          this.#options.onTask?.({ executionId, stateName, functionKey: key, error: { name, message } });
          throw error;
        } finally {
          done();
        }
      };
      if (this.#options.retryIntervalMs !== undefined)
        retryIntervalOverrides[stateName] = this.#options.retryIntervalMs;
    }
    const waitTimeOverrides: Record<string, number> = {};
    if (this.#options.waitMs !== undefined) {
      for (const [name, state] of Object.entries(definition.States))
        if (state.Type === 'Wait') waitTimeOverrides[name] = this.#options.waitMs;
    }
    return { taskResourceLocalHandlers, retryIntervalOverrides, waitTimeOverrides };
  }

  async #countEvents(
    events: AsyncGenerator<{ type: string; state?: { type?: string } }>,
    stats: ExecutionStats,
  ): Promise<void> {
    try {
      for await (const event of events) {
        if (event.type === 'StateEntered') {
          stats.stateTransitions++;
          if (event.state?.type === 'Parallel') stats.parallelStates++;
        }
        if (event.type === 'StateRetried') stats.retries++;
      }
    } catch {
      // the log ends with the execution; its errors surface through `result`
    }
  }
}
