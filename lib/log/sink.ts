/**
 * Where drainbridge's structured log lines go. Two places, decided once per process by who runs it:
 *
 * - **Lambda** (and `serverless invoke local`, which sets the same `AWS_LAMBDA_FUNCTION_NAME`): JSON on
 *   stdout, as Powertools writes it by default, where CloudWatch (and its metric filters, EMF) expect it.
 * - **Everywhere else** — the CLI, the embedded runtime, tests: stdout belongs to people. Log lines go to
 *   the sink configured here: off by default, else stderr or a file, as JSON or text, at a level.
 *   `DRAINBRIDGE_LOG_LEVEL`, `DRAINBRIDGE_LOG_FORMAT`, `DRAINBRIDGE_LOG_FILE` set it; the CLI's
 *   `--log-level`, `--log-format`, `--log-file` override them.
 *
 * Powertools has no option for its output stream, so loggers (and the metrics' EMF lines) get a console
 * object whose methods forward to the current sink; the level is filtered here, because Powertools
 * resets a logger's level to its constructor's value at every invocation.
 */
import { closeSync, openSync, writeSync } from 'node:fs';

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'off'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export const LOG_FORMATS = ['text', 'json'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

export interface LogSettings {
  readonly level: LogLevel;
  readonly format: LogFormat;
  /** Append to this file (created 0600); undefined: stderr. */
  readonly file?: string;
}

type Environment = Readonly<Record<string, string | undefined>>;

const RANK: Readonly<Record<LogLevel, number>> = { debug: 0, info: 1, warn: 2, error: 3, off: 4 };

/** Whether this process is a Lambda function (or `serverless invoke local` imitating one). */
export function isLambdaRuntime(env: Environment = process.env): boolean {
  return Boolean(env.AWS_LAMBDA_FUNCTION_NAME);
}

/** A problem with a logging setting, named by the variable or flag that holds it. */
export interface LogSettingProblem {
  readonly path: string;
  readonly message: string;
}

/** `raw` as one of `allowed` (case-insensitive), or a problem naming `path`. */
function oneOf<T extends string>(
  raw: string | undefined,
  allowed: readonly T[],
  path: string,
  problems: LogSettingProblem[],
): T | undefined {
  if (raw === undefined) return undefined;
  const wanted = raw.toLowerCase();
  if ((allowed as readonly string[]).includes(wanted)) return wanted as T;
  problems.push({ path, message: `must be one of ${allowed.join(', ')}, not "${raw}"` });
  return undefined;
}

/**
 * Log settings from `given` values (flags win over the environment; `fallback` is a command's default).
 * A log file alone means info as JSON. Pure; every problem is returned, none thrown.
 */
export function resolveLogSettings(
  given: { level?: string; format?: string; file?: string },
  names: { level: string; format: string; file: string },
  fallback: Partial<LogSettings> = {},
): { settings: LogSettings; problems: LogSettingProblem[] } {
  const problems: LogSettingProblem[] = [];
  const toFile = given.file !== undefined && given.file.trim() !== '';
  if (given.file !== undefined && !toFile) problems.push({ path: names.file, message: 'must name a file' });
  const level = oneOf(given.level, LOG_LEVELS, names.level, problems) ?? fallback.level ?? (toFile ? 'info' : 'off');
  const format =
    oneOf(given.format, LOG_FORMATS, names.format, problems) ?? fallback.format ?? (toFile ? 'json' : 'text');
  const file = toFile ? given.file : fallback.file;
  return { settings: { level, format, ...(file ? { file } : {}) }, problems };
}

/** The settings the environment asks for (problems ignored here: the CLI reports them). */
export function logSettingsFromEnvironment(env: Environment = process.env): LogSettings {
  return resolveLogSettings(
    {
      ...(env.DRAINBRIDGE_LOG_LEVEL ? { level: env.DRAINBRIDGE_LOG_LEVEL } : {}),
      ...(env.DRAINBRIDGE_LOG_FORMAT ? { format: env.DRAINBRIDGE_LOG_FORMAT } : {}),
      ...(env.DRAINBRIDGE_LOG_FILE ? { file: env.DRAINBRIDGE_LOG_FILE } : {}),
    },
    { level: 'DRAINBRIDGE_LOG_LEVEL', format: 'DRAINBRIDGE_LOG_FORMAT', file: 'DRAINBRIDGE_LOG_FILE' },
  ).settings;
}

/** Lambda context keys that say nothing to a person reading a text log. */
const LAMBDA_NOISE = new Set([
  'cold_start',
  'function_arn',
  'function_memory_size',
  'function_name',
  'function_request_id',
  'sampling_rate',
  'xray_trace_id',
]);

function textValue(value: unknown): string {
  if (typeof value === 'string') return /\s/.test(value) ? JSON.stringify(value) : value;
  return JSON.stringify(value);
}

/** One Powertools JSON line as text: `time LEVEL service: message key=value …`. EMF lines stay JSON. */
export function formatText(line: string): string {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line;
  }
  if (typeof record.message !== 'string') return line;
  const { timestamp, level, service, message, ...rest } = record;
  const fields = Object.entries(rest)
    .filter(([key]) => !LAMBDA_NOISE.has(key))
    .map(([key, value]) => `${key}=${textValue(value)}`);
  return [String(timestamp ?? ''), String(level ?? ''), `${String(service ?? '')}:`, message, ...fields].join(' ');
}

/** Where lines end up: stderr or a file descriptor, written synchronously so nothing is lost at exit. */
interface Destination {
  write(text: string): void;
  close(): void;
}

function stderrDestination(): Destination {
  return { write: (text) => void process.stderr.write(text), close: () => undefined };
}

function fileDestination(path: string): Destination {
  const fd = openSync(path, 'a', 0o600);
  return { write: (text) => void writeSync(fd, text), close: () => closeSync(fd) };
}

let settings: LogSettings = logSettingsFromEnvironment();
let destination: Destination | undefined;

/** Applies `next` to every logger created so far and later. Opens the log file now (throws if it cannot). */
export function configureLogging(next: LogSettings): void {
  const opened = next.file ? fileDestination(next.file) : stderrDestination();
  destination?.close();
  destination = opened;
  settings = next;
}

/** The settings in effect. */
export function currentLogSettings(): LogSettings {
  return settings;
}

/** The destination, opened on first use when only the environment configured it. */
function currentDestination(): Destination {
  if (destination) return destination;
  try {
    destination = settings.file ? fileDestination(settings.file) : stderrDestination();
  } catch (error) {
    // A log file that cannot be opened must not fail the work that logs: say so once, on stderr.
    destination = stderrDestination();
    destination.write(
      `drainbridge: cannot open log file ${settings.file}: ${(error as Error).message}; logging to stderr\n`,
    );
  }
  return destination;
}

/** Writes one line (Powertools' JSON) at `level`, when the settings let it through. */
export function writeLogLine(level: Exclude<LogLevel, 'off'>, line: string): void {
  if (RANK[level] < RANK[settings.level]) return;
  const text = settings.format === 'text' ? formatText(line) : line;
  currentDestination().write(`${text}\n`);
}

/** A console-shaped object for Powertools: each method forwards its (already formatted) line. */
export const SINK_CONSOLE = {
  trace: (line: unknown) => writeLogLine('debug', String(line)),
  debug: (line: unknown) => writeLogLine('debug', String(line)),
  log: (line: unknown) => writeLogLine('info', String(line)),
  info: (line: unknown) => writeLogLine('info', String(line)),
  warn: (line: unknown) => writeLogLine('warn', String(line)),
  error: (line: unknown) => writeLogLine('error', String(line)),
};

/** Metrics print EMF documents with `console.log`: for a person they are detail, so debug. */
const METRICS_CONSOLE = { ...SINK_CONSOLE, log: SINK_CONSOLE.debug };

/**
 * Points a Powertools Logger (or, with `kind: 'metrics'`, a Metrics) at the sink — not on Lambda, where
 * their stdout is right. Both keep their output in a `console` property their types mark private; at
 * run time it is a plain field, and test/unit/log/sink.test.ts fails if an upgrade changes that.
 */
export function routeToSink<T extends object>(
  target: T,
  kind: 'logger' | 'metrics' = 'logger',
  env: Environment = process.env,
): T {
  if (!isLambdaRuntime(env)) Object.assign(target, { console: kind === 'metrics' ? METRICS_CONSOLE : SINK_CONSOLE });
  return target;
}
