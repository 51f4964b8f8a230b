/** The benchmark's command line: parsed and checked before anything starts. Pure. */
import { parseArgs } from 'node:util';

/** The parts of `npm run bench`, in the order they run. */
export const SECTIONS = ['drain', 'kubevirt', 'reaction', 'footprint', 'scale', 'queue'] as const;
export type Section = (typeof SECTIONS)[number];

/** Speed 1 is the measurement; `--quick` runs the cluster 5× faster (flattering neither tool fairly). */
export const DEFAULT_SPEED = 1;
export const QUICK_SPEED = 5;

/** What `npm run bench -- …` may set. */
export interface BenchOptions {
  /** Which sections to run, in SECTIONS order. */
  readonly sections: readonly Section[];
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
  /** Reaction runs per trigger (the p50/p95 are over these). */
  readonly reactionRuns: number;
  /** Cluster sizes of the scale section (nodes); a tenth of them is asked for maintenance at once. */
  readonly scaleNodes: readonly number[];
  /**
   * Changes a second in the scale section, each of node labels and of pod annotations, while the requests
   * run; undefined: one per 100 nodes (at least one).
   */
  readonly scaleChurn?: number;
  /**
   * Diagnosis only: every Step Functions Retry interval of the kubevirt section's drainbridge runs replaced by this many ms
   * (what a wake-up on the awaited change would approach); undefined: the definitions' own backoff.
   */
  readonly retryIntervalMs?: number;
}

export const USAGE = `Usage: npm run bench -- [--sections drain,kubevirt,reaction,footprint,scale,queue] [--cases busy-node,pdb-heavy]
                        [--repetitions 3] [--speed 1 | --quick] [--run-timeout 600] [--time-limit 7200]
                        [--reaction-runs 20] [--scale-nodes 10,100,1000] [--scale-churn N] [--out bench/results]
                        [--retry-interval-ms N]
  --sections       comma-separated parts to run (default: all, in this order)
  --cases          drain cases (default: all of busy-node, pdb-heavy)
  --repetitions    drain (and kubevirt) runs per tool and case, 1–20 (default 3); the tools alternate, each on a
                   fresh simulator; the oracle (the physical floor's check) runs once per case
  --speed          the simulated cluster's speed, 0.5–100 (default 1: real time, the measurement)
  --quick          speed 5: grace periods and start-up 5× shorter, the tools' own waits unchanged
  --run-timeout    seconds one drain run may take, 10–3600 (default 600)
  --time-limit     seconds the drain section may take, 60–14400 (default 7200)
  --reaction-runs  runs per trigger in the reaction section, 5–100 (default 20)
  --scale-nodes    cluster sizes of the scale section, each 10–5000 (default 10,100,1000)
  --scale-churn    node label changes and pod annotation changes a second (each) while the scale section's
                   requests run, 0–1000 (default: one per 100 nodes, at least one)
  --out            directory for the JSON results (default bench/results)
  --retry-interval-ms  diagnosis, not the measurement: in the kubevirt section, drainbridge's Retry
                       waits replaced by N ms (0–60000): what a wake-up on the migration's end approaches`;

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

function listFlag<T extends string>(raw: string | undefined, flag: string, known: readonly T[]): T[] {
  if (raw === undefined) return [...known];
  const names = raw
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  const unknown = names.filter((name) => !(known as readonly string[]).includes(name));
  if (names.length === 0 || unknown.length > 0) {
    throw new BenchUsageError(`--${flag} must list some of ${known.join(', ')}; got "${raw}"`);
  }
  return known.filter((name) => names.includes(name));
}

function sizesFlag(raw: string | undefined): number[] {
  if (raw === undefined) return [10, 100, 1000];
  const sizes = raw
    .split(',')
    .map((part) => numberFlag(part.trim(), 'scale-nodes', { min: 10, max: 5000, fallback: 0, integer: true }));
  if (sizes.length === 0) throw new BenchUsageError(`--scale-nodes must list cluster sizes, got "${raw}"`);
  return [...new Set(sizes)].sort((a, b) => a - b);
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
        sections: { type: 'string' },
        cases: { type: 'string' },
        quick: { type: 'boolean' },
        'reaction-runs': { type: 'string' },
        'scale-nodes': { type: 'string' },
        'scale-churn': { type: 'string' },
        repetitions: { type: 'string' },
        speed: { type: 'string' },
        'run-timeout': { type: 'string' },
        'time-limit': { type: 'string' },
        out: { type: 'string' },
        'retry-interval-ms': { type: 'string' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    throw new BenchUsageError(error instanceof Error ? error.message : String(error));
  }
  const text = (key: string): string | undefined => (typeof values[key] === 'string' ? values[key] : undefined);
  if (values.quick === true && text('speed') !== undefined) {
    throw new BenchUsageError('--quick sets the speed to 5; give either --quick or --speed');
  }
  const speedFallback = values.quick === true ? QUICK_SPEED : DEFAULT_SPEED;
  return {
    sections: listFlag(text('sections'), 'sections', SECTIONS),
    cases: casesFlag(text('cases'), knownCases),
    repetitions: numberFlag(text('repetitions'), 'repetitions', { min: 1, max: 20, fallback: 3, integer: true }),
    speed: numberFlag(text('speed'), 'speed', { min: 0.5, max: 100, fallback: speedFallback }),
    runTimeoutMs: numberFlag(text('run-timeout'), 'run-timeout', { min: 10, max: 3600, fallback: 600 }) * 1000,
    totalLimitMs: numberFlag(text('time-limit'), 'time-limit', { min: 60, max: 14_400, fallback: 7200 }) * 1000,
    outDir: text('out') ?? 'bench/results',
    reactionRuns: numberFlag(text('reaction-runs'), 'reaction-runs', { min: 5, max: 100, fallback: 20, integer: true }),
    scaleNodes: sizesFlag(text('scale-nodes')),
    ...(text('scale-churn') === undefined
      ? {}
      : { scaleChurn: numberFlag(text('scale-churn'), 'scale-churn', { min: 0, max: 1000, fallback: 0 }) }),
    ...(text('retry-interval-ms') === undefined
      ? {}
      : {
          retryIntervalMs: numberFlag(text('retry-interval-ms'), 'retry-interval-ms', {
            min: 0,
            max: 60_000,
            fallback: 0,
            integer: true,
          }),
        }),
  };
}
