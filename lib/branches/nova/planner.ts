/**
 * The Nova evacuation planner: a pure function of what a pass observed, the progress stored by the
 * previous pass, the options and the clock. It says which effects to perform now (start, abort,
 * force-complete, confirm) and what the next progress record is. No I/O here; lib/branches/nova/evacuate.ts
 * performs the effects.
 */
import type { Blocker, BlockerCode, PlanItem } from '../../model/plan.ts';
import {
  ABORTABLE_MIGRATION_STATUSES,
  FAILED_MIGRATION_STATUSES,
  FINISHED_MIGRATION_STATUSES,
  LIVE_MIGRATABLE_STATUSES,
  type NovaEvacuationOptions,
  type Observation,
  type ObservedServer,
  SETTLED_UNMIGRATABLE_STATUSES,
  type ServerProgress,
  withoutRequests,
} from './model.ts';

export type NovaAction =
  | { readonly kind: 'live-migrate' | 'cold-migrate' | 'confirm'; readonly serverId: string }
  | { readonly kind: 'abort' | 'force-complete'; readonly serverId: string; readonly migrationId: number };

export interface PlannerInput {
  readonly sourceHost: string;
  readonly servers: Readonly<Record<string, ServerProgress>>;
  readonly observation: Observation;
  readonly options: NovaEvacuationOptions;
  readonly now: Date;
}

export interface PassPlan {
  readonly servers: Record<string, ServerProgress>;
  readonly actions: NovaAction[];
  readonly blockers: Blocker[];
  /** Servers whose attempts are exhausted; the evacuation fails when nothing else can move. */
  readonly failed: ServerProgress[];
  readonly inFlight: number;
  readonly moved: number;
  /** The host is empty and nothing is in flight. */
  readonly done: boolean;
  /** A phase changed or an action is due. */
  readonly progressed: boolean;
  /** Servers that may be started (this pass or, past the concurrency limit, a later one). */
  readonly candidateIds: string[];
}

const IN_FLIGHT = new Set(['live-migrating', 'cold-migrating']);

export const serverItem = (id: string, name: string): PlanItem => ({ kind: 'Server', uid: id, name });

/** A failed attempt: back to pending while attempts remain, else terminal. */
function failAttempt(progress: ServerProgress, reason: string, options: NovaEvacuationOptions): ServerProgress {
  const { migrationId: _m, startedAt: _s, ...rest } = withoutRequests(progress);
  return { ...rest, phase: progress.attempts >= options.maxAttempts ? 'failed' : 'pending', lastFailure: reason };
}

function secondsSince(iso: string | undefined, now: Date): number {
  return iso === undefined ? 0 : (now.getTime() - Date.parse(iso)) / 1000;
}

/** Whether a server that was migrating has arrived somewhere else and is idle there. */
function hasLeft(observed: ObservedServer, sourceHost: string): boolean {
  return (
    observed.host !== null && observed.host !== sourceHost && observed.taskState === null && observed.status !== 'ERROR'
  );
}

interface Step {
  readonly progress: ServerProgress;
  readonly action?: NovaAction;
}

/** One in-flight server, one step forward. */
export function advanceInFlight(
  progress: ServerProgress,
  observed: ObservedServer | null,
  input: Pick<PlannerInput, 'sourceHost' | 'options' | 'now'>,
): Step {
  if (observed === null) return { progress: { ...progress, phase: 'moved', destination: '(deleted)' } };
  const migration = observed.migration;
  const withRecord = migration ? { ...progress, migrationId: migration.id } : progress;
  if (observed.status === 'ERROR')
    return { progress: failAttempt(withRecord, `server ${observed.name} went to ERROR`, input.options) };
  if (progress.phase === 'cold-migrating' && observed.status === 'VERIFY_RESIZE') {
    if (progress.confirmRequested) return { progress: withRecord };
    return { progress: { ...withRecord, confirmRequested: true }, action: { kind: 'confirm', serverId: observed.id } };
  }
  if (hasLeft(observed, input.sourceHost) && (!migration || FINISHED_MIGRATION_STATUSES.includes(migration.status))) {
    return { progress: { ...withRecord, phase: 'moved', destination: observed.host ?? '' } };
  }
  if (migration && FAILED_MIGRATION_STATUSES.includes(migration.status) && observed.taskState === null) {
    const reason = observed.failure ?? `migration ${migration.id} ended ${migration.status}`;
    return { progress: failAttempt(withRecord, reason, input.options) };
  }
  return stuckStep(withRecord, observed, input);
}

/**
 * A migration Nova has not ended this long after it started is given up on: twice the abort deadline,
 * so an abort had its own deadline's worth of time to take. Nova can leave a server `migrating` for as
 * long as a compute it waits on is down (seen in the lab: the record `completed`, the server still on
 * the source until the destination's nova-compute returns); without a bound the evacuation would wait
 * with it forever.
 */
export const giveUpAfterSeconds = (options: NovaEvacuationOptions): number => 2 * options.abortAfterSeconds;

/**
 * The server is still busy in Nova past the give-up deadline: a terminal failure whatever attempts
 * remain, since Nova will not accept a new migration while its task lasts. The server is left to Nova,
 * which finishes or rolls back the migration by itself; nothing here stops or deletes it.
 */
function givenUp(progress: ServerProgress, observed: ObservedServer, elapsed: number): ServerProgress {
  const migration = observed.migration;
  const record = migration
    ? `migration ${migration.id} is ${migration.status}${migration.destCompute ? ` (to ${migration.destCompute})` : ''}`
    : 'no migration record';
  const abort = progress.abortRequested ? ', aborted by drainbridge and not yet ended' : '';
  const reason =
    `still ${observed.status} (task_state ${observed.taskState ?? 'none'}) on ${observed.host ?? 'no host'} ` +
    `${Math.round(elapsed)}s after its migration started; ${record}${abort}: left to Nova to finish or roll back`;
  return { ...withoutRequests(progress), phase: 'failed', lastFailure: reason };
}

/**
 * Whether an abort, if one was asked for, has had its own timeout's worth of time. A pass that first
 * sees a running migration past both deadlines (its record appeared late, or the pass ran late) aborts
 * it first rather than giving up on a migration nobody tried to stop.
 */
function abortHadItsTime(progress: ServerProgress, input: Pick<PlannerInput, 'options' | 'now'>): boolean {
  if (progress.abortRequestedAt === undefined) return true;
  return secondsSince(progress.abortRequestedAt, input.now) > input.options.abortAfterSeconds;
}

/** Still under way: force-complete or abort when it runs too long; fail when no record ever appears. */
function stuckStep(
  progress: ServerProgress,
  observed: ObservedServer,
  input: Pick<PlannerInput, 'options' | 'now'>,
): Step {
  const elapsed = secondsSince(progress.startedAt, input.now);
  const migration = observed.migration;
  const abortDue =
    migration !== undefined &&
    elapsed > input.options.abortAfterSeconds &&
    ABORTABLE_MIGRATION_STATUSES.includes(migration.status) &&
    !progress.abortRequested;
  if (
    !abortDue &&
    elapsed > giveUpAfterSeconds(input.options) &&
    (observed.taskState !== null || migration !== undefined) &&
    abortHadItsTime(progress, input)
  ) {
    return { progress: givenUp(progress, observed, elapsed) };
  }
  if (!migration) {
    if (observed.taskState === null && elapsed > input.options.recordGraceSeconds) {
      return {
        progress: failAttempt(
          progress,
          `no migration record appeared within ${input.options.recordGraceSeconds}s`,
          input.options,
        ),
      };
    }
    return { progress };
  }
  const forceAfter = input.options.forceCompleteAfterSeconds;
  if (forceAfter > 0 && elapsed > forceAfter && migration.status === 'running' && !progress.forceCompleteRequested) {
    return {
      progress: { ...progress, forceCompleteRequested: true },
      action: { kind: 'force-complete', serverId: observed.id, migrationId: migration.id },
    };
  }
  if (abortDue) {
    return {
      progress: {
        ...progress,
        abortRequested: true,
        abortRequestedAt: input.now.toISOString(),
        lastFailure: `aborted after ${Math.round(elapsed)}s`,
      },
      action: { kind: 'abort', serverId: observed.id, migrationId: migration.id },
    };
  }
  return { progress };
}

type Disposition =
  | { readonly start: 'live-migrate' | 'cold-migrate' }
  | { readonly wait: string }
  | { readonly blocker: Blocker };

/** What to do with an idle server found on the host. */
export function dispositionOf(server: ObservedServer, options: NovaEvacuationOptions): Disposition {
  const item = serverItem(server.id, server.name);
  if (server.taskState !== null) return { wait: `server ${server.name} is busy (task_state ${server.taskState})` };
  if (LIVE_MIGRATABLE_STATUSES.includes(server.status)) return { start: 'live-migrate' };
  if (server.status === 'SHUTOFF' && options.shutoffPolicy === 'cold-migrate') return { start: 'cold-migrate' };
  if (!SETTLED_UNMIGRATABLE_STATUSES.includes(server.status))
    return { wait: `server ${server.name} is ${server.status}` };
  const hint = server.status === 'SHUTOFF' ? ' (set shutoffPolicy cold-migrate to move it)' : '';
  return {
    blocker: {
      code: 'NotLiveMigratable',
      reason: `server ${server.name} (${server.id}) is ${server.status}: it cannot be live-migrated and is left where it is${hint}`,
      item,
    },
  };
}

/** The blocker for a server whose attempts are exhausted. */
export function failureBlocker(id: string, progress: ServerProgress): Blocker {
  const reason = progress.lastFailure ?? 'migration failed';
  const code: BlockerCode = /no valid host/i.test(reason) ? 'NoValidHost' : 'MigrationFailed';
  return {
    code,
    reason: `server ${progress.name} (${id}) could not be migrated after ${progress.attempts} attempt(s): ${reason}`,
    item: serverItem(id, progress.name),
  };
}

function freshProgress(server: ObservedServer): ServerProgress {
  return { name: server.name, phase: 'pending', attempts: 0, sinceMigrationId: 0 };
}

/** Plans one pass. */
export function planPass(input: PlannerInput): PassPlan {
  const servers: Record<string, ServerProgress> = { ...input.servers };
  const actions: NovaAction[] = [];
  let progressed = false;
  for (const [id, progress] of Object.entries(input.servers)) {
    if (!IN_FLIGHT.has(progress.phase)) continue;
    const step = advanceInFlight(progress, input.observation.inFlight[id] ?? null, input);
    if (step.progress.phase !== progress.phase || step.action) progressed = true;
    servers[id] = step.progress;
    if (step.action) actions.push(step.action);
  }
  const startable = collectStartable(input, servers);
  if (startable.changed) progressed = true;
  // Migrations someone else (or a pass that crashed before recording) started count against the limit too.
  const untracked = input.observation.onHost.filter(
    (s) => s.taskState === 'migrating' && !IN_FLIGHT.has(servers[s.id]?.phase ?? 'pending'),
  ).length;
  let inFlight = Object.values(servers).filter((p) => IN_FLIGHT.has(p.phase)).length + untracked;
  for (const candidate of startable.candidates) {
    if (inFlight >= input.options.maxConcurrentMigrations) break;
    actions.push({ kind: candidate.start, serverId: candidate.id });
    inFlight++;
    progressed = true;
  }
  const failed = Object.values(servers).filter((p) => p.phase === 'failed');
  const blockers = [
    ...startable.blockers,
    ...Object.entries(servers)
      .filter(([, p]) => p.phase === 'failed')
      .map(([id, p]) => failureBlocker(id, p)),
  ];
  const moved = Object.values(servers).filter((p) => p.phase === 'moved').length;
  const remaining = input.observation.onHost.filter((s) => servers[s.id]?.phase !== 'moved');
  return {
    servers,
    actions,
    blockers,
    failed,
    inFlight,
    moved,
    done: remaining.length === 0 && inFlight === 0,
    progressed,
    candidateIds: startable.candidates.map((c) => c.id),
  };
}

interface Startable {
  readonly candidates: { id: string; start: 'live-migrate' | 'cold-migrate' }[];
  readonly blockers: Blocker[];
  readonly changed: boolean;
}

/** Idle servers on the host, in a stable order, and the blockers among them. Updates `servers` in place. */
function collectStartable(input: PlannerInput, servers: Record<string, ServerProgress>): Startable {
  const candidates: Startable['candidates'] = [];
  const blockers: Blocker[] = [];
  let changed = false;
  const onHost = [...input.observation.onHost].sort((a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id));
  for (const server of onHost) {
    let progress = servers[server.id];
    if (progress && (IN_FLIGHT.has(progress.phase) || progress.phase === 'failed')) continue;
    if (progress?.phase === 'moved') changed = true; // it came back (or never left): move it again
    if (!progress || progress.phase === 'moved') {
      progress = { ...(progress ?? freshProgress(server)), phase: 'pending' };
      servers[server.id] = progress;
    }
    const disposition = dispositionOf(server, input.options);
    if ('start' in disposition) candidates.push({ id: server.id, start: disposition.start });
    else if ('blocker' in disposition) blockers.push(disposition.blocker);
  }
  return { candidates, blockers, changed };
}
