/**
 * The parsers settings share (once, not copied per loader). Their messages are what a user reads after
 * the variable's name, e.g. `DRAINBRIDGE_MAX_HELD_NODES: must be at least 1`.
 */
import { z } from 'zod';

/** `true`/`false`, or `1`/`0`. */
export const bool = z
  .enum(['true', 'false', '1', '0'], { error: 'must be true or false' })
  .transform((v) => v === 'true' || v === '1');

/** `true` or `false` only (the forwarder's switches). */
export const trueFalse = z.enum(['true', 'false'], { error: 'must be true or false' }).transform((v) => v === 'true');

function bounded(pattern: RegExp, min: number, max: number) {
  return z
    .string()
    .regex(pattern, 'must be a whole number')
    .transform(Number)
    .pipe(z.number().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`));
}

/** A whole number, sign allowed (a negative one is then out of range, not malformed). */
export const integer = (min: number, max: number) => bounded(/^-?\d+$/, min, max);

/** A whole number written with digits only. */
export const wholeNumber = (min: number, max: number) => bounded(/^\d+$/, min, max);

/** `a,b,c` → the trimmed, non-empty parts. */
export const commaList = z.string().transform((v) =>
  v
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean),
);

/** `host:port` (an IPv6 host in brackets; an empty host means every interface) → where to listen. */
export const hostPort = (example: string) =>
  z
    .string()
    .regex(/^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]*):\d{1,5}$/, `must be host:port, e.g. ${example} or 127.0.0.1:0`)
    .transform((text) => {
      const at = text.lastIndexOf(':');
      return { host: text.slice(0, at).replace(/^\[|\]$/g, '') || '0.0.0.0', port: Number(text.slice(at + 1)) };
    });
