/**
 * What a Nova evacuation pass reads before it plans: a fresh listing of the source host (so servers
 * that landed after the disable are seen) and, for every migration drainbridge has in flight, the
 * server and its newest migration record — which Nova creates only after the 202, hence the search
 * for an id above the one recorded before the attempt.
 */
import type { NovaClient, NovaServer } from '../../clients/openstack/nova.ts';
import {
  FAILED_MIGRATION_STATUSES,
  type NovaBranchState,
  type Observation,
  type ObservedServer,
  type ServerProgress,
} from './model.ts';

function observed(server: NovaServer): ObservedServer {
  return { id: server.id, name: server.name, status: server.status, host: server.host, taskState: server.taskState };
}

async function observeInFlight(nova: NovaClient, id: string, progress: ServerProgress): Promise<ObservedServer | null> {
  const server = await nova.getServer(id);
  if (!server) return null;
  const type = progress.phase === 'cold-migrating' ? 'migration' : 'live-migration';
  const records = await nova.listMigrations(id, type);
  const current = records.filter((m) => m.id > progress.sinceMigrationId).at(-1);
  if (!current) return observed(server);
  const migration = { id: current.id, status: current.status, destCompute: current.destCompute };
  if (!FAILED_MIGRATION_STATUSES.includes(current.status) || current.status === 'cancelled') {
    return { ...observed(server), migration };
  }
  // The fault of a failed migration is not on the server (it stays ACTIVE, no `fault`): only the
  // instance action's events say why ("No valid host was found.").
  const failure = await nova.lastActionFailure(id, type === 'migration' ? 'migrate' : 'live-migration');
  return { ...observed(server), migration, ...(failure ? { failure } : {}) };
}

/** Observes the host and every in-flight migration of the stored state. */
export async function observeHost(nova: NovaClient, state: NovaBranchState): Promise<Observation> {
  // In-flight servers first, the host listing last: a migration that completes in between then shows
  // as moved and absent, never as moved yet still listed on the source (which would start it again).
  const inFlight: Record<string, ObservedServer | null> = {};
  for (const [id, progress] of Object.entries(state.servers)) {
    if (progress.phase === 'live-migrating' || progress.phase === 'cold-migrating') {
      inFlight[id] = await observeInFlight(nova, id, progress);
    }
  }
  const onHost = (await nova.listServersOnHost(state.host)).map(observed);
  return { onHost, inFlight };
}
