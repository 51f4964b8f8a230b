/**
 * Runs the packaged state machine definitions in-process with an independent Amazon States Language
 * interpreter (aws-local-stepfunctions). Every Task state resolves to the same Lambda handler that
 * deploys, called with a Lambda-shaped context. Nothing here knows what the tasks do.
 */
import { randomUUID } from 'node:crypto';
import type { Context } from 'aws-lambda';
import { StateMachine } from 'aws-local-stepfunctions';
import { EXECUTION_ID_SHA256_FIELD, executionIdSha256, withExactHashes } from './exact-hash.ts';
import { LOCAL_ARN_PREFIX, LOCAL_STATE_MACHINE_ARN_PREFIX } from './extract.ts';

type RunOptions = NonNullable<Parameters<StateMachine['run']>[1]>;
type Overrides = NonNullable<RunOptions['overrides']>;
type LocalTask = NonNullable<Overrides['taskResourceLocalHandlers']>[string];
type JsonValue = Parameters<LocalTask>[0];

/** A Lambda handler as the executor calls it. */
export type LocalHandler = (event: unknown, context: Context) => Promise<unknown>;

type StateDefinition = {
  Type: string;
  Resource?: string;
  Parameters?: { readonly FunctionName?: unknown };
  TimeoutSeconds?: number;
  Seconds?: number;
  Next?: string;
  ResultPath?: string | null;
  TimestampPath?: string;
  Branches?: MachineDefinition[];
  ItemProcessor?: MachineDefinition;
  Iterator?: MachineDefinition;
};
export interface MachineDefinition {
  readonly StartAt: string;
  readonly States: Record<string, StateDefinition>;
}

/** The Step Functions service integration that starts an execution (fire and forget), as continue-as-new uses it. */
export const START_EXECUTION_RESOURCE = 'arn:aws:states:::states:startExecution';

/** Every state of a machine with the states of its Parallel branches and Map processors. State names are unique. */
function allStates(definition: MachineDefinition, out: [string, StateDefinition][] = []): [string, StateDefinition][] {
  for (const [name, state] of Object.entries(definition.States)) {
    out.push([name, state]);
    for (const branch of state.Branches ?? []) allStates(branch, out);
    const processor = state.ItemProcessor ?? state.Iterator;
    if (processor) allStates(processor, out);
  }
  return out;
}

/**
 * The Lambda service integration that invokes a function with a task token and waits until someone
 * returns the token (SendTaskSuccess/Failure) or TimeoutSeconds pass: a wait that costs nothing while it lasts.
 */
export const WAIT_FOR_TASK_TOKEN_RESOURCE = 'arn:aws:states:::lambda:invoke.waitForTaskToken';

/**
 * Callback Task states (`lambda:invoke.waitForTaskToken`) → function key (Parameters.FunctionName, a
 * local ARN once extracted), through Parallel branches and Map processors.
 */
export function callbackFunctions(definition: MachineDefinition): Map<string, string> {
  const out = new Map<string, string>();
  for (const [name, state] of allStates(definition)) {
    if (state.Type !== 'Task' || state.Resource !== WAIT_FOR_TASK_TOKEN_RESOURCE) continue;
    const target = state.Parameters?.FunctionName;
    if (typeof target !== 'string' || !target.startsWith(LOCAL_ARN_PREFIX))
      throw new Error(
        `state ${name}: a waitForTaskToken Task needs Parameters.FunctionName, a function of this runtime`,
      );
    // Step Functions waits up to a year without it; the interpreter would cut it at 60 s — neither is a fallback.
    if (!state.TimeoutSeconds)
      throw new Error(`state ${name}: a waitForTaskToken Task needs TimeoutSeconds (its fallback)`);
    out.set(name, target.slice(LOCAL_ARN_PREFIX.length));
  }
  return out;
}

/** Task state name → function key, through Parallel branches and Map processors. */
export function taskFunctions(definition: MachineDefinition): Map<string, string> {
  const out = new Map<string, string>();
  for (const [name, state] of allStates(definition)) {
    if (state.Type === 'Task' && state.Resource?.startsWith(LOCAL_ARN_PREFIX)) {
      out.set(name, state.Resource.slice(LOCAL_ARN_PREFIX.length));
    }
  }
  return out;
}

/** A Wait state on a timestamp that Tasks put in the document: the tasks, and the path inside their result. */
interface TimestampWait {
  readonly wait: string;
  readonly writers: readonly { readonly task: string; readonly path: readonly string[] }[];
}

/** The path inside `task`'s result where `timestampPath` points, when the task's ResultPath holds it. */
function pathInResult(task: StateDefinition, timestampPath: string): string[] | undefined {
  if (task.Type !== 'Task' || task.ResultPath === null) return undefined;
  const resultPath = task.ResultPath ?? '$';
  const prefix = resultPath === '$' ? '$.' : `${resultPath}.`;
  return timestampPath.startsWith(prefix) ? timestampPath.slice(prefix.length).split('.') : undefined;
}

/**
 * Every top-level Wait with a TimestampPath, and the top-level Tasks whose result holds it: those whose
 * ResultPath is a prefix of it, or (when none is) those that write the whole document.
 */
export function timestampWaits(definition: MachineDefinition): TimestampWait[] {
  const found: TimestampWait[] = [];
  const states = Object.entries(definition.States);
  for (const [wait, state] of states) {
    const timestampPath = state.Type === 'Wait' ? state.TimestampPath : undefined;
    if (!timestampPath) continue;
    const writers = states.flatMap(([task, candidate]) => {
      const path = pathInResult(candidate, timestampPath);
      return path ? [{ task, path, whole: (candidate.ResultPath ?? '$') === '$' }] : [];
    });
    const specific = writers.filter((writer) => !writer.whole);
    const chosen = specific.length > 0 ? specific : writers;
    if (chosen.length > 0) found.push({ wait, writers: chosen.map(({ task, path }) => ({ task, path })) });
  }
  return found;
}

function valueAt(value: unknown, path: readonly string[]): unknown {
  let current = value;
  for (const key of path) current = (current as Record<string, unknown> | null | undefined)?.[key];
  return current;
}

/** Task states that start an execution (`states:startExecution`). */
export function startExecutionStates(definition: MachineDefinition): string[] {
  return allStates(definition)
    .filter(([, state]) => state.Type === 'Task' && state.Resource === START_EXECUTION_RESOURCE)
    .map(([name]) => name);
}

/** Ended executions whose names still answer a repeated start (see EmbeddedExecutor.#forgetOldNames). */
export const ENDED_NAMES_KEPT = 1000;

/** Counts of one execution: what the suite prints and the history-size estimate is built from. */
export interface ExecutionStats {
  /** States entered (Parallel branches' states included; a Retry re-runs its state without entering it again). */
  stateTransitions: number;
  lambdaInvocations: number;
  lambdaErrors: number;
  /** Task attempts after the first, by a Retry rule. */
  retries: number;
  parallelStates: number;
  /** Wall time spent in Lambda handlers, added up (Lambda bills duration: GB-seconds at the function's memory). */
  lambdaMilliseconds: number;
  /**
   * History events Step Functions would have written, counted from the interpreter's event log as it
   * runs: 2 per state entered, 3 per Task attempt (entries and retries), 2 per Parallel state, 2 for
   * the execution's start and end.
   */
  historyEvents: number;
}

/**
 * Events Step Functions writes to the execution history for these counts: per state entry
 * …StateEntered + …StateExited; per Lambda attempt (a Task whose Resource is a Lambda ARN, retries
 * included) LambdaFunctionScheduled + …Started + …Succeeded/Failed; per Parallel state
 * ParallelStateStarted + …Succeeded; ExecutionStarted + the end.
 */
export function estimateHistoryEvents(stats: Omit<ExecutionStats, 'historyEvents'>): number {
  return 2 * stats.stateTransitions + 3 * stats.lambdaInvocations + 2 * stats.parallelStates + 2;
}

/**
 * State transitions as Step Functions Standard bills them: every state entered and every Retry attempt
 * ("Step Functions counts a state transition each time a step of your workflow is executed, … including
 * retries"). The executor counts the two apart; the bill adds them up.
 */
export function billedStateTransitions(stats: Pick<ExecutionStats, 'stateTransitions' | 'retries'>): number {
  return stats.stateTransitions + stats.retries;
}

/** One task invocation, as reported to `onTask`. */
export interface TaskCall {
  readonly executionId: string;
  readonly stateName: string;
  readonly functionKey: string;
  readonly output?: unknown;
  /** The error's name and message when the task failed (NotYetDone included). */
  readonly error?: { readonly name: string; readonly message: string };
  /** How long the handler ran, in ms (what Lambda bills as duration). */
  readonly durationMs?: number;
}

/** The clock the tasks read when it is not the real one: a simulated clock running `speed` times real time. */
export interface WaitClock {
  now(): number;
  readonly speed: number;
}

/** What a `states:startExecution` Task asks for (after the interpreter resolved its Parameters). */
export interface StartExecutionRequest {
  readonly StateMachineArn: string;
  readonly Input?: unknown;
  readonly Name?: string;
}

export interface ExecutorOptions {
  /** Replaces every Retry interval with this many ms (tests and the demo); undefined keeps the definition's backoff. */
  readonly retryIntervalMs?: number;
  /** Replaces every Wait state's duration with this many ms (Wait states on a timestamp follow `waitClock` when given). */
  readonly waitMs?: number;
  /**
   * Wait states on a timestamp (TimestampPath) wait until this clock reaches it, at its speed: the
   * interpreter measures them against the real clock, which is wrong when the tasks computed the
   * timestamp from a simulated one. Undefined: the real clock.
   */
  readonly waitClock?: WaitClock;
  /** Told of every task call (function, state, ok or error name), e.g. for progress lines. */
  readonly onTask?: (call: TaskCall) => void;
  /**
   * Told when the interpreter asked for a task of an aborted execution and was refused (no handler ran):
   * the observable proof, for tests, that an abort reached the Retry loop.
   */
  readonly onRefused?: (call: { readonly executionId: string; readonly stateName: string }) => void;
  /** Told of every execution a `states:startExecution` Task started (continue-as-new), to track it. */
  readonly onStarted?: (execution: Execution, input: unknown) => void;
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

/** A Lambda-shaped context for a local call of `functionKey` (an execution's task, or a schedule's target). */
export function lambdaContext(functionKey: string, executionId = `local:${functionKey}`): Context {
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

/** A callback Task waiting for its token. */
interface TokenWaiter {
  readonly executionId: string;
  succeed(output: unknown): void;
  fail(error: Error): void;
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
  /** Executions by machine and name: a name is unique per state machine, as on AWS (a repeated start is idempotent). */
  readonly #byName = new Map<string, Execution>();
  /** Names of ended executions, oldest first: the newest ENDED_NAMES_KEPT keep answering a repeated start. */
  readonly #endedNames: string[] = [];
  /** Task calls running now, so that a stop can wait for them (a step is never cut in half). */
  readonly #inFlight = new Set<Promise<unknown>>();
  /** Callback Tasks waiting for their token, by token: what `sendTaskSuccess` wakes. */
  readonly #waiting = new Map<string, TokenWaiter>();

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
      // The interpreter's own States.Hash is wrong for long inputs (exact-hash.ts): the executor computes it.
      const interpreted = withExactHashes(definition, `state machine ${machine}`);
      machines.set(machine, new StateMachine(interpreted as never, { validationOptions: { checkPaths: true } }));
      for (const [state, key] of [...taskFunctions(definition), ...callbackFunctions(definition)]) {
        if (!handlers[key])
          throw new Error(`state machine ${machine}: state ${state} needs function ${key}, which has no handler`);
      }
    }
    this.#machines = machines;
  }

  /** Resolves when no task call is running (after `abort`, none starts again). */
  async idle(): Promise<void> {
    while (this.#inFlight.size > 0) await Promise.allSettled([...this.#inFlight]);
  }

  get machines(): string[] {
    return Object.keys(this.#definitions);
  }

  /**
   * An ended execution's name answers a repeated StartExecution (a retried continue-as-new) for a while;
   * past the newest ENDED_NAMES_KEPT it is forgotten, with the execution (its interpreter, its input) —
   * `drainbridge run` lives for weeks.
   */
  #forgetOldNames(key: string): void {
    this.#endedNames.push(key);
    if (this.#endedNames.length <= ENDED_NAMES_KEPT) return;
    const oldest = this.#endedNames.shift() as string;
    this.#byName.delete(oldest);
  }

  /**
   * Starts an execution of `machine`; `name` is the execution name. As on AWS, a name is unique per
   * state machine: starting it again returns the execution that has it.
   */
  start(machine: string, input: unknown, name: string = randomUUID()): Execution {
    const definition = this.#definitions[machine];
    const stateMachine = this.#machines.get(machine);
    if (!definition || !stateMachine)
      throw new Error(`no state machine named ${machine} (have ${this.machines.join(', ')})`);
    const existing = this.#byName.get(`${machine}/${name}`);
    if (existing) return existing;
    const id = `arn:aws:states:local:000000000000:execution:drainbridge-${machine}:${name}`;
    const stats: ExecutionStats = {
      stateTransitions: 0,
      lambdaInvocations: 0,
      lambdaErrors: 0,
      retries: 0,
      parallelStates: 0,
      lambdaMilliseconds: 0,
      historyEvents: 2,
    };
    // After abort the interpreter still finishes its current Retry loop without waiting; calling no task
    // once aborted keeps a stopped execution from touching the cluster (a killed process calls nothing either).
    const aborted = { value: false };
    const calls = new InFlight();
    const run = stateMachine.run(input as never, {
      overrides: this.#overrides(definition, { executionId: id, stats, aborted, calls }),
      context: {
        Execution: { Id: id, Name: name, [EXECUTION_ID_SHA256_FIELD]: executionIdSha256(id) },
        StateMachine: { Id: `${LOCAL_STATE_MACHINE_ARN_PREFIX}${machine}`, Name: machine },
        // `$$.Task.Token`: a fresh token each time a state reads it, as Step Functions issues one per Task entry.
        Task: {
          get Token() {
            return `${id}/${randomUUID()}`;
          },
        },
      },
    });
    void this.#countEvents(run.eventLogs as AsyncGenerator<{ type: string; state?: { type?: string } }>, stats);
    const abort = () => {
      aborted.value = true;
      run.abort();
      for (const [token, waiter] of this.#waiting) {
        if (waiter.executionId !== id) continue;
        this.#waiting.delete(token);
        waiter.fail(Object.assign(new Error(`execution ${id} was aborted`), { name: 'ExecutionAborted' }));
      }
    };
    const settled = run.result.then(
      () => calls.idle(),
      () => calls.idle(),
    );
    const execution = { id, machine, result: run.result, settled, stats, abort };
    this.#byName.set(`${machine}/${name}`, execution);
    void settled.then(() => this.#forgetOldNames(`${machine}/${name}`));
    return execution;
  }

  /**
   * SendTaskSuccess: wakes the callback Task waiting with `token`, which ends with `output`. False (and
   * nothing changes) when no Task waits with it — it woke already, timed out, or its execution ended.
   */
  sendTaskSuccess(token: string, output: unknown = {}): boolean {
    const waiter = this.#waiting.get(token);
    if (!waiter) return false;
    this.#waiting.delete(token);
    waiter.succeed(output);
    return true;
  }

  /** How many callback Tasks wait for their token now. */
  get waitingForTokens(): number {
    return this.#waiting.size;
  }

  /**
   * Waits until `token` is sent back or `timeoutMs` pass (then States.Timeout, as Step Functions fails a
   * callback Task after TimeoutSeconds). Registered before the function runs: a wake-up sent while it
   * runs is not lost.
   */
  #waitForToken(executionId: string, token: string, timeoutMs: number): { promise: Promise<unknown>; cancel(): void } {
    const { promise, resolve, reject } = Promise.withResolvers<unknown>();
    // The fallback can fire while the function still runs (TimeoutSeconds counts from the Task's start, as
    // on AWS): the rejection is awaited after the call, not unhandled before it.
    promise.catch(() => undefined);
    const timer = setTimeout(() => {
      if (this.#waiting.get(token) !== waiter) return;
      this.#waiting.delete(token);
      reject(Object.assign(new Error(`no task token returned within ${timeoutMs} ms`), { name: 'States.Timeout' }));
    }, timeoutMs);
    const waiter: TokenWaiter = {
      executionId,
      succeed: (output) => {
        clearTimeout(timer);
        resolve(output);
      },
      fail: (error) => {
        clearTimeout(timer);
        reject(error);
      },
    };
    this.#waiting.set(token, waiter);
    const cancel = () => {
      if (this.#waiting.get(token) === waiter) this.#waiting.delete(token);
      clearTimeout(timer);
    };
    return { promise, cancel };
  }

  /** The `states:startExecution` service integration: starts (or finds, by name) an execution here. */
  #startExecution(request: StartExecutionRequest): { ExecutionArn: string; StartDate: string } {
    const arn = String(request.StateMachineArn ?? '');
    if (!arn.startsWith(LOCAL_STATE_MACHINE_ARN_PREFIX)) {
      throw Object.assign(new Error(`cannot start ${arn}: not a state machine of this runtime`), {
        name: 'StepFunctions.StateMachineDoesNotExistException',
      });
    }
    const known = this.#byName.get(`${arn.slice(LOCAL_STATE_MACHINE_ARN_PREFIX.length)}/${request.Name ?? ''}`);
    const input = typeof request.Input === 'string' ? JSON.parse(request.Input) : request.Input;
    const execution = this.start(arn.slice(LOCAL_STATE_MACHINE_ARN_PREFIX.length), input, request.Name);
    if (!known) this.#options.onStarted?.(execution, input);
    return { ExecutionArn: execution.id, StartDate: new Date().toISOString() };
  }

  #overrides(
    definition: MachineDefinition,
    execution: { executionId: string; stats: ExecutionStats; aborted: { value: boolean }; calls: InFlight },
  ): Overrides {
    const { executionId, aborted } = execution;
    const taskResourceLocalHandlers: Record<string, LocalTask> = {};
    const retryIntervalOverrides: Record<string, number> = {};
    for (const [stateName, key] of taskFunctions(definition)) {
      taskResourceLocalHandlers[stateName] = (input: JsonValue) => this.#callFunction(execution, stateName, key, input);
    }
    for (const [stateName, key] of callbackFunctions(definition)) {
      taskResourceLocalHandlers[stateName] = this.#callbackTask(definition, execution, stateName, key);
    }
    for (const stateName of startExecutionStates(definition)) {
      taskResourceLocalHandlers[stateName] = async (input: JsonValue) => {
        if (aborted.value)
          throw Object.assign(new Error(`execution ${executionId} was aborted`), { name: 'ExecutionAborted' });
        return this.#startExecution(input as unknown as StartExecutionRequest) as unknown as JsonValue;
      };
    }
    // Every Task's Retry intervals (a callback Task's fallback too, #callbackTimeoutMs).
    const retryMs = this.#options.retryIntervalMs;
    if (retryMs !== undefined)
      for (const name of Object.keys(taskResourceLocalHandlers)) retryIntervalOverrides[name] = retryMs;
    const waitTimeOverrides = this.#waitOverrides(definition);
    const clock = this.#options.waitClock;
    if (clock) this.#followTimestamps(definition, clock, taskResourceLocalHandlers, waitTimeOverrides);
    return { taskResourceLocalHandlers, retryIntervalOverrides, waitTimeOverrides };
  }

  /**
   * Wait states' durations: every one `waitMs` when given; else a Wait of fixed Seconds (a request waiting
   * in line) like a Retry interval — `retryIntervalMs` when set, else its Seconds on the simulated clock.
   * Waits on a timestamp follow `waitClock` (#followTimestamps).
   */
  #waitOverrides(definition: MachineDefinition): Record<string, number> {
    const overrides: Record<string, number> = {};
    const { waitMs, retryIntervalMs, waitClock } = this.#options;
    for (const [name, state] of Object.entries(definition.States)) {
      if (state.Type !== 'Wait') continue;
      if (waitMs !== undefined) overrides[name] = waitMs;
      else if (state.Seconds !== undefined && (retryIntervalMs !== undefined || waitClock))
        overrides[name] = retryIntervalMs ?? (state.Seconds * 1000) / (waitClock?.speed ?? 1);
    }
    return overrides;
  }

  /**
   * A `lambda:invoke.waitForTaskToken` Task: calls the function with its Payload (the task token in it,
   * from `$$.Task.Token`), then waits for the token (sendTaskSuccess) or its fallback (States.Timeout).
   */
  #callbackTask(
    definition: MachineDefinition,
    execution: { executionId: string; stats: ExecutionStats; aborted: { value: boolean }; calls: InFlight },
    stateName: string,
    key: string,
  ): LocalTask {
    const timeoutMs = this.#callbackTimeoutMs(definition, stateName);
    return async (input: JsonValue) => {
      const payload = (input as { Payload?: JsonValue }).Payload ?? {};
      const token = String((payload as { taskToken?: unknown }).taskToken ?? '');
      const wait = this.#waitForToken(execution.executionId, token, timeoutMs);
      try {
        await this.#callFunction(execution, stateName, key, payload);
      } catch (error) {
        wait.cancel();
        throw error;
      }
      return (await wait.promise) as JsonValue;
    };
  }

  /** One Lambda call of a Task (a callback Task's too), counted and reported; refused once the execution is aborted. */
  async #callFunction(
    execution: { executionId: string; stats: ExecutionStats; aborted: { value: boolean }; calls: InFlight },
    stateName: string,
    key: string,
    input: JsonValue,
  ): Promise<JsonValue> {
    const { executionId, stats, aborted, calls } = execution;
    if (aborted.value) {
      this.#options.onRefused?.({ executionId, stateName });
      throw Object.assign(new Error(`execution ${executionId} was aborted`), { name: 'ExecutionAborted' });
    }
    const handler = this.#handlers[key] as LocalHandler;
    stats.lambdaInvocations++;
    const done = calls.begin();
    const started = performance.now();
    const running = handler(input, lambdaContext(key, executionId));
    this.#inFlight.add(running);
    try {
      const output = await running;
      const durationMs = performance.now() - started;
      stats.lambdaMilliseconds += durationMs;
      this.#options.onTask?.({ executionId, stateName, functionKey: key, output, durationMs });
      return output as JsonValue;
    } catch (error) {
      const durationMs = performance.now() - started;
      stats.lambdaMilliseconds += durationMs;
      stats.lambdaErrors++;
      const { name, message } = error as Error;
      this.#options.onTask?.({ executionId, stateName, functionKey: key, error: { name, message }, durationMs });
      throw error;
    } finally {
      done();
      this.#inFlight.delete(running);
    }
  }

  /**
   * How long a callback Task waits before its fallback (States.Timeout): its TimeoutSeconds, on the
   * simulated clock when one is given; `retryIntervalMs` when set (it stands for every wait's schedule).
   */
  #callbackTimeoutMs(definition: MachineDefinition, stateName: string): number {
    if (this.#options.retryIntervalMs !== undefined) return this.#options.retryIntervalMs;
    const state = allStates(definition).find(([name]) => name === stateName)?.[1];
    return ((state?.TimeoutSeconds ?? 60) * 1000) / (this.#options.waitClock?.speed ?? 1);
  }

  /**
   * Makes each Wait state on a timestamp that a Task computed wait on `clock`: the task's result is
   * read as it returns (the Wait's TimestampPath inside the task's ResultPath), and the Wait's
   * override is computed when the interpreter asks for it — (timestamp − clock now) / speed real ms.
   */
  #followTimestamps(
    definition: MachineDefinition,
    clock: WaitClock,
    handlers: Record<string, LocalTask>,
    overrides: Record<string, number>,
  ): void {
    for (const { wait, writers } of timestampWaits(definition)) {
      let timestamp: number | undefined;
      for (const { task, path } of writers) {
        const handler = handlers[task];
        if (!handler) continue;
        handlers[task] = async (input: JsonValue) => {
          const output = await handler(input);
          const value = valueAt(output, path);
          if (typeof value === 'string') timestamp = Date.parse(value);
          return output;
        };
      }
      Object.defineProperty(overrides, wait, {
        enumerable: true,
        // Rounded up, plus the 1 ms by which a Node timer may fire early: never before the timestamp.
        get: () => (timestamp === undefined ? 0 : Math.max(0, Math.ceil((timestamp - clock.now()) / clock.speed) + 1)),
      });
    }
  }

  async #countEvents(
    events: AsyncGenerator<{ type: string; state?: { type?: string } }>,
    stats: ExecutionStats,
  ): Promise<void> {
    try {
      for await (const event of events) {
        if (event.type === 'StateEntered') {
          stats.stateTransitions++;
          stats.historyEvents += 2;
          if (event.state?.type === 'Task') stats.historyEvents += 3;
          if (event.state?.type === 'Parallel') {
            stats.parallelStates++;
            stats.historyEvents += 2;
          }
        }
        if (event.type === 'StateRetried') {
          stats.retries++;
          stats.historyEvents += 3;
        }
      }
    } catch {
      // the log ends with the execution; its errors surface through `result`
    }
  }
}
