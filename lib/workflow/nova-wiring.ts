/**
 * The Nova port from the configuration: NO_NOVA unless DRAINBRIDGE_NOVA=true, else the Nova branch
 * (lib/nova) over credentials from OS_* / OS_CLOUD (values may be ssm:/secretsmanager: references),
 * with the node → host mapping read from the node (annotation/label) and DRAINBRIDGE_NOVA_HOST_RULE.
 */
import type { Config } from '../config/index.ts';
import type { ProgressStore } from '../domain/pass.ts';
import type { KubeClient } from '../kube/client.ts';
import { createLogger } from '../log/logger.ts';
import { createNovaBranch, novaHostOf, novaHostRuleTextSchema, novaOptionsFromConfig } from '../nova/index.ts';
import { NO_NOVA, type NovaPort } from './nova-port.ts';

/** What the Nova port needs from the rest of the workflow's dependencies. */
export interface NovaWiringBase {
  readonly kube: KubeClient;
  readonly progress: ProgressStore;
  /** Where the OS_* credentials are read from (defaults to the process environment). */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

export async function novaPortFor(config: Config, base: NovaWiringBase): Promise<NovaPort> {
  if (!config.nova.enabled) return NO_NOVA;
  const rules = novaHostRuleTextSchema.parse(config.nova.hostRule);
  const branch = await createNovaBranch({
    credentials: { env: base.env ?? process.env },
    store: base.progress,
    options: novaOptionsFromConfig(config.nova),
    resolveHost: async (request) => {
      const node = await base.kube.getNode(request.nodeName);
      const meta = node.metadata ?? {};
      return novaHostOf(
        { name: request.nodeName, labels: meta.labels ?? {}, annotations: meta.annotations ?? {} },
        rules,
      );
    },
    logger: createLogger('drainbridge.nova'),
  });
  return {
    prepare: async (request) => {
      const prepared = await branch.prepare(request);
      const note = prepared.foreignDisabledReason
        ? `nova-compute on ${prepared.host} was already disabled by someone else ("${prepared.foreignDisabledReason}"); it stays so`
        : `nova-compute on ${prepared.host} disabled by drainbridge`;
      return { host: prepared.host, disabledNow: prepared.disabledByUs, note };
    },
    pass: () => branch.pass,
    restore: async (request, otherRequestIds) => {
      const requestIds = [request.requestId, ...otherRequestIds];
      let aborted = 0;
      for (const id of requestIds) aborted += (await branch.cancel(id)).aborted.length;
      const outcome = await branch.restore(requestIds);
      const leftAlone =
        outcome.action === 'left-disabled'
          ? [
              `nova-compute on ${outcome.host} is disabled by someone else (reason: ${outcome.disabledReason ?? 'none'}); left disabled`,
            ]
          : [];
      return { serviceEnabled: outcome.action === 'enabled', abortedMigrations: aborted, leftAlone };
    },
    cancel: async (request) => ({ abortedMigrations: (await branch.cancel(request.requestId)).aborted.length }),
  };
}
