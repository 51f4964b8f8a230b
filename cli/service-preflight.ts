/**
 * The startup preflight of `drainbridge run`, `forwarder` and the node agent, before leader election
 * (lib/preflight/service-check.ts): refuse to start (exit 4) when a required call is denied, or start
 * without an optional source, logging why; what /readyz then says. Loads no @kubernetes/client-node.
 */

import { apiStatusOf, isConnectionCut, isTransientStatus } from '../lib/clients/kube/errors.ts';
import type { Config } from '../lib/config/schema.ts';
import type { Logger } from '../lib/log/logger.ts';
import type { Service, ServiceSettings } from '../lib/preflight/service-access.ts';
import { checkService, explainRefusal } from '../lib/preflight/service-check.ts';
import { connectKube } from '../lib/sources/forwarder/kube.ts';
import { EXIT } from './exit-codes.ts';
import { CommandFailed } from './failures.ts';

export interface StartDecision {
  /** The NodeMaintenance source runs (it was asked for and its calls are allowed). */
  readonly nodeMaintenance: boolean;
  /** What /readyz reports for the sources left out (empty: nothing left out). */
  readonly notReady: () => string[];
}

/**
 * How long a starting service waits out an API server that answers 429 or 5xx (overloaded), or cuts its
 * connections (restarting), before it gives up: a replica that exits on the first burst comes back only by
 * its restart policy's backoff, and both replicas may start into the same burst or outage (the soak, seed
 * 79462: both replicas restarted into a 30 s outage, exited 4, and the cluster had none). A server that
 * refuses the connection, an unknown host, a certificate of another cluster or no answer in time are
 * still errors at once: those are a wrong address or kubeconfig far more often than an outage.
 */
const TRANSIENT_PATIENCE_MS = 60_000;

async function reviewPatiently(
  client: Parameters<typeof checkService>[0],
  service: Service,
  settings: ServiceSettings,
  logger: Logger,
): Promise<Awaited<ReturnType<typeof checkService>>> {
  const deadline = Date.now() + TRANSIENT_PATIENCE_MS;
  for (let waitMs = 500; ; waitMs = Math.min(waitMs * 2, 8_000)) {
    try {
      return await checkService(client, service, settings);
    } catch (error) {
      const status = apiStatusOf(error);
      const transient =
        status !== undefined && (status.code === 0 ? isConnectionCut(error) : isTransientStatus(status));
      if (!transient || Date.now() + waitMs > deadline) throw error;
      logger.warn('preflight: the API server answered a transient error; asking again', {
        error: (error as Error).message,
        retryInMs: waitMs,
      });
      await new Promise((resolve) => setTimeout(resolve, waitMs));
    }
  }
}

/**
 * Reviews `service`'s calls as its credentials; throws CommandFailed (exit 4, every missing call and the
 * command granting it) when a required one is denied.
 */
export async function preflightService(
  service: Service,
  config: Pick<Config, 'kube' | 'mode' | 'namespace'>,
  settings: { readonly nodeMaintenance: boolean },
  logger: Logger,
): Promise<StartDecision> {
  const client = await connectKube(config);
  let readiness: Awaited<ReturnType<typeof checkService>>;
  try {
    readiness = await reviewPatiently(client, service, { namespace: config.namespace, ...settings }, logger);
  } finally {
    client.close();
  }
  const missing = readiness.results.filter((r) => !r.ok);
  if (readiness.refuse) {
    logger.error('not started: the credentials lack calls this service makes', {
      ...(readiness.user ? { user: readiness.user } : {}),
      missing: missing.map((r) => r.what),
      fix: [...new Set(missing.map((r) => r.fix))],
    });
    throw new CommandFailed(EXIT.notReady, explainRefusal(readiness).join('\n'));
  }
  const reasons = [...readiness.withoutSources.values()].flat();
  for (const [source, why] of readiness.withoutSources) {
    logger.warn('running without a source: its credentials lack calls it makes', { source, reasons: why });
  }
  return {
    nodeMaintenance: settings.nodeMaintenance && !readiness.withoutSources.has('node-maintenance'),
    notReady: () => reasons,
  };
}
