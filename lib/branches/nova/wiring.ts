/**
 * The Nova branch's connection, its port, from the configuration: NO_NOVA unless DRAINBRIDGE_NOVA=true,
 * else the Nova branch (lib/branches/nova) over credentials from OS_* / OS_CLOUD (values may be ssm:/secretsmanager: references),
 * with the node → host mapping read from the node (annotation/label) and DRAINBRIDGE_NOVA_HOST_RULE.
 */

import type { KubeClient } from '../../clients/kube/client.ts';
import { matchesAll } from '../../clients/kube/selectors.ts';
import type { Config } from '../../config/index.ts';
import { TransientError } from '../../errors/index.ts';
import { createLogger } from '../../log/logger.ts';
import { type HostMapping, NOVA_HOST_KEY, novaHostOf } from '../../model/nova-host.ts';
import type { PassResult, ProgressStore } from '../../model/pass.ts';
import type { BranchPlanner } from '../../model/plan.ts';
import { MemoryProgressStore } from '../../progress/memory-store.ts';
import { NO_NOVA, type NovaPort } from './port.ts';

/** What the Nova port needs from the rest of the workflow's dependencies. */
export interface NovaWiringBase {
  readonly kube: KubeClient;
  readonly progress: ProgressStore;
  /** Where the OS_* credentials are read from (defaults to the process environment). */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/** The Nova host of a node: its annotation or label `drainbridge.io/nova-host`, the configured rules, or its name. */
function hostResolver(config: Config, kube: KubeClient): (nodeName: string) => Promise<HostMapping> {
  const rules = config.nova.hostRules;
  return async (nodeName) => {
    const meta = (await kube.getNode(nodeName)).metadata ?? {};
    return novaHostOf({ name: nodeName, labels: meta.labels ?? {}, annotations: meta.annotations ?? {} }, rules);
  };
}

/**
 * Whether a node is a Nova host: it names its host (annotation or label `drainbridge.io/nova-host`), or
 * it matches DRAINBRIDGE_NOVA_NODE_SELECTOR (empty: every node). A node that is one and has no
 * nova-compute service fails the evacuation; a node that is not one has no Nova branch.
 */
function novaHostMatcher(config: Config, kube: KubeClient): (nodeName: string) => Promise<boolean> {
  const requirements = config.nova.nodeSelector;
  return async (nodeName) => {
    const meta = (await kube.getNode(nodeName)).metadata ?? {};
    if (meta.annotations?.[NOVA_HOST_KEY] !== undefined || meta.labels?.[NOVA_HOST_KEY] !== undefined) return true;
    return matchesAll(requirements, meta.labels ?? {});
  };
}

const NOT_A_NOVA_HOST: PassResult = {
  done: true,
  progressed: false,
  progress: { total: 0, moved: 0, inFlight: 0, skipped: 0 },
  blockers: [],
};

/**
 * The Nova branch, its OpenStack clients loaded only now: most clusters have no Nova, and the clients'
 * HTTP stack (axios and what it pulls in) is a large part of a function's cold import.
 */
async function branchFor(config: Config, base: NovaWiringBase) {
  const { createNovaBranch, NOVA_PASS_WAIT, novaOptionsFromConfig } = await import('./index.ts');
  const hostOf = hostResolver(config, base.kube);
  return createNovaBranch({
    credentials: { env: base.env ?? process.env },
    store: base.progress,
    options: novaOptionsFromConfig(config.nova),
    resolveHost: (request) => hostOf(request.nodeName),
    logger: createLogger('drainbridge.nova'),
    wait: NOVA_PASS_WAIT,
  });
}

/** The Nova part of `drainbridge plan` (reads only), or undefined when Nova is not enabled. */
export async function novaPlannerFor(
  config: Config,
  base: Omit<NovaWiringBase, 'progress'>,
): Promise<BranchPlanner | undefined> {
  if (!config.nova.enabled) return undefined;
  // The planner only reads Nova; its store is never written.
  const branch = await branchFor(config, { ...base, progress: new MemoryProgressStore() });
  const hostOf = hostResolver(config, base.kube);
  const isNovaHost = novaHostMatcher(config, base.kube);
  return async (nodeName) => {
    if (!(await isNovaHost(nodeName))) return { branch: 'nova', toMove: [], skipped: [], blockers: [] };
    return branch.plan((await hostOf(nodeName)).host);
  };
}

/**
 * Runs a Nova step; an OpenStack call that failed in a way that may pass (no answer, 5xx, 429) after the
 * session's own retries becomes a TransientError, so the state machine retries the step with its backoff
 * (nova-api restarting, a Keystone blip) instead of failing the evacuation at once. Definite refusals
 * stay what they are.
 */
async function ridingOutages<T>(step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    // Loaded here, as the branch is (branchFor): the OpenStack HTTP module brings axios.
    const { isRetryableHttp } = await import('../../clients/openstack/http.ts');
    if (isRetryableHttp(error)) throw new TransientError((error as Error).message, { cause: error });
    throw error;
  }
}

export async function novaPortFor(config: Config, base: NovaWiringBase): Promise<NovaPort> {
  if (!config.nova.enabled) return NO_NOVA;
  const branch = await branchFor(config, base);
  const isNovaHost = novaHostMatcher(config, base.kube);
  return {
    prepare: (request) =>
      ridingOutages(async () => {
        if (!(await isNovaHost(request.nodeName))) {
          return {
            host: null,
            disabledNow: false,
            note: `node ${request.nodeName} is not a Nova host (DRAINBRIDGE_NOVA_NODE_SELECTOR)`,
          };
        }
        const prepared = await branch.prepare(request);
        const note = prepared.foreignDisabledReason
          ? `nova-compute on ${prepared.host} was already disabled by someone else ("${prepared.foreignDisabledReason}"); it stays so`
          : `nova-compute on ${prepared.host} disabled by drainbridge`;
        return { host: prepared.host, disabledNow: prepared.disabledByUs, note };
      }),
    pass: () => ({
      branch: 'nova',
      run: (input) =>
        ridingOutages(async () =>
          (await isNovaHost(input.request.nodeName)) ? branch.pass.run(input) : NOT_A_NOVA_HOST,
        ),
    }),
    restore: (request, otherRequestIds) =>
      ridingOutages(async () => {
        const outcome = await branch.restore([request.requestId, ...otherRequestIds]);
        const leftAlone =
          outcome.action === 'left-disabled'
            ? [
                `nova-compute on ${outcome.host} is disabled by someone else (reason: ${outcome.disabledReason ?? 'none'}); left disabled`,
              ]
            : [];
        return { serviceEnabled: outcome.action === 'enabled', leftAlone };
      }),
    cancel: (requestIds) =>
      ridingOutages(async () => {
        let aborted = 0;
        for (const id of requestIds) aborted += (await branch.cancel(id)).aborted.length;
        return { abortedMigrations: aborted };
      }),
  };
}
