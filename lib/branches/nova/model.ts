/**
 * The data the Nova evacuation passes share: options, the progress persisted between passes, and
 * what one pass observes. Plain JSON, so the cluster-backed ProgressStore can hold it.
 */
import { z } from 'zod';
import { followWait, type ItemTimeline, SPANS_SCHEMA, type Span } from '../../model/timeline.ts';
import type { RecordFormat } from '../../util/json-record.ts';

/** Options of the Nova branch, with their defaults. */
export const novaEvacuationOptionsSchema = z.strictObject({
  /**
   * Live migrations in flight at once from the source host. Default 1: Nova's own default
   * `max_concurrent_live_migrations`, which the API cannot tell us; more only queue on the compute.
   */
  maxConcurrentMigrations: z.number().int().min(1).max(50).default(1),
  /** Attempts per server (the first included) before it is a blocker. */
  maxAttempts: z.number().int().min(1).max(10).default(3),
  /**
   * Abort a migration still running after this many seconds; the attempt counts as failed. A server Nova
   * still has migrating at twice this is given up on (planner.ts `giveUpAfterSeconds`).
   */
  abortAfterSeconds: z.number().int().min(1).default(900),
  /** Force-complete (pause the guest to converge) a migration running this long; 0 never. */
  forceCompleteAfterSeconds: z.number().int().min(0).default(0),
  /** A migration whose record has not appeared this long after the 202 counts as failed. */
  recordGraceSeconds: z.number().int().min(1).default(60),
  /** What to do with SHUTOFF servers: leave them as blockers (default) or cold-migrate and confirm. */
  shutoffPolicy: z.enum(['block', 'cold-migrate']).default('block'),
});
export type NovaEvacuationOptions = z.infer<typeof novaEvacuationOptionsSchema>;

export const DEFAULT_NOVA_OPTIONS: NovaEvacuationOptions = novaEvacuationOptionsSchema.parse({});

/** Where one server stands. `failed` is terminal for this evacuation (attempts exhausted). */
export type ServerPhase = 'pending' | 'live-migrating' | 'cold-migrating' | 'moved' | 'failed';

export interface ServerProgress {
  readonly name: string;
  readonly phase: ServerPhase;
  /** Attempts started so far. */
  readonly attempts: number;
  /** Highest migration id of the server before the current attempt: the new record has a larger id. */
  readonly sinceMigrationId: number;
  /** The current attempt's migration record, once seen. */
  readonly migrationId?: number;
  /** When the current attempt was requested (ISO 8601). */
  readonly startedAt?: string;
  readonly abortRequested?: boolean;
  /** When the abort was asked for (ISO 8601): the give-up deadline leaves it its own timeout's worth of time. */
  readonly abortRequestedAt?: string;
  readonly forceCompleteRequested?: boolean;
  readonly confirmRequested?: boolean;
  /** Nova's reason for the last failed attempt. */
  readonly lastFailure?: string;
  /** Where the server went. */
  readonly destination?: string;
  /** Timeline (`withServerTimelines`): its first migration was asked for, it was found on another host. */
  readonly askedAt?: string;
  readonly goneAt?: string;
  /** What it waited for: the retry after a failed attempt, attempts exhausted (from–to). */
  readonly waits?: readonly Span[];
}

/** The progress without what was asked of Nova for the current attempt (abort, force-complete, confirm). */
export function withoutRequests(progress: ServerProgress): ServerProgress {
  const {
    abortRequested: _a,
    abortRequestedAt: _at,
    forceCompleteRequested: _f,
    confirmRequested: _c,
    ...rest
  } = progress;
  return rest;
}

/** The Nova branch's progress record. */
export interface NovaBranchState {
  readonly host: string;
  readonly serviceId: string;
  /** True when drainbridge disabled the service (and so may enable it on restore). */
  readonly disabledByUs: boolean;
  /** The reason someone else had disabled the service with before we came, reported on restore. */
  readonly foreignDisabledReason?: string;
  readonly servers: Readonly<Record<string, ServerProgress>>;
}

const Instant = z.iso.datetime({ offset: true });

const SERVER_PROGRESS = z.looseObject({
  name: z.string(),
  phase: z.enum(['pending', 'live-migrating', 'cold-migrating', 'moved', 'failed']),
  attempts: z.number().int().min(0),
  sinceMigrationId: z.number().int(),
  migrationId: z.number().int().optional(),
  startedAt: Instant.optional(),
  abortRequested: z.boolean().optional(),
  abortRequestedAt: Instant.optional(),
  forceCompleteRequested: z.boolean().optional(),
  confirmRequested: z.boolean().optional(),
  lastFailure: z.string().optional(),
  destination: z.string().optional(),
  // The timeline, added beside version 1's fields, optional: older records read, older builds ignore it.
  askedAt: Instant.optional(),
  goneAt: Instant.optional(),
  waits: SPANS_SCHEMA.optional(),
});

/** The Nova branch's state as the pass writes it (in the Evacuation record's `status.branches.nova.state`). */
export const NOVA_STATE_FORMAT: RecordFormat<NovaBranchState> = {
  what: 'Nova branch state (Evacuation status.branches.nova.state)',
  versions: [
    z.looseObject({
      host: z.string().min(1),
      serviceId: z.string(),
      disabledByUs: z.boolean(),
      foreignDisabledReason: z.string().optional(),
      servers: z.record(z.string(), SERVER_PROGRESS),
    }),
  ],
};

/** What one pass saw of a server. */
export interface ObservedServer {
  readonly id: string;
  readonly name: string;
  readonly status: string;
  readonly host: string | null;
  readonly taskState: string | null;
  /** The newest migration record of the current attempt (id above `sinceMigrationId`), if any. */
  readonly migration?: { readonly id: number; readonly status: string; readonly destCompute: string | null };
  /** Nova's reason when that migration failed (instance-action event details). */
  readonly failure?: string;
}

export interface Observation {
  /** Servers the fresh host listing returned (all projects, exact host). */
  readonly onHost: readonly ObservedServer[];
  /** Servers with a migration in flight, observed one by one; `null` when the server is gone. */
  readonly inFlight: Readonly<Record<string, ObservedServer | null>>;
}

/** The ownership token drainbridge writes into `disabled_reason`. */
export function ownershipToken(requestId: string): string {
  return `drainbridge:${requestId}:`;
}

/** Whether a `disabled_reason` was written by drainbridge for this request. */
export function isOurDisable(reason: string | null | undefined, requestId: string): boolean {
  return typeof reason === 'string' && reason.startsWith(ownershipToken(requestId));
}

export const LIVE_MIGRATABLE_STATUSES: readonly string[] = ['ACTIVE', 'PAUSED'];
/**
 * Statuses that stay until someone acts: such a server cannot be live-migrated and is a blocker.
 * Any other status (BUILD, MIGRATING, RESIZE, REBOOT, …) passes on its own and is waited for.
 */
export const SETTLED_UNMIGRATABLE_STATUSES: readonly string[] = [
  'SHUTOFF',
  'ERROR',
  'SUSPENDED',
  'SHELVED',
  'SHELVED_OFFLOADED',
  'RESCUE',
  'SOFT_DELETED',
  'UNKNOWN',
];
export const FINISHED_MIGRATION_STATUSES: readonly string[] = ['completed', 'finished', 'confirmed'];
export const FAILED_MIGRATION_STATUSES: readonly string[] = ['error', 'failed', 'cancelled'];
/** Statuses `DELETE /servers/{id}/migrations/{mid}` accepts (queued/preparing from 2.65). */
export const ABORTABLE_MIGRATION_STATUSES: readonly string[] = ['running', 'queued', 'preparing'];

/** What a server waits for in its phase, as a span's key: a retry after a failure, or the failure for good. */
function waitOfServer(progress: ServerProgress) {
  const reason = progress.lastFailure !== undefined ? { reason: progress.lastFailure } : {};
  if (progress.phase === 'failed') return { code: 'MigrationFailed', ...reason };
  if (progress.phase === 'pending' && progress.attempts > 0 && progress.lastFailure)
    return { code: 'Retry', ...reason };
  return undefined;
}

/**
 * The servers with their timelines brought up to `now`: when the first migration was asked for, when
 * the server was found elsewhere, what it waited for between. Changes only where a server's phase did,
 * which the pass writes anyway. Pure.
 */
export function withServerTimelines(
  previous: Readonly<Record<string, ServerProgress>>,
  next: Readonly<Record<string, ServerProgress>>,
  now: Date,
): Record<string, ServerProgress> {
  const at = now.toISOString();
  const servers: Record<string, ServerProgress> = {};
  for (const [id, progress] of Object.entries(next)) servers[id] = stampServer(previous[id], progress, at);
  return servers;
}

const isMoving = (progress: ServerProgress) =>
  progress.phase === 'live-migrating' || progress.phase === 'cold-migrating';

function stampServer(before: ServerProgress | undefined, progress: ServerProgress, at: string): ServerProgress {
  const firstMove = isMoving(progress) ? (progress.startedAt ?? at) : undefined;
  const askedAt = before?.askedAt ?? progress.askedAt ?? firstMove;
  // A server that came back (or never left) and is moved again is gone when it leaves again.
  const stillGone = before?.phase === 'moved' ? before.goneAt : undefined;
  const goneAt = progress.phase === 'moved' ? (stillGone ?? at) : undefined;
  const waits = followWait(before?.waits ?? progress.waits, waitOfServer(progress), at);
  const { goneAt: _gone, ...rest } = progress;
  return {
    ...rest,
    ...(askedAt ? { askedAt } : {}),
    ...(goneAt ? { goneAt } : {}),
    ...(waits?.length ? { waits } : {}),
  };
}

function serverState(progress: ServerProgress): ItemTimeline['state'] {
  if (progress.phase === 'moved') return 'gone';
  if (progress.phase === 'failed') return 'failed';
  return isMoving(progress) ? 'moving' : 'waiting';
}

/** The branch's servers as timelines (`host`: the compute host they leave). Pure. */
export function serverTimelines(branch: string, state: NovaBranchState): ItemTimeline[] {
  return Object.entries(state.servers).map((entry): ItemTimeline => {
    const [id, progress] = entry;
    const itemState = serverState(progress);
    return {
      kind: 'server',
      branch,
      id,
      name: progress.name,
      state: itemState,
      ...(progress.askedAt ? { askedAt: progress.askedAt } : {}),
      ...(progress.goneAt ? { goneAt: progress.goneAt } : {}),
      source: state.host,
      ...(progress.destination ? { target: progress.destination } : {}),
      attempts: progress.attempts,
      waits: progress.waits ?? [],
      blockers: [],
    };
  });
}
