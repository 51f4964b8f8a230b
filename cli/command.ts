/** The shape of one `drainbridge` subcommand. Each lives in its own file under cli/commands/. */
import type { LogSettings } from '../lib/log/sink.ts';
import { type ExitName, exitForSignal } from './exit-codes.ts';
import type { FlagSpec } from './flags.ts';

// The errors commands throw live apart, so that cli/flags.ts can throw them without importing this file.
export { CommandFailed, UsageError } from './failures.ts';

/**
 * What a command talks to instead of the process: its environment and its two output streams. main()
 * builds it from the process; tests run commands in-process with their own.
 */
export interface CommandContext {
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Human output (stdout): one call per line, no trailing newline. */
  out(line: string): void;
  /** Errors and notes for a person (stderr). */
  err(line: string): void;
  /** Whether stdout is a terminal (live displays; plain lines when piped). */
  readonly interactive: boolean;
  /**
   * Takes over SIGINT/SIGTERM: `handler` gets the first one (a second one ends the process at once, as a
   * person pressing Ctrl-C twice expects). Returns the function that gives the signals back. Commands
   * that never call it keep Node's default: a signal ends them.
   */
  onInterrupt(handler: (signal: NodeJS.Signals) => void): () => void;
}

export interface Command {
  readonly name: string;
  /** One line for `drainbridge --help`. */
  readonly summary: string;
  /** Full usage text for `drainbridge <name> --help` (main appends the exit statuses). */
  readonly usage: string;
  /** The command's flags (cli/flags.ts): parsing, "did you mean", help and shell completion. */
  readonly flags?: readonly FlagSpec[];
  /** What its positional arguments are (completion offers node names for NODE). */
  readonly operands?: readonly string[];
  /** The rows of the exit-status table it uses (cli/exit-codes.ts), listed by its --help. */
  readonly exits?: readonly ExitName[];
  /** Logging when neither flags nor environment say (long-running services log by default). */
  readonly logging?: Partial<LogSettings>;
  /** Runs the command; resolves to the process exit code. `context` is absent only for old callers. */
  run(argv: readonly string[], context?: CommandContext): Promise<number>;
}

/** A context over the process: console output, process.env, process signals. */
export function processContext(): CommandContext {
  return {
    env: process.env,
    out: (line) => console.log(line),
    err: (line) => console.error(line),
    interactive: process.stdout.isTTY === true,
    onInterrupt: interceptSignals,
  };
}

/**
 * A second signal this soon after the first is the same Ctrl-C told twice, not a second press: run
 * through `npx`, the terminal signals drainbridge and npm, and npm forwards the signal to drainbridge
 * again within milliseconds. A person pressing Ctrl-C twice takes longer.
 */
export const ECHO_WINDOW_MS = 500;

function interceptSignals(handler: (signal: NodeJS.Signals) => void): () => void {
  let first: number | undefined;
  const onSignal = (signal: NodeJS.Signals): void => {
    const now = performance.now();
    if (first !== undefined && now - first < ECHO_WINDOW_MS) return;
    if (first !== undefined) process.exit(exitForSignal(signal));
    first = now;
    handler(signal);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return () => {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  };
}
