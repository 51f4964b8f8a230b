import type { LogSettings } from '../lib/log/sink.ts';
import { ECHO_WINDOW_MS } from './command.ts';
import { type FlagSpec, flagValue, numberFlag, type ParsedCommandLine } from './flags.ts';

/** The long-running commands log by default (the CLI's other commands do not): info, JSON, on stderr. */
export const SERVICE_LOGGING: Partial<LogSettings> = { level: 'info', format: 'json' };

/** `--shutdown-grace SECONDS`: how long a service flushes its work on SIGTERM/SIGINT. */
export const SHUTDOWN_GRACE_FLAG: FlagSpec = {
  name: 'shutdown-grace',
  kind: 'value',
  value: 'SECONDS',
  help: 'seconds to finish and flush on SIGTERM (default 10)',
};

/** The shutdown grace in seconds: a decimal number from 0 to an hour (no hex, no exponent, no blank). */
export function shutdownGraceSeconds(parsed: ParsedCommandLine): number {
  const raw = flagValue(parsed, SHUTDOWN_GRACE_FLAG.name);
  return raw === undefined ? 10 : numberFlag(SHUTDOWN_GRACE_FLAG.name, raw, { min: 0, max: 3600 });
}

/**
 * Waiting for SIGTERM/SIGINT, for the long-running commands (forwarder, run). After the first, a second
 * signal ends the process at once (Node's default) — except within ECHO_WINDOW_MS, where it is the same
 * Ctrl-C told twice (npm forwards the terminal's signal to `npx drainbridge` again; cli/command.ts).
 */
export function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    let resolved = false;
    const onSignal = (signal: NodeJS.Signals): void => {
      if (resolved) return;
      resolved = true;
      setTimeout(() => {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
      }, ECHO_WINDOW_MS).unref();
      resolve(signal);
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
}
