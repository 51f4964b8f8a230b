/**
 * EventBridge cron expressions — `cron(Minutes Hours Day-of-month Month Day-of-week Year)` — for the
 * in-process bus's schedules and the maintenance windows, in UTC or in an IANA time zone (as EventBridge
 * Scheduler's `ScheduleExpressionTimezone`). The calendar arithmetic (L, W, #, months, years, time
 * zones and daylight-saving gaps) is croner's; this file keeps EventBridge's dialect: exactly one of the
 * two day fields is `?`, weekday 1 is Sunday (croner's Quartz numbering), `a/b` steps from a value, `nL`
 * is the last weekday n of the month, years 1970–2199. A wrong field is named in the error.
 */
import { Cron } from 'croner';

/** The next run strictly after `after`, or undefined when there is none (a past year). */
export interface CronSchedule {
  next(after: Date): Date | undefined;
}

interface FieldSpec {
  readonly name: string;
  readonly max: number;
}

const FIELDS: readonly FieldSpec[] = [
  { name: 'minutes', max: 59 },
  { name: 'hours', max: 23 },
  { name: 'day-of-month', max: 31 },
  { name: 'month', max: 12 },
  { name: 'day-of-week', max: 7 },
  { name: 'year', max: 2199 },
];

const YEARS = /^(\*|\d{4}(-\d{4})?(\/\d+)?)(,\d{4}(-\d{4})?(\/\d+)?)*$/;

/** EventBridge's `a/b` (from a, every b) is croner's `a-max/b`; its `nL` (last weekday n) croner's `n#L`. */
function toCroner(text: string, spec: FieldSpec): string {
  const stepped = text.replace(/^(\w+)\/(\d+)$/, (_all, from: string, step: string) =>
    from === '*' ? `*/${step}` : `${from}-${spec.max}/${step}`,
  );
  if (spec.name !== 'day-of-week') return stepped;
  if (stepped === 'L') return '7'; // L alone: the last day of the week, Saturday
  return stepped.replace(/^(\w+)L$/, '$1#L');
}

function checkYears(text: string): void {
  if (!YEARS.test(text)) throw new Error(`year: "${text}" is not a year, range or list`);
  for (const year of text.match(/\d{4}/g) ?? []) {
    if (Number(year) < 1970 || Number(year) > 2199) throw new Error(`year: "${year}" is not a value from 1970 to 2199`);
  }
}

const OPTIONS = { paused: true, alternativeWeekdays: true, mode: '7-part' } as const;

/** Each field alone (the others matching anything), so that croner's complaint names the field. */
function checkField(fields: readonly string[], index: number, timezone: string | undefined): void {
  const probe = ['*', '*', '*', '*', '?', '*'];
  if (index === 4) [probe[2], probe[4]] = ['?', fields[4] as string];
  else probe[index] = fields[index] as string;
  const spec = FIELDS[index] as FieldSpec;
  try {
    new Cron(`0 ${probe.map((text, i) => toCroner(text, FIELDS[i] as FieldSpec)).join(' ')}`, {
      ...OPTIONS,
      ...(timezone ? { timezone } : {}),
    });
  } catch (error) {
    const reason = (error as Error).message.replace(/^Cron\w*: /, '');
    throw new Error(`${spec.name}: "${fields[index]}" is not valid (${reason})`);
  }
}

/** Whether `timezone` is an IANA time zone this runtime knows. */
export function isTimeZone(timezone: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: timezone });
    return true;
  } catch {
    return false;
  }
}

/** Parses `cron(…)`, in `timezone` (IANA) or UTC; throws an Error naming the field that is wrong. */
export function parseCron(expression: string, timezone?: string): CronSchedule {
  const body = /^cron\((.*)\)$/.exec(expression.trim())?.[1];
  const fields = body?.trim().split(/\s+/) ?? [];
  if (fields.length !== 6)
    throw new Error(`"${expression}" is not cron(minutes hours day-of-month month day-of-week year)`);
  if ((fields[2] === '?') === (fields[4] === '?')) {
    throw new Error('exactly one of day-of-month and day-of-week must be "?"');
  }
  if (timezone !== undefined && !isTimeZone(timezone)) throw new Error(`"${timezone}" is not an IANA time zone`);
  checkYears(fields[5] as string);
  for (let index = 0; index < 5; index++) checkField(fields, index, timezone);
  const pattern = `0 ${fields.map((text, i) => toCroner(text, FIELDS[i] as FieldSpec)).join(' ')}`;
  const cron = new Cron(pattern, { ...OPTIONS, timezone: timezone ?? 'UTC' });
  return {
    next(after) {
      return cron.nextRun(after) ?? undefined;
    },
  };
}
