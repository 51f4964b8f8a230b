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

/** The operator's opt-in flags that stand for a setting of the configuration. */
export const OPT_IN_FLAGS = { 'kubevirt-restart-unmigratable': 'DRAINBRIDGE_KUBEVIRT_RESTART_UNMIGRATABLE' } as const;

/** Configuration from the environment; `--kubeconfig` wins over KUBECONFIG, an opt-in flag over its variable. */
export function configFor(
  kubeconfig: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
  optIns: ReadonlyMap<string, string> = new Map(),
): Config {
  const flags = Object.entries(OPT_IN_FLAGS).filter(([flag]) => optIns.has(flag) && optIns.get(flag) !== 'false');
  return loadConfig({
    ...env,
    ...(kubeconfig ? { KUBECONFIG: kubeconfig, DRAINBRIDGE_KUBE_ACCESS: 'kubeconfig' } : {}),
    ...Object.fromEntries(flags.map(([, variable]) => [variable, 'true'])),
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

/**
 * Waits for an execution — and for the executions it continued as, if it continued as new — and
 * resolves to the process exit code (0 ok, 1 failed).
 */
export async function exitCodeOf(
  execution: TrackedExecution | undefined,
  what: string,
  runtime?: EmbeddedRuntime,
): Promise<number> {
  if (!execution) {
    console.error(`drainbridge: no ${what} execution was started (the bus rule did not match?)`);
    return 1;
  }
  const outcome = runtime ? (await runtime.chainOf(execution)).outcome : await execution.outcome;
  if (outcome.ok) return 0;
  const cause = (outcome.error as { cause?: { message?: string } }).cause?.message;
  console.error(`drainbridge: ${what} ended: ${cause ?? outcome.error.message}`);
  return 1;
}
