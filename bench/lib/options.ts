/** The benchmark's command line: parsed and checked before anything starts. Pure. */
import { parseArgs } from 'node:util';

/** What `npm run bench -- …` may set. */
export interface BenchOptions {
  /** Case names to run, in order. */
  readonly cases: readonly string[];
  /** Runs per tool and case. */
  readonly repetitions: number;
  /** The simulator's clock speed, the same for every run. */
  readonly speed: number;
  /** Hard limit of one run, in ms: kubectl is killed, the execution aborted. */
  readonly runTimeoutMs: number;
  /** Hard limit of the whole benchmark, in ms: no run starts (or runs on) past it. */
  readonly totalLimitMs: number;
  /** Directory for the JSON results. */
  readonly outDir: string;
}

export const USAGE = `Usage: npm run bench -- [--cases busy-node,pdb-heavy] [--repetitions 3] [--speed 5]
                        [--run-timeout 600] [--time-limit 3600] [--out bench/results]
  --cases        comma-separated cases (default: all of busy-node, pdb-heavy)
  --repetitions  runs per tool and case, 1–20 (default 3); the tools alternate, each on a fresh simulator
  --speed        simulated seconds per real second, 0.5–100 (default 5)
  --run-timeout  seconds one run may take, 10–3600 (default 600)
  --time-limit   seconds the whole benchmark may take, 60–14400 (default 3600)
  --out          directory for the JSON results (default bench/results)`;

/** A bad command line: the message names the flag. */
export class BenchUsageError extends Error {
  override readonly name = 'BenchUsageError';
}

function numberFlag(
  raw: string | undefined,
  flag: string,
  range: { min: number; max: number; fallback: number; integer?: boolean },
): number {
  if (raw === undefined) return range.fallback;
  const value = Number(raw);
  const integerOk = !range.integer || Number.isInteger(value);
  if (raw.trim() === '' || !Number.isFinite(value) || !integerOk || value < range.min || value > range.max) {
    const kind = range.integer ? 'an integer' : 'a number';
    throw new BenchUsageError(`--${flag} must be ${kind} from ${range.min} to ${range.max}, got "${raw}"`);
  }
  return value;
}

function casesFlag(raw: string | undefined, known: readonly string[]): string[] {
  if (raw === undefined) return [...known];
  const names = raw
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  const unknown = names.filter((name) => !known.includes(name));
  if (names.length === 0 || unknown.length > 0) {
    throw new BenchUsageError(`--cases must list some of ${known.join(', ')}; got "${raw}"`);
  }
  return [...new Set(names)];
}

/** Parses `argv` (after the script name); throws BenchUsageError naming the bad flag. */
export function parseBenchOptions(argv: readonly string[], knownCases: readonly string[]): BenchOptions {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        cases: { type: 'string' },
        repetitions: { type: 'string' },
        speed: { type: 'string' },
        'run-timeout': { type: 'string' },
        'time-limit': { type: 'string' },
        out: { type: 'string' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    throw new BenchUsageError(error instanceof Error ? error.message : String(error));
  }
  const text = (key: string): string | undefined => (typeof values[key] === 'string' ? values[key] : undefined);
  return {
    cases: casesFlag(text('cases'), knownCases),
    repetitions: numberFlag(text('repetitions'), 'repetitions', { min: 1, max: 20, fallback: 3, integer: true }),
    speed: numberFlag(text('speed'), 'speed', { min: 0.5, max: 100, fallback: 5 }),
    runTimeoutMs: numberFlag(text('run-timeout'), 'run-timeout', { min: 10, max: 3600, fallback: 600 }) * 1000,
    totalLimitMs: numberFlag(text('time-limit'), 'time-limit', { min: 60, max: 14_400, fallback: 3600 }) * 1000,
    outDir: text('out') ?? 'bench/results',
  };
}
