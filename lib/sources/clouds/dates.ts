/**
 * The providers' date formats, read exactly: a value in none of the forms a field accepts is a parse
 * error, never a guess (`Date.parse` would accept almost anything, in local time too).
 *  - RFC 1123 (HTTP-date), day of one or two digits: Azure `NotBefore`, AWS Health `startTime` —
 *    `Mon, 19 Sep 2016 18:29:47 GMT`;
 *  - EC2 IMDS scheduled events: `21 Jan 2019 09:00:43 GMT` (Go layout `2 Jan 2006 15:04:05 GMT`);
 *  - RFC 3339 (ISO 8601 with an offset): spot `time`, rebalance `noticeTime`, GCE maintenance windows,
 *    and Microsoft's Scheduled Events mock server's `NotBefore` (`2025-07-01T10:15:00Z`). An ISO time
 *    without an offset is refused: it names no instant.
 * A field lists the forms its provider's documentation and official tools emit (`parseDateIn`).
 */

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'] as const;
const MONTH_ALT = MONTHS.join('|');

/**
 * The weekday is checked for its form but not against the date: Azure's own documentation shows
 * `Mon, 11 Apr 2026`, a Saturday, and a wrong weekday says nothing about the instant.
 */
const RFC_1123 = new RegExp(
  `^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), (\\d{1,2}) (${MONTH_ALT}) (\\d{4}) (\\d{2}):(\\d{2}):(\\d{2}) GMT$`,
);
const EC2_IMDS = new RegExp(`^(\\d{1,2}) (${MONTH_ALT}) (\\d{4}) (\\d{2}):(\\d{2}):(\\d{2}) GMT$`);
const RFC_3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})$/;

function utc(parts: readonly string[]): string | undefined {
  const [day, month, year, hour, minute, second] = parts;
  const monthIndex = MONTHS.indexOf(month as (typeof MONTHS)[number]);
  const values = [year, day, hour, minute, second].map(Number) as [number, number, number, number, number];
  const [y, d, h, min, s] = values;
  if (h > 23 || min > 59 || s > 59) return undefined;
  const time = new Date(Date.UTC(y, monthIndex, d, h, min, s));
  // A day the month does not have (31 Apr) rolls over in Date.UTC: refuse it.
  if (time.getUTCDate() !== d || time.getUTCMonth() !== monthIndex) return undefined;
  return time.toISOString();
}

/** `Mon, 19 Sep 2016 18:29:47 GMT` → ISO 8601, or undefined when it is not an RFC 1123 date. */
export function parseRfc1123(text: string): string | undefined {
  const match = RFC_1123.exec(text);
  return match ? utc(match.slice(1)) : undefined;
}

/** `21 Jan 2019 09:00:43 GMT` → ISO 8601, or undefined. */
export function parseEc2ImdsDate(text: string): string | undefined {
  const match = EC2_IMDS.exec(text);
  return match ? utc(match.slice(1)) : undefined;
}

/** RFC 3339 with an offset → ISO 8601 (UTC), or undefined. */
export function parseRfc3339(text: string): string | undefined {
  if (!RFC_3339.test(text)) return undefined;
  const time = Date.parse(text);
  if (Number.isNaN(time)) return undefined;
  const [date] = text.split(/[Tt]/);
  const [y, m, d] = (date ?? '').split('-').map(Number) as [number, number, number];
  const check = new Date(Date.UTC(y, m - 1, d));
  if (check.getUTCDate() !== d || check.getUTCMonth() !== m - 1) return undefined;
  return new Date(time).toISOString();
}

/** A date form a provider writes. */
export type DateForm = 'rfc1123' | 'ec2-imds' | 'rfc3339';

const READERS: Readonly<Record<DateForm, (text: string) => string | undefined>> = {
  rfc1123: parseRfc1123,
  'ec2-imds': parseEc2ImdsDate,
  rfc3339: parseRfc3339,
};

/** Examples of each form, for the messages that refuse a value. */
export const DATE_FORM_EXAMPLES: Readonly<Record<DateForm, string>> = {
  rfc1123: '"Mon, 19 Sep 2016 18:29:47 GMT"',
  'ec2-imds': '"21 Jan 2019 09:00:43 GMT"',
  rfc3339: '"2019-01-21T09:00:43Z"',
};

/** `text` read in the first of `forms` it matches → ISO 8601 (UTC), or undefined when it matches none. */
export function parseDateIn(text: string, forms: readonly DateForm[]): string | undefined {
  for (const form of forms) {
    const instant = READERS[form](text);
    if (instant !== undefined) return instant;
  }
  return undefined;
}

/** What a field in `forms` must look like: `a date such as "…" or "…"`. */
export function describeDateForms(forms: readonly DateForm[]): string {
  return `a date such as ${forms.map((form) => DATE_FORM_EXAMPLES[form]).join(' or ')}`;
}

/** An instant as an RFC 1123 date (`Date.prototype.toUTCString` writes exactly that). */
export function formatRfc1123(time: Date): string {
  return time.toUTCString();
}

/** An instant in the EC2 IMDS form, `21 Jan 2019 09:00:43 GMT`. */
export function formatEc2ImdsDate(time: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  const clock = `${pad(time.getUTCHours())}:${pad(time.getUTCMinutes())}:${pad(time.getUTCSeconds())}`;
  return `${time.getUTCDate()} ${MONTHS[time.getUTCMonth()]} ${time.getUTCFullYear()} ${clock} GMT`;
}
