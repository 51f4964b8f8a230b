/**
 * Schedules (scheduled rules / EventBridge Scheduler) for the in-process bus: `rate(…)`,
 * `cron(…)` (UTC, or the schedule's time zone as EventBridge Scheduler's ScheduleExpressionTimezone;
 * see cron.ts) and one-time `at(…)`, each reduced to "when is the next run after
 * this instant". Running them on a clock is scheduler.ts's job.
 */
import { InvalidInput } from '../errors/index.ts';
import { parseCron } from './cron.ts';

/** A schedule as `definitions.json` holds it. */
export interface BusScheduleDefinition {
  readonly name: string;
  readonly scheduleExpression: string;
  /** `ENABLED` (the default) or `DISABLED`. */
  readonly state?: string;
  /** IANA time zone of a `cron(…)` expression (EventBridge Scheduler); UTC when absent. */
  readonly timezone?: string;
  readonly target: { readonly stateMachine: string; readonly input?: string };
}

/** A schedule ready to run. */
export interface CompiledSchedule {
  readonly name: string;
  readonly stateMachine: string;
  /** The execution input: the target's constant input, `{}` when it has none. */
  readonly input: unknown;
  /** The run after the one at `previous` (or after the schedule started), if any. */
  next(previous: Date): Date | undefined;
}

const UNIT_MS: Record<string, number> = { minute: 60_000, hour: 3_600_000, day: 86_400_000 };
const RATE = /^rate\((\d+) (minute|minutes|hour|hours|day|days)\)$/;
const AT = /^at\((\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})\)$/;

/** Milliseconds between runs of `rate(value unit)`; throws an Error saying what is wrong. */
export function parseRate(expression: string): number {
  const match = RATE.exec(expression.trim());
  if (!match) throw new Error(`"${expression}" is not rate(<value> <minute(s)|hour(s)|day(s)>)`);
  const value = Number(match[1]);
  const unit = match[2] as string;
  if (value < 1) throw new Error(`"${expression}": the value must be a positive whole number`);
  // EventBridge wants the singular exactly when the value is 1.
  if ((value === 1) !== !unit.endsWith('s')) {
    throw new Error(`"${expression}": use "${value} ${unit.replace(/s$/, '')}${value === 1 ? '' : 's'}"`);
  }
  return value * (UNIT_MS[unit.replace(/s$/, '')] as number);
}

/** The next-run function of a schedule expression; throws an Error saying what is wrong. */
export function parseScheduleExpression(expression: string, timezone?: string): (previous: Date) => Date | undefined {
  const text = expression.trim();
  if (text.startsWith('cron(')) {
    const cron = parseCron(text, timezone);
    return (previous) => cron.next(previous);
  }
  const at = AT.exec(text);
  if (at) {
    const when = new Date(`${at[1]}Z`);
    if (Number.isNaN(when.getTime())) throw new Error(`"${expression}" is not a valid time`);
    return (previous) => (when > previous ? when : undefined);
  }
  const intervalMs = parseRate(text);
  return (previous) => new Date(previous.getTime() + intervalMs);
}

function readInput(text: string | undefined, path: string, what: string): unknown {
  if (text === undefined) return {};
  try {
    return JSON.parse(text);
  } catch {
    throw new InvalidInput(what, [{ path, message: 'must be valid JSON text' }]);
  }
}

function compileOne(schedule: BusScheduleDefinition, index: number): CompiledSchedule {
  const what = `invalid schedule ${JSON.stringify(schedule?.name ?? index)}`;
  const base = `schedules[${index}]`;
  if (typeof schedule?.name !== 'string' || schedule.name === '') {
    throw new InvalidInput(what, [{ path: `${base}.name`, message: 'must be a non-empty string' }]);
  }
  if (typeof schedule.target?.stateMachine !== 'string' || schedule.target.stateMachine === '') {
    throw new InvalidInput(what, [{ path: `${base}.target.stateMachine`, message: 'must name a state machine' }]);
  }
  const input = readInput(schedule.target.input, `${base}.target.input`, what);
  try {
    const next = parseScheduleExpression(String(schedule.scheduleExpression ?? ''), schedule.timezone);
    return { name: schedule.name, stateMachine: schedule.target.stateMachine, input, next };
  } catch (error) {
    throw new InvalidInput(what, [{ path: `${base}.scheduleExpression`, message: (error as Error).message }]);
  }
}

/** Validates every schedule (disabled ones too) and returns the ENABLED ones. */
export function compileSchedules(schedules: readonly BusScheduleDefinition[]): CompiledSchedule[] {
  return schedules
    .map((schedule, index) => ({
      enabled: (schedule?.state ?? 'ENABLED') === 'ENABLED',
      compiled: compileOne(schedule, index),
    }))
    .filter(({ enabled }) => enabled)
    .map(({ compiled }) => compiled);
}
