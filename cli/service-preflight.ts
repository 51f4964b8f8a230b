/**
 * The startup preflight of `drainbridge run`, `forwarder` and the node agent, before leader election
 * (lib/preflight/service-check.ts): refuse to start (exit 4) when a required call is denied, or start
 * without an optional source, logging why; what /readyz then says. Loads no @kubernetes/client-node.
 */
import type { Config } from '../lib/config/schema.ts';
import { connectKube } from '../lib/forwarder/kube.ts';
import type { Logger } from '../lib/log/logger.ts';
import type { Service } from '../lib/preflight/service-access.ts';
import { checkService, explainRefusal } from '../lib/preflight/service-check.ts';
import { EXIT } from './exit-codes.ts';
import { CommandFailed } from './failures.ts';

export interface StartDecision {
  /** The NodeMaintenance source runs (it was asked for and its calls are allowed). */
  readonly nodeMaintenance: boolean;
  /** What /readyz reports for the sources left out (empty: nothing left out). */
  readonly notReady: () => string[];
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
    readiness = await checkService(client, service, { namespace: config.namespace, ...settings });
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
