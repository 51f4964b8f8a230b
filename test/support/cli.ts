/** Runs the `drainbridge` command as a user does: a separate process, its exit code and output. */
import { execFile } from 'node:child_process';

export const BIN = new URL('../../bin/drainbridge.js', import.meta.url).pathname;

export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  /** Wall time in ms. */
  readonly ms: number;
}

/** `drainbridge ARGS` with `env` added to this process's environment (logs at ERROR unless given). */
export function drainbridge(
  args: readonly string[],
  options: { env?: Record<string, string | undefined>; input?: string; timeoutMs?: number } = {},
): Promise<CliResult> {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [BIN, ...args],
      {
        timeout: options.timeoutMs ?? 120_000,
        env: { ...process.env, POWERTOOLS_LOG_LEVEL: 'ERROR', ...options.env },
        maxBuffer: 16 * 1024 * 1024,
      },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, stdout, stderr, ms: Date.now() - started });
      },
    );
    child.stdin?.end(options.input ?? '');
  });
}
