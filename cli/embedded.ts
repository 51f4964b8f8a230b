/** Starts drainbridge embedded for a command: configuration from the environment, progress to a renderer. */
import { hostname, userInfo } from 'node:os';
import { EmbeddedRuntime } from '../embedded/runtime.ts';
import { type Config, loadConfig } from '../lib/config/index.ts';
import type { EventSource } from './output/renderer.ts';

export interface EmbeddedRun {
  readonly runtime: EmbeddedRuntime;
  readonly config: Config;
}

/** Configuration from the environment; `--kubeconfig` wins over KUBECONFIG. */
export function configFor(
  kubeconfig: string | undefined,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Config {
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
  return { runtime, config };
}
