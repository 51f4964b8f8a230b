/** Starts drainbridge embedded for a command: configuration from the environment, progress printed. */
import { hostname, userInfo } from 'node:os';
import type { TaskCall } from '../embedded/executor.ts';
import { busLine, createProgressPrinter, taskLine } from '../embedded/progress.ts';
import { EmbeddedRuntime, type TrackedExecution } from '../embedded/runtime.ts';
import { type Config, loadConfig } from '../lib/config/index.ts';

export interface EmbeddedRun {
  readonly runtime: EmbeddedRuntime;
  readonly config: Config;
}

/** Configuration from the environment; `--kubeconfig` wins over KUBECONFIG. */
export function configFor(kubeconfig: string | undefined, env: NodeJS.ProcessEnv = process.env): Config {
  return loadConfig({
    ...env,
    ...(kubeconfig ? { KUBECONFIG: kubeconfig, DRAINBRIDGE_KUBE_ACCESS: 'kubeconfig' } : {}),
  });
}

/** Who is asking, for the ledger: `user@host`. */
export function requesterName(): string {
  let user = 'unknown';
  try {
    user = userInfo().username;
  } catch {
    // no passwd entry (containers)
  }
  return `${user}@${hostname()}`;
}

export async function startEmbedded(
  config: Config,
  options: { write?: (line: string) => void; retryIntervalMs?: number; now?: () => Date } = {},
): Promise<EmbeddedRun> {
  const print = createProgressPrinter(options.write ?? ((line) => console.log(line)));
  const runtime = await EmbeddedRuntime.create({
    config,
    onTask: (call: TaskCall) => print(taskLine(call)),
    onBusEvent: (detailType, detail) => print(busLine(detailType, detail as Record<string, unknown>)),
    ...(options.retryIntervalMs !== undefined ? { retryIntervalMs: options.retryIntervalMs } : {}),
    ...(options.now ? { now: options.now } : {}),
  });
  return { runtime, config };
}

/** Waits for an execution; resolves to the process exit code (0 ok, 1 failed). */
export async function exitCodeOf(execution: TrackedExecution | undefined, what: string): Promise<number> {
  if (!execution) {
    console.error(`drainbridge: no ${what} execution was started (the bus rule did not match?)`);
    return 1;
  }
  const outcome = await execution.outcome;
  if (outcome.ok) return 0;
  const cause = (outcome.error as { cause?: { message?: string } }).cause?.message;
  console.error(`drainbridge: ${what} ended: ${cause ?? outcome.error.message}`);
  return 1;
}
