/**
 * The one logger factory. Powertools Logger (structured JSON, correlation ids) with a JSON replacer
 * that runs every key and string through `redact`, so no code path can log a credential by accident.
 * On Lambda the lines go to stdout as Powertools writes them; elsewhere to the sink (lib/log/sink.ts:
 * off by default, or stderr / a file, JSON or text), so that stdout stays the CLI's human output.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { isSecretKey, REDACTED, redact, redactString } from './redact.ts';
import { isLambdaRuntime, routeToSink } from './sink.ts';

export type { Logger } from '@aws-lambda-powertools/logger';

/** JSON.stringify replacer: secret keys → REDACTED, registered secret values cut out of strings. */
export function redactingReplacer(key: string, value: unknown): unknown {
  if (key !== '' && isSecretKey(key) && value !== undefined && value !== null) return REDACTED;
  if (typeof value === 'string') return redactString(value);
  if (value instanceof Error) return redact(value);
  if (typeof value === 'bigint') return value.toString();
  return value;
}

/**
 * A logger for one component. On Lambda `POWERTOOLS_LOG_LEVEL` / `LOG_LEVEL` set the level as usual;
 * elsewhere the logger produces every line and the sink's level decides what is written.
 */
export function createLogger(serviceName = 'drainbridge', logLevel?: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR'): Logger {
  const level = isLambdaRuntime() ? logLevel : 'DEBUG';
  return routeToSink(
    new Logger({ serviceName, jsonReplacerFn: redactingReplacer, ...(level ? { logLevel: level } : {}) }),
  );
}
