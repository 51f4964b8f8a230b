/**
 * EventBridge cron expressions — `cron(Minutes Hours Day-of-month Month Day-of-week Year)`, in UTC —
 * for the in-process bus's schedules. Supports `,` `-` `*` `/` and `?`, month and weekday names
 * (JAN–DEC, SUN–SAT; weekday 1 is Sunday), `L` and `nW` in day-of-month, `L`, `nL` and `n#k` in
 * day-of-week. As EventBridge requires, exactly one of the two day fields is `?`.
 */

/** The next run strictly after `after`, or undefined when there is none (a past year). */
export interface CronSchedule {
  next(after: Date): Date | undefined;
}

interface FieldSpec {
  readonly name: string;
  readonly min: number;
  readonly max: number;
  readonly names?: readonly string[];
}

const MINUTES: FieldSpec = { name: 'minutes', min: 0, max: 59 };
const HOURS: FieldSpec = { name: 'hours', min: 0, max: 23 };
const DAY_OF_MONTH: FieldSpec = { name: 'day-of-month', min: 1, max: 31 };
const MONTH: FieldSpec = {
  name: 'month',
  min: 1,
  max: 12,
  names: ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'],
};
const DAY_OF_WEEK: FieldSpec = {
  name: 'day-of-week',
  min: 1,
  max: 7,
  names: ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'],
};
const YEAR: FieldSpec = { name: 'year', min: 1970, max: 2199 };

function readValue(text: string, spec: FieldSpec): number {
  const named = spec.names?.indexOf(text.toUpperCase()) ?? -1;
  const value = named >= 0 ? named + spec.min : /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!(value >= spec.min && value <= spec.max)) {
    throw new Error(`${spec.name}: "${text}" is not a value from ${spec.min} to ${spec.max}`);
  }
  return value;
}

/** One list item: `*`, `a`, `a-b`, with an optional `/step`. */
function addItem(item: string, spec: FieldSpec, into: Set<number>): void {
  const [range = '', stepText] = item.split('/');
  const step = stepText === undefined ? 1 : Number(stepText);
  if (!Number.isInteger(step) || step < 1) throw new Error(`${spec.name}: "${item}" has a bad step`);
  let [low, high] = [spec.min, spec.max];
  if (range !== '*') {
    const [from = '', to] = range.split('-');
    low = readValue(from, spec);
    high = to === undefined ? (stepText === undefined ? low : spec.max) : readValue(to, spec);
  }
  if (low > high) throw new Error(`${spec.name}: "${item}" is an empty range`);
  for (let value = low; value <= high; value += step) into.add(value);
}

function parseList(text: string, spec: FieldSpec): Set<number> {
  const values = new Set<number>();
  for (const item of text.split(',')) addItem(item, spec, values);
  return values;
}

const daysIn = (year: number, month: number) => new Date(Date.UTC(year, month, 0)).getUTCDate();
const weekdayOf = (year: number, month: number, day: number) =>
  new Date(Date.UTC(year, month - 1, day)).getUTCDay() + 1;

function nearestWeekday(year: number, month: number, day: number): number {
  const last = daysIn(year, month);
  const target = Math.min(day, last);
  const weekday = weekdayOf(year, month, target);
  if (weekday === 7) return target === 1 ? 3 : target - 1;
  if (weekday === 1) return target === last ? target - 2 : target + 1;
  return target;
}

type DayTest = (year: number, month: number, day: number) => boolean;

function parseDayOfMonth(text: string): DayTest {
  if (text === 'L') return (y, m, d) => d === daysIn(y, m);
  const weekday = /^(\d+)W$/.exec(text);
  if (weekday) {
    const wanted = readValue(weekday[1] as string, DAY_OF_MONTH);
    return (y, m, d) => d === nearestWeekday(y, m, wanted);
  }
  const days = parseList(text, DAY_OF_MONTH);
  return (_y, _m, d) => days.has(d);
}

function parseDayOfWeek(text: string): DayTest {
  if (text === 'L') return (y, m, d) => weekdayOf(y, m, d) === 7;
  const last = /^(\w+)L$/.exec(text);
  if (last) {
    const wanted = readValue(last[1] as string, DAY_OF_WEEK);
    return (y, m, d) => weekdayOf(y, m, d) === wanted && d + 7 > daysIn(y, m);
  }
  const nth = /^(\w+)#([1-5])$/.exec(text);
  if (nth) {
    const wanted = readValue(nth[1] as string, DAY_OF_WEEK);
    const k = Number(nth[2]);
    return (y, m, d) => weekdayOf(y, m, d) === wanted && Math.ceil(d / 7) === k;
  }
  const days = parseList(text, DAY_OF_WEEK);
  return (y, m, d) => days.has(weekdayOf(y, m, d));
}

function parseDays(dayOfMonth: string, dayOfWeek: string): DayTest {
  if ((dayOfMonth === '?') === (dayOfWeek === '?')) {
    throw new Error('exactly one of day-of-month and day-of-week must be "?"');
  }
  return dayOfMonth === '?' ? parseDayOfWeek(dayOfWeek) : parseDayOfMonth(dayOfMonth);
}

const sorted = (values: Set<number>) => [...values].sort((a, b) => a - b);

/** Parses `cron(…)`; throws an Error naming the field that is wrong. */
export function parseCron(expression: string): CronSchedule {
  const body = /^cron\((.*)\)$/.exec(expression.trim())?.[1];
  const fields = body?.trim().split(/\s+/) ?? [];
  if (fields.length !== 6)
    throw new Error(`"${expression}" is not cron(minutes hours day-of-month month day-of-week year)`);
  const [minutesText, hoursText, domText, monthText, dowText, yearText] = fields as [
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  const minutes = sorted(parseList(minutesText, MINUTES));
  const hours = sorted(parseList(hoursText, HOURS));
  const months = parseList(monthText, MONTH);
  const years = parseList(yearText, YEAR);
  const dayMatches = parseDays(domText, dowText);
  const times = hours.flatMap((h) => minutes.map((m) => h * 60 + m));
  const lastYear = Math.max(...years);

  return {
    next(after) {
      // The first whole minute strictly after `after`.
      const start = new Date(Math.floor(after.getTime() / 60_000) * 60_000 + 60_000);
      const day = new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth(), start.getUTCDate()));
      let fromMinute = start.getUTCHours() * 60 + start.getUTCMinutes();
      for (; day.getUTCFullYear() <= lastYear; day.setUTCDate(day.getUTCDate() + 1), fromMinute = 0) {
        const [y, m, d] = [day.getUTCFullYear(), day.getUTCMonth() + 1, day.getUTCDate()];
        if (!years.has(y) || !months.has(m) || !dayMatches(y, m, d)) continue;
        const time = times.find((t) => t >= fromMinute);
        if (time !== undefined) return new Date(day.getTime() + time * 60_000);
      }
      return undefined;
    },
  };
}
