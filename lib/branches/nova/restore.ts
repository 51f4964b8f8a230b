/**
 * Undoing what the Nova branch changed, and only that.
 *
 * Restore re-enables the source host's nova-compute service when its `disabled_reason` still carries
 * drainbridge's token for this request; a disable by someone else (before us, or re-done after us) is
 * left alone and reported. Servers are not moved back: the scheduler balances new load.
 *
 * Cancel aborts the live migrations drainbridge has in flight; the servers keep running where they
 * are (on the source when the abort wins, on the destination when the migration finished first).
 */

import type { LogSink } from '../../clients/openstack/keystone.ts';
import type { NovaClient } from '../../clients/openstack/nova.ts';
import type { ProgressStore } from '../../model/pass.ts';
import { computeServiceOf } from './evacuate.ts';
import { isOurDisable, NOVA_STATE_FORMAT } from './model.ts';

export type RestoreOutcome =
  | { readonly action: 'enabled'; readonly host: string }
  | { readonly action: 'left-disabled'; readonly host: string; readonly disabledReason: string | null }
  | { readonly action: 'already-enabled'; readonly host: string }
  | { readonly action: 'nothing-recorded' };

export interface NovaUndoDeps {
  readonly nova: NovaClient;
  readonly store: ProgressStore;
  readonly logger?: LogSink;
}

/**
 * Re-enables the host's service if, and only if, it is still disabled with drainbridge's reason for
 * one of `requestIds`. The workflow calls it when the node's last hold is released and passes this request
 * first, then the other requests that held the node (their disable is drainbridge's too, and none of
 * them needs it any more). Anyone else's disable is left alone and reported.
 */
export async function restoreNovaHost(deps: NovaUndoDeps, requestIds: readonly string[]): Promise<RestoreOutcome> {
  const stored = await firstStored(deps, requestIds);
  if (!stored) return { action: 'nothing-recorded' };
  const host = stored.state.host;
  const service = await computeServiceOf(deps.nova, host);
  if (service.status === 'enabled') return { action: 'already-enabled', host };
  if (!requestIds.some((id) => isOurDisable(service.disabledReason, id))) {
    deps.logger?.warn('nova-compute service was disabled by someone else: leaving it disabled', {
      host,
      disabledReason: service.disabledReason ?? '',
    });
    return { action: 'left-disabled', host, disabledReason: service.disabledReason };
  }
  await deps.nova.enableService(service.id);
  deps.logger?.info('re-enabled nova-compute service', { host });
  return { action: 'enabled', host };
}

/** The Nova branch state of the first of `requestIds` that has one. */
async function firstStored(deps: NovaUndoDeps, requestIds: readonly string[]) {
  for (const id of requestIds) {
    const stored = await deps.store.read(id, 'nova', NOVA_STATE_FORMAT);
    if (stored) return stored;
  }
  return undefined;
}

export interface CancelOutcome {
  /** Servers whose migration was aborted. */
  readonly aborted: readonly string[];
  /** Servers whose migration could not be aborted (already finishing, not abortable yet), with Nova's reason. */
  readonly notAborted: readonly { readonly serverId: string; readonly reason: string }[];
}

/** Aborts every live migration drainbridge has in flight for this request. */
export async function cancelNovaMigrations(deps: NovaUndoDeps, requestId: string): Promise<CancelOutcome> {
  const stored = await deps.store.read(requestId, 'nova', NOVA_STATE_FORMAT);
  if (!stored) return { aborted: [], notAborted: [] };
  const aborted: string[] = [];
  const notAborted: { serverId: string; reason: string }[] = [];
  for (const [serverId, progress] of Object.entries(stored.state.servers)) {
    if (progress.phase !== 'live-migrating') continue;
    const records = await deps.nova.listMigrations(serverId, 'live-migration');
    const current = records.filter((m) => m.id > progress.sinceMigrationId).at(-1);
    if (!current || !['running', 'queued', 'preparing'].includes(current.status)) {
      notAborted.push({
        serverId,
        reason: current ? `migration ${current.id} is ${current.status}` : 'no migration record yet',
      });
      continue;
    }
    try {
      await deps.nova.abortMigration(serverId, current.id);
      aborted.push(serverId);
    } catch (error) {
      notAborted.push({ serverId, reason: error instanceof Error ? error.message : String(error) });
    }
  }
  deps.logger?.info('cancelled Nova migrations', { aborted: aborted.length, notAborted: notAborted.length });
  return { aborted, notAborted };
}
