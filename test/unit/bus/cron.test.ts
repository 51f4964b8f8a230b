import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { parseCron } from '../../../lib/bus/cron.ts';

const next = (expression: string, after: string) => parseCron(expression).next(new Date(after))?.toISOString();

describe('cron expressions (EventBridge syntax, UTC or a time zone; croner underneath)', () => {
  it('the documented examples', () => {
    // 10:15 every day
    assert.equal(next('cron(15 10 * * ? *)', '2026-11-21T10:15:00Z'), '2026-11-22T10:15:00.000Z');
    // 18:00 Monday to Friday
    assert.equal(next('cron(0 18 ? * MON-FRI *)', '2026-11-20T18:00:00Z'), '2026-11-23T18:00:00.000Z');
    // 08:00 on the first day of the month
    assert.equal(next('cron(0 8 1 * ? *)', '2026-11-21T00:00:00Z'), '2026-12-01T08:00:00.000Z');
    // every 10 minutes on weekdays
    assert.equal(next('cron(0/10 * ? * MON-FRI *)', '2026-11-20T23:55:00Z'), '2026-11-23T00:00:00.000Z');
    // every 5 minutes between 8:00 and 17:55 on weekdays
    assert.equal(next('cron(0/5 8-17 ? * MON-FRI *)', '2026-11-23T17:55:00Z'), '2026-11-24T08:00:00.000Z');
    // 9:00 on the first Monday of each month
    assert.equal(next('cron(0 9 ? * 2#1 *)', '2026-11-21T00:00:00Z'), '2026-12-07T09:00:00.000Z');
    // the project's example window: Sundays 02:00
    assert.equal(next('cron(0 2 ? * SUN *)', '2026-11-21T10:00:00Z'), '2026-11-22T02:00:00.000Z');
  });

  it('L, nL and nW', () => {
    assert.equal(next('cron(0 0 L * ? *)', '2026-02-01T00:00:00Z'), '2026-02-28T00:00:00.000Z');
    assert.equal(next('cron(0 0 L * ? *)', '2028-02-01T00:00:00Z'), '2028-02-29T00:00:00.000Z');
    assert.equal(next('cron(0 0 ? * 6L *)', '2026-11-01T00:00:00Z'), '2026-11-27T00:00:00.000Z', 'last Friday');
    assert.equal(next('cron(0 0 ? * L *)', '2026-11-21T00:00:00Z'), '2026-11-28T00:00:00.000Z', 'L alone: Saturday');
    // 2026-11-01 is a Sunday: the nearest weekday is Monday the 2nd; 2026-08-01 a Saturday: Monday the 3rd (same month).
    assert.equal(next('cron(0 0 1W * ? *)', '2026-10-31T00:00:00Z'), '2026-11-02T00:00:00.000Z');
    assert.equal(next('cron(0 0 1W * ? *)', '2026-07-31T00:00:00Z'), '2026-08-03T00:00:00.000Z');
    assert.equal(
      next('cron(0 0 15W * ? *)', '2026-11-01T00:00:00Z'),
      '2026-11-16T00:00:00.000Z',
      'the 15th is a Sunday',
    );
  });

  it('years, month names and lists; nothing after the last year', () => {
    assert.equal(next('cron(30 6 1 JAN,JUL ? 2027-2028)', '2026-11-21T00:00:00Z'), '2027-01-01T06:30:00.000Z');
    assert.equal(next('cron(30 6 1 JAN ? 2027)', '2027-01-01T06:30:00Z'), undefined);
  });

  it('refuses malformed expressions, naming the field', () => {
    const refuses = (expression: string, message: RegExp, timezone?: string) =>
      assert.throws(() => parseCron(expression, timezone), message);
    refuses('cron(0 2 * * *)', /is not cron/);
    refuses('cron(60 2 * * ? *)', /minutes: "60"/);
    refuses('cron(0 24 * * ? *)', /hours: "24"/);
    refuses('cron(0 2 * 13 ? *)', /month: "13"/);
    refuses('cron(0 2 ? * FUNDAY *)', /day-of-week: "FUNDAY"/);
    refuses('cron(0 2 * * ? 1969)', /year: "1969"/);
    refuses('cron(0 2 * * MON *)', /exactly one of day-of-month and day-of-week/);
    refuses('cron(0 2 ? * ? *)', /exactly one of day-of-month and day-of-week/);
    refuses('cron(0/0 2 * * ? *)', /minutes: "0\/0" is not valid \(.*stepping/);
    refuses('cron(0 5-2 * * ? *)', /hours: "5-2" is not valid \(.*larger than/);
    refuses('cron(0 2 * * ? *)', /not an IANA time zone/, 'Europe/Atlantis');
  });

  it("in a time zone (EventBridge Scheduler's ScheduleExpressionTimezone), daylight saving included", () => {
    const inZone = (expression: string, timezone: string, after: string) =>
      parseCron(expression, timezone).next(new Date(after))?.toISOString();
    // Sundays 02:00 in Berlin: 01:00Z in winter (CET), 00:00Z in summer (CEST).
    assert.equal(inZone('cron(0 2 ? * SUN *)', 'Europe/Berlin', '2026-11-21T10:00:00Z'), '2026-11-22T01:00:00.000Z');
    assert.equal(inZone('cron(0 2 ? * SUN *)', 'Europe/Berlin', '2026-06-01T00:00:00Z'), '2026-06-07T00:00:00.000Z');
    // 2027-03-28 02:30 does not exist in Berlin (clocks go 02:00 → 03:00): it runs right after the gap.
    assert.equal(
      inZone('cron(30 2 28 MAR ? 2027)', 'Europe/Berlin', '2027-03-01T00:00:00Z'),
      '2027-03-28T01:00:00.000Z',
    );
    assert.equal(
      inZone('cron(0 9 ? * MON-FRI *)', 'America/New_York', '2026-11-21T00:00:00Z'),
      '2026-11-23T14:00:00.000Z',
    );
  });

  it('next() is the first matching minute after the given instant (checked minute by minute)', () => {
    const list = (max: number, min = 0) => fc.uniqueArray(fc.integer({ min, max }), { minLength: 1, maxLength: 3 });
    fc.assert(
      fc.property(
        list(59),
        list(23),
        list(7, 1),
        fc.integer({ min: 0, max: 60 * 24 * 400 }),
        (minutes, hours, days, offset) => {
          const expression = `cron(${minutes.join(',')} ${hours.join(',')} ? * ${days.join(',')} *)`;
          const after = new Date(Date.UTC(2026, 0, 1) + offset * 60_000 + 17_000);
          const found = parseCron(expression).next(after);
          assert.ok(found && found > after);
          const matches = (t: Date) =>
            minutes.includes(t.getUTCMinutes()) && hours.includes(t.getUTCHours()) && days.includes(t.getUTCDay() + 1);
          assert.ok(matches(found), `${expression} after ${after.toISOString()} gave ${found.toISOString()}`);
          for (let t = Math.ceil(after.getTime() / 60_000) * 60_000; t < found.getTime(); t += 60_000) {
            assert.ok(!matches(new Date(t)), `${new Date(t).toISOString()} was skipped`);
          }
        },
      ),
      { numRuns: 60 },
    );
  });
});
