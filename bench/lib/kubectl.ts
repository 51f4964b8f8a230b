/**
 * Runs the real `kubectl drain` against a simulated cluster: its own HOME and cache directory (never
 * ~/.kube), a hard timeout, and the wall time from spawn to exit.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** What one kubectl drain did. */
export interface KubectlOutcome {
  readonly ok: boolean;
  readonly wallMs: number;
  readonly exitCode: number | string;
  /** The last lines of stderr, for a failed run. */
  readonly stderrTail: string;
  /** Killed by the time limit (its wall time is a lower bound). */
  readonly timedOut: boolean;
}

export { findKubectl } from '../../sim/kubectl.ts';

/** Drains `node` with `kubectl drain NODE flags…`, as the owner of `kubeconfigPath`; never rejects. */
export function runKubectlDrain(
  binary: string,
  kubeconfigPath: string,
  node: string,
  options: { flags: readonly string[]; timeoutMs: number },
): Promise<KubectlOutcome> {
  // A fresh HOME per run: kubectl's discovery cache starts empty every time, as on a first run.
  const home = mkdtempSync(join(tmpdir(), 'drainbridge-bench-kubectl-'));
  const env = { PATH: process.env.PATH, HOME: home, KUBECONFIG: kubeconfigPath, KUBECACHEDIR: join(home, 'cache') };
  const args = ['drain', node, ...options.flags];
  const started = performance.now();
  return new Promise((resolve) => {
    execFile(binary, args, { env, timeout: options.timeoutMs, maxBuffer: 16 * 1024 * 1024 }, (error, _out, stderr) => {
      const wallMs = performance.now() - started;
      rmSync(home, { recursive: true, force: true });
      const exitCode = error ? (typeof error.code === 'number' ? error.code : (error.signal ?? 'error')) : 0;
      const stderrTail = stderr.trim().split('\n').slice(-3).join('\n');
      resolve({ ok: exitCode === 0, wallMs, exitCode, stderrTail, timedOut: error?.killed === true });
    });
  });
}
