/**
 * Runs the machine's real kubectl against a simulator: a private kubeconfig, HOME and cache per run
 * (never ~/.kube), a timeout on every call.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export { findKubectl } from '../../sim/kubectl.ts';

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** A kubectl bound to one kubeconfig, in its own HOME. `close()` removes the directory. */
export class Kubectl {
  readonly #binary: string;
  readonly #dir: string;
  readonly #env: NodeJS.ProcessEnv;

  constructor(binary: string, kubeconfig: string) {
    this.#binary = binary;
    this.#dir = mkdtempSync(join(tmpdir(), 'drainbridge-kubectl-'));
    const kubeconfigPath = join(this.#dir, 'kubeconfig');
    writeFileSync(kubeconfigPath, kubeconfig, { mode: 0o600 });
    this.#env = {
      PATH: process.env.PATH,
      HOME: this.#dir,
      KUBECONFIG: kubeconfigPath,
      KUBECACHEDIR: join(this.#dir, 'cache'),
      CLOUDSDK_CONFIG: join(this.#dir, 'gcloud'),
    };
  }

  /** Another kubectl sharing nothing with this one but the binary (e.g. a ServiceAccount's kubeconfig). */
  withKubeconfig(kubeconfig: string): Kubectl {
    return new Kubectl(this.#binary, kubeconfig);
  }

  /** Runs kubectl with `args`; resolves with the exit code and output (never rejects on a non-zero exit). */
  run(args: readonly string[], options: { timeoutMs?: number; input?: string } = {}): Promise<KubectlResult> {
    return new Promise((resolve, reject) => {
      const child = execFile(
        this.#binary,
        args,
        { env: this.#env, timeout: options.timeoutMs ?? 60_000, maxBuffer: 16 * 1024 * 1024 },
        (error, stdout, stderr) => {
          if (error && typeof error.code !== 'number') {
            reject(new Error(`kubectl ${args.join(' ')}: ${error.message}\n${stderr}`));
            return;
          }
          resolve({ code: typeof error?.code === 'number' ? error.code : 0, stdout, stderr });
        },
      );
      if (options.input !== undefined) child.stdin?.end(options.input);
    });
  }

  /** Starts a long-running kubectl (e.g. `get -w`); returns its output so far and a stop function. */
  start(args: readonly string[]): { output: () => string; stop: () => Promise<void> } {
    const child = spawn(this.#binary, args, { env: this.#env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const killer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    return {
      output: () => output,
      stop: async () => {
        clearTimeout(killer);
        if (child.exitCode === null) child.kill('SIGTERM');
        await exited;
      },
    };
  }

  close(): void {
    rmSync(this.#dir, { recursive: true, force: true });
  }
}
