/**
 * The in-process bus for embedded mode: PutEvents in, state machines started from the very rules
 * `serverless package` generated. Behaves like EventBridge where the workflow can tell:
 *  - `putEvents` answers once the events are accepted; targets run afterwards (asynchronously);
 *  - every ENABLED rule on this bus whose pattern matches gets the event, with its target input applied;
 *  - optionally each delivery happens twice (EventBridge is at-least-once), to test idempotency.
 * For tests it records what was accepted, delivered, unmatched or failed, and `idle()` waits until
 * every delivery (and every event those deliveries put) has settled.
 */
import { InvalidInput } from '../errors/index.ts';
import type { PutEventsResultEntry } from './entry.ts';
import {
  type BusEnvelope,
  type EntryRefusal,
  eventTime,
  isEnvelope,
  type PutEventsEntry,
  toEnvelope,
} from './envelope.ts';
import { type BusRuleDefinition, type CompiledRule, compileRules, isSameBus } from './rules.ts';
import { type BusClock, ScheduleRunner, SYSTEM_CLOCK } from './scheduler.ts';
import { type BusScheduleDefinition, type CompiledSchedule, compileSchedules } from './schedules.ts';

export type { BusEnvelope, PutEventsEntry } from './envelope.ts';
export type { BusRuleDefinition } from './rules.ts';
export type { BusClock } from './scheduler.ts';
export type { BusScheduleDefinition } from './schedules.ts';

/** Starts an execution of `stateMachine` with `input` (the target input, parsed as JSON). */
export type StartExecution = (stateMachine: string, input: unknown) => Promise<void>;

export interface InProcessBusOptions {
  readonly rules: readonly BusRuleDefinition[];
  readonly schedules?: readonly BusScheduleDefinition[];
  /** The bus this instance is; entries and rules naming another bus are not its business. */
  readonly busName: string;
  /** Other names the definitions use for this bus (e.g. the CloudFormation logical id). */
  readonly busAliases?: readonly string[];
  readonly start: StartExecution;
  readonly clock?: BusClock;
  readonly region?: string;
  readonly account?: string;
  /**
   * Deliver every matched event twice, as EventBridge may: `true` starts the second copy after the
   * first `start` settled, `'concurrent'` starts both at once.
   */
  readonly duplicateDeliveries?: boolean | 'concurrent';
  /** Event ids; random UUIDs by default. */
  readonly newId?: () => string;
  /** Told of each delivery, failure and unmatched event as it happens (e.g. to log them). */
  readonly listener?: BusListener;
}

/** Callbacks for what the bus does; each is optional and must not throw. */
export interface BusListener {
  delivered?(delivery: Delivery): void;
  failed?(failure: FailedDelivery): void;
  unmatched?(event: BusEnvelope): void;
}

/** One `start` call made for a rule or schedule. */
export interface Delivery {
  readonly rule: string;
  readonly stateMachine: string;
  readonly event?: BusEnvelope;
  readonly input: unknown;
  /** 1 for the first delivery, 2 for the duplicate. */
  readonly copy: number;
}

/** A delivery that could not be made or whose `start` failed. */
export interface FailedDelivery {
  readonly rule: string;
  readonly stateMachine: string;
  readonly event?: BusEnvelope;
  readonly error: Error;
}

export interface PutEventsOutput {
  readonly FailedEntryCount: number;
  readonly Entries: PutEventsResultEntry[];
}

/** PutEvents takes at most this many entries per call. */
export const MAX_PUT_ENTRIES = 10;

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

/**
 * How many of each kept record (accepted, delivered, unmatched, failed) the bus keeps, the newest: enough
 * to inspect, bounded — `drainbridge run` lives for weeks and puts an event on its bus at every step.
 */
export const BUS_RECORDS_KEPT = 2000;

/** Appends `item`, dropping the oldest once `list` is twice `kept` long (amortised: one splice per `kept` pushes). */
function keepNewest<T>(list: T[], item: T, kept: number): void {
  list.push(item);
  if (list.length >= 2 * kept) list.splice(0, list.length - kept);
}

/** EventBridge in one process: PutEvents, rules → `start`, schedules. See the file comment and README.md. */
export class InProcessBus {
  /** The events accepted, in order (the newest BUS_RECORDS_KEPT at least). */
  readonly accepted: BusEnvelope[] = [];
  /** The `start` calls made (rules and schedules), the newest BUS_RECORDS_KEPT at least. */
  readonly delivered: Delivery[] = [];
  /** Accepted events no rule matched (the newest BUS_RECORDS_KEPT at least). */
  readonly unmatched: BusEnvelope[] = [];
  readonly failed: FailedDelivery[] = [];
  readonly busName: string;

  readonly #options: InProcessBusOptions;
  readonly #rules: readonly CompiledRule[];
  readonly #schedules: readonly CompiledSchedule[];
  readonly #clock: BusClock;
  readonly #pending = new Set<Promise<void>>();
  readonly #runner: ScheduleRunner<CompiledSchedule>;

  /** Validates every rule and schedule; a bad one is an `InvalidInput` naming it and the field. */
  constructor(options: InProcessBusOptions) {
    this.#options = options;
    this.busName = options.busName;
    this.#clock = options.clock ?? SYSTEM_CLOCK;
    this.#rules = compileRules(options.rules, {
      busName: options.busName,
      busAliases: options.busAliases ?? [],
      region: this.region,
      account: this.account,
    });
    this.#schedules = compileSchedules(options.schedules ?? []);
    this.#runner = new ScheduleRunner(
      this.#schedules,
      this.#clock,
      // A failure is already recorded in `failed` by the tracked run; nothing to add here.
      (schedule) => void this.fireSchedule(schedule.name).catch(() => undefined),
    );
  }

  get region(): string {
    return this.#options.region ?? 'local';
  }

  get account(): string {
    return this.#options.account ?? '000000000000';
  }

  /** The rules this bus delivers for (ENABLED, on this bus). */
  get ruleNames(): string[] {
    return this.#rules.map((rule) => rule.name);
  }

  /**
   * PutEvents: accepts each valid entry for this bus and returns at once; deliveries follow
   * asynchronously. A bad entry fails alone with PutEvents' ErrorCode; 0 or more than 10 entries
   * fail the whole call with `InvalidInput`, as PutEvents' validation does.
   */
  async putEvents(entries: readonly PutEventsEntry[]): Promise<PutEventsOutput> {
    if (!Array.isArray(entries) || entries.length === 0 || entries.length > MAX_PUT_ENTRIES) {
      throw new InvalidInput('invalid PutEvents request', [
        { path: 'Entries', message: `must hold 1 to ${MAX_PUT_ENTRIES} entries` },
      ]);
    }
    const results = entries.map((entry) => this.#accept(entry));
    return { FailedEntryCount: results.filter((r) => r.ErrorCode !== undefined).length, Entries: results };
  }

  #accept(entry: PutEventsEntry): PutEventsResultEntry {
    if (!isSameBus(entry.EventBusName, { busName: this.busName, busAliases: this.#options.busAliases ?? [] })) {
      const name = entry.EventBusName ?? 'default';
      return {
        ErrorCode: 'ResourceNotFoundException',
        ErrorMessage: `Event bus ${name} does not exist here (this in-process bus is "${this.busName}"); set EventBusName.`,
      };
    }
    const envelope: BusEnvelope | EntryRefusal = toEnvelope(entry, {
      account: this.account,
      region: this.region,
      now: this.#clock.now(),
      ...(this.#options.newId ? { newId: this.#options.newId } : {}),
    });
    if (!isEnvelope(envelope)) return envelope;
    keepNewest(this.accepted, envelope, BUS_RECORDS_KEPT);
    // setImmediate: the caller gets PutEvents' answer before any target runs, as on EventBridge.
    this.#track(new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.#route(envelope)));
    return { EventId: envelope.id };
  }

  async #route(event: BusEnvelope): Promise<void> {
    const matched = this.#rules.filter((rule) => rule.matches(event));
    if (matched.length === 0) {
      keepNewest(this.unmatched, event, BUS_RECORDS_KEPT);
      this.#options.listener?.unmatched?.(event);
      return;
    }
    const ingestionTime = eventTime(this.#clock.now());
    await Promise.all(matched.map((rule) => this.#deliverToRule(rule, event, ingestionTime)));
  }

  async #deliverToRule(rule: CompiledRule, event: BusEnvelope, ingestionTime: string): Promise<void> {
    const target = { rule: rule.name, stateMachine: rule.stateMachine, event };
    let input: unknown;
    try {
      const text = rule.renderInput(event as unknown as Record<string, unknown>, {
        ruleName: rule.name,
        ruleArn: rule.arn,
        ingestionTime,
      });
      input = JSON.parse(text);
    } catch (error) {
      // Step Functions takes JSON input only; EventBridge would count a failed invocation.
      this.#fail({ ...target, error: new Error(`target input is not JSON: ${asError(error).message}`) });
      return;
    }
    await this.#startCopies(target, input);
  }

  async #startCopies(target: Omit<Delivery, 'input' | 'copy'>, input: unknown): Promise<void> {
    const duplicate = this.#options.duplicateDeliveries ?? false;
    if (duplicate === 'concurrent') {
      await Promise.all([this.#start(target, input, 1), this.#start(target, input, 2)]);
      return;
    }
    await this.#start(target, input, 1);
    if (duplicate) await this.#start(target, input, 2);
  }

  async #start(target: Omit<Delivery, 'input' | 'copy'>, input: unknown, copy: number): Promise<void> {
    const delivery = { ...target, input, copy };
    keepNewest(this.delivered, delivery, BUS_RECORDS_KEPT);
    this.#options.listener?.delivered?.(delivery);
    try {
      await this.#options.start(target.stateMachine, structuredClone(input));
    } catch (error) {
      this.#fail({ ...target, error: asError(error) });
    }
  }

  #fail(failure: FailedDelivery): void {
    keepNewest(this.failed, failure, BUS_RECORDS_KEPT);
    this.#options.listener?.failed?.(failure);
  }

  #track(delivery: Promise<void>): void {
    // Failures are recorded inside; this catch only keeps a throwing listener from becoming an
    // unhandled rejection that would end the process.
    const settled = delivery
      .catch(
        (error: unknown) =>
          void keepNewest(this.failed, { rule: '(bus)', stateMachine: '', error: asError(error) }, BUS_RECORDS_KEPT),
      )
      .finally(() => this.#pending.delete(settled));
    this.#pending.add(settled);
  }

  /** Resolves when every delivery so far, and every delivery those caused, has settled. */
  async idle(): Promise<void> {
    while (this.#pending.size > 0) await Promise.allSettled([...this.#pending]);
  }

  /** Same as `idle()`. */
  drain(): Promise<void> {
    return this.idle();
  }

  /** The ENABLED schedules this bus runs. */
  get scheduleNames(): string[] {
    return this.#schedules.map((schedule) => schedule.name);
  }

  /** Starts the ENABLED schedules (rate, cron, at) on the bus's clock. Idempotent. */
  startSchedules(): void {
    this.#runner.start();
  }

  /** Runs one schedule now (what its timer does when due). */
  async fireSchedule(name: string): Promise<void> {
    const schedule = this.#schedules.find((s) => s.name === name);
    if (!schedule)
      throw new InvalidInput('unknown schedule', [{ path: 'name', message: `no enabled schedule "${name}"` }]);
    const run = this.#start({ rule: schedule.name, stateMachine: schedule.stateMachine }, schedule.input, 1);
    this.#track(run);
    await run;
  }

  /** Stops the schedules. Deliveries already under way finish; `idle()` waits for them. */
  stop(): void {
    this.#runner.stop();
  }
}
