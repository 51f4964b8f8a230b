/** Starts drainbridge embedded for a command: configuration from the environment, progress to a renderer. */
import { hostname, userInfo } from 'node:os';
import { EmbeddedRuntime } from '../embedded/runtime.ts';
import { type Config, loadConfig } from '../lib/config/index.ts';
import type { EventSource } from './output/renderer.ts';

export interface EmbeddedRun {
  readonly runtime: EmbeddedRuntime;
  readonly config: Config;
}

/** The operator's opt-in flags that stand for a setting of the configuration. */
export const OPT_IN_FLAGS = { 'kubevirt-restart-unmigratable': 'DRAINBRIDGE_KUBEVIRT_RESTART_UNMIGRATABLE' } as const;

/** Configuration from the environment; `--kubeconfig` wins over KUBECONFIG, an opt-in flag over its variable. */
export function configFor(
  kubeconfig: string | undefined,
  env: Readonly<Record<string, string | undefined>> = process.env,
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
  events: EventSource,
  options: { retryIntervalMs?: number; now?: () => Date } = {},
): Promise<EmbeddedRun> {
  const runtime = await EmbeddedRuntime.create({
    config,
    onTask: events.task,
    onBusEvent: events.bus,
    ...(options.retryIntervalMs !== undefined ? { retryIntervalMs: options.retryIntervalMs } : {}),
    ...(options.now ? { now: options.now } : {}),
  });
  // Per-item progress comes from the records this run writes: watched in process, no read of their own.
  runtime.deps.progress.watch(events.record);
  return { runtime, config };
}

/** How often a command looks whether its request has started to wait in line (an in-memory count). */
const WAITING_CHECK_MS = 200;

/**
 * Wakes this command's own request when it waits in line: a one-shot `drainbridge evacuate` has no
 * `drainbridge run` to send its parked token back (and `run` could not: the token is this process's
 * executor's), so it watches the admission Lease itself, as `run` does, and delivers to its own runtime.
 * The watch starts only once a Task of this runtime waits for a token — a request that never waits pays
 * nothing for it, not even at its start. Tokens parked by other processes are not waiting here
 * (sendTaskSuccess says false): their own waker, or their fallback, wakes them. Without this watch the
 * request would look again only at WaitForSlot's fallback, 10 s.
 */
export function wakeOwnWaiters(config: Config, runtime: EmbeddedRuntime): { stop(): Promise<void> } {
  let started: Promise<{ stop(): Promise<void> }> | undefined;
  const check = setInterval(() => {
    if (started || runtime.executor.waitingForTokens === 0) return;
    clearInterval(check);
    started = startWaker(config, runtime);
  }, WAITING_CHECK_MS);
  check.unref();
  return {
    stop: async () => {
      clearInterval(check);
      await (await started)?.stop();
    },
  };
}

async function startWaker(config: Config, runtime: EmbeddedRuntime): Promise<{ stop(): Promise<void> }> {
  // Loaded only now: a command that never waits loads none of it (its start stays as quick as before).
  const [{ SlotWaker }, { connectKube }, { createLogger }] = await Promise.all([
    import('../lib/admission/index.ts'),
    import('../lib/sources/forwarder/kube.ts'),
    import('../lib/log/logger.ts'),
  ]);
  // Should this client fail to connect, the fallback remains (the command's own client reached the cluster).
  const client = await connectKube(config).catch(() => undefined);
  if (!client) return { stop: async () => {} };
  const waker = new SlotWaker({
    client,
    namespace: config.namespace,
    logger: createLogger('drainbridge-waker'),
    deliver: (token) => runtime.executor.sendTaskSuccess(token),
    leading: () => true,
  });
  waker.start();
  return {
    stop: async () => {
      await waker.stop();
      client.close();
    },
  };
}
