/**
 * Maintenance windows as the operator declares them: a cron expression in a time zone, how long the
 * window stays open, which nodes (a label selector), how many at once, and how each node's maintenance
 * ends. One JSON list, read by the embedded runner (`DRAINBRIDGE_MAINTENANCE_WINDOWS`) and by
 * `serverless package` (the `maintenanceWindows` param), so both run the same windows. Validated at
 * the edge: a mistake names the window and the field.
 */
import { z } from 'zod';
import { DrainOptionsInput, Reason, WindowName } from '../../bus/contracts/fields.ts';
import { problemsOf, safeParseReporting } from '../../bus/contracts/parse.ts';
import { parseCron } from '../../bus/cron.ts';
import { parseSelector } from '../../clients/kube/selectors.ts';
import { ConfigError } from '../../errors/index.ts';
import { WINDOW_ENDS } from '../../model/window.ts';

/** A window stays open at most a week (the next occurrence of a weekly window would overlap). */
export const MAX_WINDOW_MINUTES = 7 * 24 * 60;

export const WindowDefinitionSchema = z
  .strictObject({
    name: WindowName,
    /** EventBridge cron: `cron(minutes hours day-of-month month day-of-week year)`. */
    schedule: z.string().min(1, 'must not be empty'),
    /** IANA time zone the cron expression is read in (EventBridge Scheduler's ScheduleExpressionTimezone). */
    timezone: z.string().min(1).default('UTC'),
    durationMinutes: z
      .number({ error: 'must be a number of minutes' })
      .int('must be a whole number')
      .min(1, 'must be at least 1')
      .max(MAX_WINDOW_MINUTES, `must be at most ${MAX_WINDOW_MINUTES} (a week)`),
    /** Which nodes (a label selector; "" is every node). */
    nodeSelector: z.string(),
    /** How many of the window's nodes may be in maintenance at once. */
    maxNodes: z.number().int('must be a whole number').min(1, 'must be at least 1').max(10_000),
    endsOn: z.enum(WINDOW_ENDS, { error: `must be one of ${WINDOW_ENDS.join(', ')}` }),
    enabled: z.boolean().default(true),
    reason: Reason.optional(),
    drain: DrainOptionsInput.optional(),
  })
  .superRefine((window, ctx) => {
    try {
      parseCron(window.schedule, window.timezone);
    } catch (error) {
      const message = (error as Error).message;
      const path = /IANA time zone/.test(message) ? 'timezone' : 'schedule';
      ctx.addIssue({ code: 'custom', path: [path], message });
    }
    try {
      parseSelector(window.nodeSelector);
    } catch (error) {
      ctx.addIssue({
        code: 'custom',
        path: ['nodeSelector'],
        message: `is not a label selector (${(error as Error).message})`,
      });
    }
  });

export type WindowDefinition = z.output<typeof WindowDefinitionSchema>;

const WindowList = z.array(WindowDefinitionSchema).superRefine((windows, ctx) => {
  const seen = new Set<string>();
  windows.forEach((window, index) => {
    if (seen.has(window.name)) ctx.addIssue({ code: 'custom', path: [index, 'name'], message: 'is used twice' });
    seen.add(window.name);
  });
});

/** Reads a JSON list of windows; "" is none. Throws ConfigError naming `where[i].field` for each mistake. */
export function parseWindows(text: string, where: string): WindowDefinition[] {
  if (text.trim() === '') return [];
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ConfigError([{ path: where, message: `must be a JSON list of windows (${(error as Error).message})` }]);
  }
  const parsed = safeParseReporting(WindowList, value);
  if (!parsed.success) {
    throw new ConfigError(problemsOf(parsed.error, where));
  }
  return parsed.data;
}
