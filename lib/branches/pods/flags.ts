/**
 * kubectl drain's flags → `DrainOptions`, with kubectl's spellings and defaults. Pure. Bad input throws
 * `InvalidInput` naming the flag.
 */

import { parseSelector } from '../../clients/kube/selectors.ts';
import { type FieldProblem, InvalidInput } from '../../errors/index.ts';
import { type DrainOptions, KUBECTL_DRAIN_DEFAULTS } from '../../model/request.ts';

type BooleanOption = 'force' | 'ignoreDaemonSets' | 'deleteEmptyDirData' | 'disableEviction';
type NumberOption = 'gracePeriodSeconds' | 'skipWaitForDeleteTimeoutSeconds' | 'chunkSize';

const BOOLEAN_FLAGS: Readonly<Record<string, BooleanOption>> = {
  force: 'force',
  'ignore-daemonsets': 'ignoreDaemonSets',
  'delete-emptydir-data': 'deleteEmptyDirData',
  // kubectl's deprecated spelling of the same flag.
  'delete-local-data': 'deleteEmptyDirData',
  'disable-eviction': 'disableEviction',
};

const NUMBER_FLAGS: Readonly<Record<string, NumberOption>> = {
  'grace-period': 'gracePeriodSeconds',
  'skip-wait-for-delete-timeout': 'skipWaitForDeleteTimeoutSeconds',
  'chunk-size': 'chunkSize',
};

const DURATION_PART = /(\d+(?:\.\d+)?)(h|ms|m|s)/g;
const UNIT_SECONDS: Readonly<Record<string, number>> = { h: 3600, m: 60, s: 1, ms: 0.001 };

/** A Go duration (`90s`, `5m`, `1h30m`, `0`) in whole seconds (rounded up); undefined when malformed. */
export function parseDurationSeconds(text: string): number | undefined {
  if (/^\d+$/.test(text)) return Number(text) === 0 ? 0 : undefined;
  const parts = [...text.matchAll(DURATION_PART)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== text) return undefined;
  return Math.ceil(parts.reduce((sum, p) => sum + Number(p[1]) * (UNIT_SECONDS[p[2] ?? 's'] ?? 1), 0));
}

/** Whether `name` (without dashes) is one of kubectl drain's flags. */
export function isDrainFlag(name: string): boolean {
  return name in BOOLEAN_FLAGS || name in NUMBER_FLAGS || name === 'timeout' || name === 'pod-selector';
}

/** Whether the flag takes a value (`--flag value` may be written as two arguments). */
export function takesValue(name: string): boolean {
  return name in NUMBER_FLAGS || name === 'timeout' || name === 'pod-selector';
}

function parseBoolean(flag: string, value: string | undefined, problems: FieldProblem[]): boolean {
  if (value === undefined || value === 'true') return true;
  if (value === 'false') return false;
  problems.push({ path: `--${flag}`, message: `must be true or false, not "${value}"` });
  return false;
}

function parseInteger(flag: string, value: string | undefined, problems: FieldProblem[]): number {
  const parsed = Number(value);
  // Decimal digits only, as kubectl (strconv.Atoi) reads them: Number() would take 0x10, 1e3 and " 7".
  if (value === undefined || !/^[+-]?\d+$/.test(value) || !Number.isSafeInteger(parsed)) {
    problems.push({ path: `--${flag}`, message: `must be an integer, not "${value ?? ''}"` });
    return 0;
  }
  return parsed;
}

type MutableOptions = { -readonly [K in keyof DrainOptions]: DrainOptions[K] };

function parseTimeout(value: string | undefined, problems: FieldProblem[]): number {
  const seconds = parseDurationSeconds(value ?? '');
  if (seconds === undefined) {
    problems.push({ path: '--timeout', message: `must be a duration such as 90s or 5m, not "${value ?? ''}"` });
  }
  return seconds ?? 0;
}

function parsePodSelector(value: string | undefined, problems: FieldProblem[]): string {
  try {
    parseSelector(value ?? '');
  } catch (error) {
    problems.push({ path: '--pod-selector', message: error instanceof Error ? error.message : String(error) });
  }
  return value ?? '';
}

function applyFlag(
  options: Partial<MutableOptions>,
  flag: string,
  value: string | undefined,
  problems: FieldProblem[],
): void {
  const booleanOption = BOOLEAN_FLAGS[flag];
  const numberOption = NUMBER_FLAGS[flag];
  if (booleanOption) options[booleanOption] = parseBoolean(flag, value, problems);
  else if (numberOption) options[numberOption] = parseInteger(flag, value, problems);
  else if (flag === 'timeout') options.timeoutSeconds = parseTimeout(value, problems);
  else options.podSelector = parsePodSelector(value, problems);
}

/**
 * Only the options the `[name, value]` pairs of kubectl drain flags set (names without dashes): what a
 * long-running command's flags lay over the origin's defaults (lib/model/drain-defaults.ts).
 */
export function drainOptionsSetByFlags(
  flags: readonly (readonly [string, string | undefined])[],
): Partial<DrainOptions> {
  const problems: FieldProblem[] = [];
  const options: Partial<MutableOptions> = {};
  for (const [flag, value] of flags) {
    if (!isDrainFlag(flag)) problems.push({ path: `--${flag}`, message: 'is not a kubectl drain flag' });
    else applyFlag(options, flag, value, problems);
  }
  if ((options.chunkSize ?? 0) < 0) problems.push({ path: '--chunk-size', message: 'must not be negative' });
  if ((options.skipWaitForDeleteTimeoutSeconds ?? 0) < 0) {
    problems.push({ path: '--skip-wait-for-delete-timeout', message: 'must not be negative' });
  }
  if (problems.length > 0) throw new InvalidInput('drain flags', problems);
  return options;
}

/** Builds DrainOptions from `[name, value]` pairs of kubectl drain flags: kubectl's defaults where unset. */
export function drainOptionsFromFlags(flags: readonly (readonly [string, string | undefined])[]): DrainOptions {
  return { ...KUBECTL_DRAIN_DEFAULTS, ...drainOptionsSetByFlags(flags) };
}
