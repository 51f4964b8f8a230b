/**
 * The Nova branch, wired: credentials (OS_* / clouds.yaml / secret references) → Keystone session →
 * Nova and Placement clients → the evacuation pass, restore, cancel and plan. What the workflow and
 * `drainbridge plan` call; everything else in lib/branches/nova is the parts.
 */

import { type CredentialSources, loadOpenStackCredentials } from '../../clients/openstack/credentials.ts';
import { KeystoneSession, type LogSink } from '../../clients/openstack/keystone.ts';
import { NovaClient } from '../../clients/openstack/nova.ts';
import { PlacementClient } from '../../clients/openstack/placement.ts';
import type { HostMapping } from '../../model/nova-host.ts';
import type { ProgressStore } from '../../model/pass.ts';
import type { ResolvedRequest } from '../../model/request.ts';
import { NovaEvacuationPass, type NovaPassWait } from './evacuate.ts';
import type { NovaEvacuationOptions } from './model.ts';
import { planNovaHost, refusalOf } from './plan.ts';
import { cancelNovaMigrations, restoreNovaHost } from './restore.ts';

export { NovaEvacuationFailed, NovaEvacuationPass, type NovaPassWait } from './evacuate.ts';

/**
 * How the workflow's Nova passes follow their migrations: up to 30 s per pass (the pods pass's bound:
 * half the functions' 60 s timeout), looking every second — the cadence an operator's polling loop
 * after `nova host-evacuate-live` would use; each look is two Nova calls per migration in flight and
 * one host listing.
 */
export const NOVA_PASS_WAIT: NovaPassWait = Object.freeze({ waitMs: 30_000, pollMs: 1_000 });
export { NOVA_HOST_KEY, novaHostOf, novaHostRuleSchema, novaHostRuleTextSchema } from '../../model/nova-host.ts';
export { novaEvacuationOptionsSchema } from './model.ts';
export type { NovaPlan } from './plan.ts';

/** The Nova settings of drainbridge's configuration (lib/config `nova`), in the branch's option names. */
export function novaOptionsFromConfig(config: {
  readonly maxConcurrentMigrations: number;
  readonly migrationTimeoutSeconds: number;
  readonly maxMigrationAttempts: number;
  readonly shutoffPolicy: 'block' | 'cold-migrate';
}): Partial<NovaEvacuationOptions> {
  return {
    maxConcurrentMigrations: config.maxConcurrentMigrations,
    abortAfterSeconds: config.migrationTimeoutSeconds,
    maxAttempts: config.maxMigrationAttempts,
    shutoffPolicy: config.shutoffPolicy,
  };
}

export interface NovaBranchDeps {
  readonly credentials: CredentialSources;
  readonly store: ProgressStore;
  readonly options?: Partial<NovaEvacuationOptions>;
  readonly resolveHost?: (request: ResolvedRequest) => Promise<HostMapping>;
  readonly logger?: LogSink;
  /** How long a pass follows its migrations (default: one round). */
  readonly wait?: NovaPassWait;
}

/** Loads credentials once and returns the branch's entry points. */
export async function createNovaBranch(deps: NovaBranchDeps) {
  const credentials = await loadOpenStackCredentials(deps.credentials);
  const session = new KeystoneSession({ credentials, ...(deps.logger ? { logger: deps.logger } : {}) });
  const nova = new NovaClient(session);
  const placement = new PlacementClient(session);
  const undo = { nova, store: deps.store, ...(deps.logger ? { logger: deps.logger } : {}) };
  const planDeps = { nova, placement, ...(deps.options ? { options: deps.options } : {}) };
  const pass = new NovaEvacuationPass({
    nova,
    store: deps.store,
    // `plan`'s own decision: what it reports as blocking the host refuses the evacuation too.
    refusal: (host) => refusalOf(planDeps, host),
    ...(deps.options ? { options: deps.options } : {}),
    ...(deps.resolveHost ? { resolveHost: deps.resolveHost } : {}),
    ...(deps.logger ? { logger: deps.logger } : {}),
    ...(deps.wait ? { wait: deps.wait } : {}),
  });
  return {
    session,
    nova,
    placement,
    pass,
    prepare: (request: ResolvedRequest) => pass.prepare(request),
    /** Re-enables the service if drainbridge disabled it for one of `requestIds` (this request first). */
    restore: (requestIds: readonly string[]) => restoreNovaHost(undo, requestIds),
    cancel: (requestId: string) => cancelNovaMigrations(undo, requestId),
    plan: (host: string) => planNovaHost(planDeps, host),
  };
}
