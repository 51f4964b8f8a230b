/** `npm run soak -- [--minutes N] [--seed N] [--nodes N] [--max-held N] [--request-bound-minutes N] [--seeded-bug] [--nova]`. */
import { parseArgs } from 'node:util';

export interface SoakOptions {
  readonly minutes: number;
  readonly seed: number;
  readonly nodes: number;
  readonly maxHeld: number;
  readonly requestBoundMinutes: number;
  /** The soak's self-test: drainbridge's account sends one direct pod DELETE, which the checker must name. */
  readonly seededBug: boolean;
  /**
   * Three nodes are the real-Nova lab's compute hosts (test/e2e/openstack/lab), servers booted on them and
   * both replicas configured for Nova; the Nova invariants are judged from Nova. Needs the lab up.
   */
  readonly nova: boolean;
  /** Where the processes' logs go (a fresh temporary directory by default). */
  readonly out: string | undefined;
}

export const USAGE =
  'Usage: npm run soak -- [--minutes 60] [--seed N] [--nodes 30] [--max-held 3] [--request-bound-minutes 15] [--seeded-bug] [--nova] [--out DIR]';

function positive(name: string, text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0)
    throw new RangeError(`--${name}: expected a positive number, got "${text}"`);
  return value;
}

export function parseSoakOptions(argv: readonly string[]): SoakOptions {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      minutes: { type: 'string' },
      seed: { type: 'string' },
      nodes: { type: 'string' },
      'max-held': { type: 'string' },
      'request-bound-minutes': { type: 'string' },
      'seeded-bug': { type: 'boolean' },
      nova: { type: 'boolean' },
      out: { type: 'string' },
    },
    strict: true,
  });
  const seed = values.seed === undefined ? Date.now() % 1_000_000 : Number(values.seed);
  if (!Number.isInteger(seed) || seed < 0)
    throw new RangeError(`--seed: expected a whole number, got "${values.seed}"`);
  const nodes = positive('nodes', values.nodes, 30);
  if (!Number.isInteger(nodes) || nodes < 6 || nodes > 99) throw new RangeError('--nodes: expected 6 to 99');
  return {
    minutes: positive('minutes', values.minutes, 60),
    seed,
    nodes,
    maxHeld: positive('max-held', values['max-held'], 3),
    requestBoundMinutes: positive('request-bound-minutes', values['request-bound-minutes'], 15),
    seededBug: values['seeded-bug'] ?? false,
    nova: values.nova ?? false,
    out: values.out,
  };
}
