/**
 * The branch's progress for people: counts for the Evacuation record and progress lines, one line per
 * VMI in flight (`vms/app-1 Running node-1 → node-2 (40 s)`), and what became of VMIs that left the
 * node (moved by a live migration, or left otherwise). Pure.
 */
import type { BranchProgress, VmMove } from '../../model/pass.ts';
import { followWait, type ItemTimeline, type WaitKey } from '../../model/timeline.ts';
import type { VmiMigrations } from './migrations.ts';
import type { KubeVirtBranchState, VmiProgress } from './model.ts';

/** Seconds since an ISO instant, at `now` (whole seconds). */
function secondsSince(iso: string | undefined, now: Date): number | undefined {
  if (!iso) return undefined;
  return Math.max(0, Math.round((now.getTime() - Date.parse(iso)) / 1000));
}

/** The one-line account of a VMI in flight, or undefined when it is not. */
export function inFlightLine(progress: VmiProgress, now: Date): string | undefined {
  const elapsed = secondsSince(progress.startedAt, now);
  const since = elapsed === undefined ? '' : ` (${elapsed} s)`;
  if (progress.status === 'migrating') {
    const by =
      progress.migrationBy && progress.migrationBy !== 'drainbridge' ? `, ${progress.migrationBy}'s migration` : '';
    return `${progress.name} ${progress.migrationPhase ?? 'Pending'} ${progress.sourceNode} → ${progress.targetNode ?? '?'}${since}${by}`;
  }
  if (progress.status === 'restarting') return `${progress.name} restarting elsewhere${since}`;
  if (progress.status === 'retry-wait')
    return `${progress.name} retries at ${progress.retryAt} (${progress.lastFailure})`;
  return undefined;
}

/** Counts (skipped excluded: the caller knows them) and in-flight lines. */
export function summary(state: KubeVirtBranchState, now: Date): { progress: BranchProgress; detail: string[] } {
  const all = Object.values(state.vmis);
  const detail = all.flatMap((progress) => inFlightLine(progress, now) ?? []);
  return {
    progress: {
      total: all.length,
      moved: all.filter((p) => p.status === 'moved' || p.status === 'left').length,
      inFlight: all.filter((p) => p.status === 'migrating' || p.status === 'restarting').length,
      skipped: 0,
    },
    detail,
  };
}

/** A VMI that is no longer on the node: moved by a (the last) successful migration off it, else left. */
export function departed(
  previous: VmiProgress,
  byVmi: ReadonlyMap<string, VmiMigrations>,
  at: { readonly nodeName: string; readonly now: Date },
): VmiProgress {
  if (previous.status === 'moved' || previous.status === 'left') return previous;
  const own = byVmi.get(previous.name)?.own ?? [];
  const succeeded = [...own].reverse().find((vmim) => vmim.status?.phase === 'Succeeded');
  const { note: _note, retryAt: _retryAt, ...rest } = previous;
  const endedAt = succeeded?.status?.migrationState?.endTimestamp ?? at.now.toISOString();
  if (succeeded || previous.status === 'migrating') {
    const target = succeeded?.status?.migrationState?.targetNode ?? previous.targetNode;
    return {
      ...rest,
      status: 'moved',
      migrationPhase: 'Succeeded',
      ...(succeeded ? { migration: succeeded.metadata.name, migrationBy: 'drainbridge' as const } : {}),
      ...(target ? { targetNode: target } : {}),
      endedAt,
    };
  }
  return { ...rest, status: 'left', endedAt, note: `no longer on node ${at.nodeName}` };
}

/** Every tracked VMI's move, for the `Evacuation Progress` event. */
export function vmMoves(state: KubeVirtBranchState, now: Date): VmMove[] {
  return Object.values(state.vmis).map((progress) => {
    const end = progress.endedAt && progress.status !== 'migrating' ? new Date(progress.endedAt) : now;
    const elapsed = secondsSince(progress.startedAt, end);
    return {
      name: progress.name,
      status: progress.status,
      attempts: progress.attempts,
      ...(progress.migration ? { migration: progress.migration } : {}),
      ...(progress.migrationPhase ? { phase: progress.migrationPhase } : {}),
      sourceNode: progress.sourceNode,
      ...(progress.targetNode ? { targetNode: progress.targetNode } : {}),
      ...(elapsed !== undefined ? { elapsedSeconds: elapsed } : {}),
    };
  });
}

/** What a VMI waits for in `status`, as a span's key (undefined: it waits for nothing, or moves). */
function waitOfVmi(progress: VmiProgress): WaitKey | undefined {
  const reason = progress.note ?? progress.lastFailure;
  const why = reason !== undefined ? { reason } : {};
  switch (progress.status) {
    case 'retry-wait':
      return { code: 'Retry', ...why };
    case 'blocked':
      return { code: 'Blocked', ...why };
    case 'external':
      return { code: 'External', ...why };
    case 'waiting':
      return progress.note ? { code: 'Waiting', ...why } : undefined;
    default:
      return undefined;
  }
}

/**
 * The state with each VMI's timeline brought up to `now`: when its first move started (`askedAt`), when
 * it left (`goneAt`), and what it waited for between. It changes only where a VMI's status changed,
 * which the pass writes anyway. Pure.
 */
export function withTimeline(previous: KubeVirtBranchState, next: KubeVirtBranchState, now: Date): KubeVirtBranchState {
  const at = now.toISOString();
  let changed = false;
  const vmis: Record<string, VmiProgress> = {};
  for (const [uid, progress] of Object.entries(next.vmis)) {
    const stamped = stampVmi(previous.vmis[uid], progress, at);
    changed ||= stamped !== progress;
    vmis[uid] = stamped;
  }
  return changed ? { ...next, vmis } : next;
}

const MOVING: readonly VmiProgress['status'][] = ['migrating', 'restarting'];
const GONE: readonly VmiProgress['status'][] = ['moved', 'left'];

/** One VMI's progress with its timeline at `at`; the same object when nothing in it changed. */
function stampVmi(before: VmiProgress | undefined, progress: VmiProgress, at: string): VmiProgress {
  const moving = MOVING.includes(progress.status);
  const gone = GONE.includes(progress.status);
  // drainbridge's clock, when it observes the move and the departure: a migration's start and end
  // timestamps are KubeVirt's (the cluster's clock), and mixed with drainbridge's a timeline could
  // show an end before its start. (startedAt/endedAt keep KubeVirt's, for the in-flight lines.)
  const firstMove = moving || gone ? at : undefined;
  const askedAt = before?.askedAt ?? progress.askedAt ?? firstMove;
  const goneAt = gone ? (before?.goneAt ?? progress.goneAt ?? at) : undefined;
  const waits = followWait(before?.waits ?? progress.waits, waitOfVmi(progress), at);
  const same = askedAt === progress.askedAt && goneAt === progress.goneAt && waits === progress.waits;
  if (same) return progress;
  return {
    ...progress,
    ...(askedAt ? { askedAt } : {}),
    ...(goneAt ? { goneAt } : {}),
    ...(waits?.length ? { waits } : {}),
  };
}

/** Where a VMI stands, as a timeline row says it. */
function itemStateOf(status: VmiProgress['status']): ItemTimeline['state'] {
  if (GONE.includes(status)) return 'gone';
  if (MOVING.includes(status)) return 'moving';
  return status === 'blocked' ? 'blocked' : 'waiting';
}

/** The branch's VMIs as timelines. Pure. */
export function vmiTimelines(branch: string, state: KubeVirtBranchState): ItemTimeline[] {
  return Object.entries(state.vmis).map(
    ([uid, progress]): ItemTimeline => ({
      kind: 'vmi',
      branch,
      id: uid,
      name: progress.name,
      state: itemStateOf(progress.status),
      ...(progress.askedAt ? { askedAt: progress.askedAt } : {}),
      ...(progress.goneAt ? { goneAt: progress.goneAt } : {}),
      source: progress.sourceNode,
      ...(progress.targetNode ? { target: progress.targetNode } : {}),
      attempts: progress.attempts,
      waits: progress.waits ?? [],
      blockers: [],
    }),
  );
}
