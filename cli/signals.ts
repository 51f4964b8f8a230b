import type { LogSettings } from '../lib/log/sink.ts';
import type { FlagSpec } from './flags.ts';

/** The long-running commands log by default (the CLI's other commands do not): info, JSON, on stderr. */
export const SERVICE_LOGGING: Partial<LogSettings> = { level: 'info', format: 'json' };

/** Declares value flags by name (for did-you-mean and completion) for commands that parse with cli/args.ts. */
export function valueFlags(names: readonly string[]): FlagSpec[] {
  return names.map((name) => ({ name, kind: 'value' as const }));
}

/** Waiting for SIGTERM/SIGINT, for the long-running commands (forwarder, run). */
export function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const onSignal = (signal: NodeJS.Signals): void => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      resolve(signal);
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
}

/** Flags of the long-running commands that set a DRAINBRIDGE_* variable (the flag wins over the environment). */
export function envFromFlags(
  own: ReadonlyMap<string, string>,
  mapping: Readonly<Record<string, string>>,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [flag, variable] of Object.entries(mapping)) {
    const value = own.get(flag);
    if (value !== undefined) env[variable] = value;
  }
  return env;
}
