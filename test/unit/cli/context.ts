/** A CommandContext for running commands in-process: captured output, a given environment, a signal to send. */
import type { CommandContext } from '../../../cli/command.ts';

export interface TestContext extends CommandContext {
  readonly stdout: string[];
  readonly stderr: string[];
  /** Delivers a signal as the process would (the first goes to the command's handler). */
  signal(signal: NodeJS.Signals): void;
}

export function testContext(env: Readonly<Record<string, string | undefined>> = {}): TestContext {
  const stdout: string[] = [];
  const stderr: string[] = [];
  let handler: ((signal: NodeJS.Signals) => void) | undefined;
  return {
    env,
    stdout,
    stderr,
    interactive: false,
    out: (line) => void stdout.push(line),
    err: (line) => void stderr.push(line),
    onInterrupt: (h) => {
      handler = h;
      return () => {
        handler = undefined;
      };
    },
    signal: (signal) => handler?.(signal),
  };
}
