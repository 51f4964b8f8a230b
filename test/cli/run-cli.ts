/**
 * The `drainbridge` command as a person runs it: a separate process (bin/drainbridge.js on this Node),
 * its output captured line by line, signals sent, lines waited for — never a fixed sleep.
 */
import { type ChildProcess, spawn } from 'node:child_process';

const BIN = new URL('../../bin/drainbridge.js', import.meta.url).pathname;

export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  /** Wall time from start to exit, ms. */
  readonly ms: number;
}

export interface RunningCli {
  readonly child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the output so far when `pattern` appears on stdout or stderr; rejects after `timeoutMs`. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<string>;
  readonly exited: Promise<CliResult>;
}

export function startCli(args: readonly string[], env: NodeJS.ProcessEnv = {}): RunningCli {
  const started = Date.now();
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  const watchers = new Set<() => void>();
  const notify = () => {
    for (const watcher of watchers) watcher();
  };
  child.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    notify();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    err += chunk.toString();
    notify();
  });
  const exited = new Promise<CliResult>((resolve) => {
    child.on('close', (code, signal) =>
      resolve({ code: code ?? (signal ? 128 : 1), stdout: out, stderr: err, ms: Date.now() - started }),
    );
  });
  const killer = setTimeout(() => child.kill('SIGKILL'), 120_000);
  void exited.then(() => clearTimeout(killer));
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    waitFor: (pattern, timeoutMs = 30_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          if (pattern.test(out) || pattern.test(err)) {
            watchers.delete(check);
            clearTimeout(timer);
            resolve(`${out}\n${err}`);
          }
        };
        const timer = setTimeout(() => {
          watchers.delete(check);
          reject(new Error(`no ${pattern} within ${timeoutMs} ms; stdout:\n${out}\nstderr:\n${err}`));
        }, timeoutMs);
        watchers.add(check);
        check();
      }),
  };
}

/** Runs the command to its end. */
export function runCli(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  return startCli(args, env).exited;
}

/** What must never reach a person: a stack trace, an HTTP dump, a JSON log line. */
export function assertNoNoise(text: string): string | undefined {
  if (/^\s+at .+\(.*:\d+:\d+\)$/m.test(text)) return 'a stack trace';
  if (/HTTP-Code|Headers:|"statusCode"/.test(text)) return 'an HTTP dump';
  if (/^\{"level":/m.test(text)) return 'a JSON log line';
  return undefined;
}
