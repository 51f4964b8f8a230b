/** The parser of DRAINBRIDGE_BREAKER: `FAILURES/WINDOW` (`3/1h`), or `off`. */
import { z } from 'zod';

/** Pause admission after `failures` failed evacuations within `windowSeconds` (admission's BreakerSetting). */
export interface BreakerSetting {
  readonly failures: number;
  readonly windowSeconds: number;
}

/** `30m` → 1800: a whole number of seconds (s), minutes (m), hours (h) or days (d); undefined otherwise. */
export function parseWindow(text: string): number | undefined {
  const match = /^(\d+)(s|m|h|d)$/.exec(text.trim());
  if (!match) return undefined;
  const seconds = Number(match[1]) * { s: 1, m: 60, h: 3600, d: 86400 }[match[2] as 's' | 'm' | 'h' | 'd'];
  return seconds > 0 ? seconds : undefined;
}

export const breakerText = z.string().transform((text, ctx): BreakerSetting | undefined => {
  const trimmed = text.trim();
  if (trimmed === 'off' || trimmed === '') return undefined;
  const [count, window, ...rest] = trimmed.split('/');
  const failures = Number(count);
  const windowSeconds = parseWindow(window ?? '');
  if (rest.length > 0 || !Number.isInteger(failures) || failures < 1 || failures > 100 || windowSeconds === undefined) {
    ctx.addIssue({
      code: 'custom',
      message: `"${text}" must be FAILURES/WINDOW (FAILURES a whole number 1–100, WINDOW like 30m, 1h, 1d), e.g. 3/1h, or off`,
    });
    return z.NEVER;
  }
  return { failures, windowSeconds };
});
