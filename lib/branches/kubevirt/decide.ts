/**
 * One VMI on the node, one decision: follow the migration moving it, ask for a migration (or, with
 * the opt-in, a restart), wait, or report a blocker. Pure; the pass planner (planner.ts) then hands
 * out the free migration slots and writes the progress.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { Blocker, PlanItem } from '../../model/plan.ts';
import { classifyVmi, effectiveStrategy, restartVerdict, unmigratableReason, type VmiClass } from './classify.ts';
import { attemptOf, failureReasonOf, type VmiMigrations } from './migrations.ts';
import {
  type KubeVirtOptions,
  type KubeVirtSettings,
  keyOf,
  type MigrationState,
  migrationMaker,
  type VirtualMachine,
  type Vmi,
  type Vmim,
  type VmiProgress,
} from './model.ts';
import { ownerVmName } from './observe.ts';

export interface DecideContext {
  readonly nodeName: string;
  readonly settings: KubeVirtSettings;
  readonly options: KubeVirtOptions;
  readonly now: Date;
  readonly migrations: VmiMigrations | undefined;
  readonly previous: VmiProgress | undefined;
  /** The VMI's active launcher pod on the node, if any. */
  readonly launcherPod: V1Pod | undefined;
  /** The owning VirtualMachine, when the restart opt-in looked it up. */
  readonly owner: VirtualMachine | undefined;
}

export interface Decision {
  /** The VMI's progress if nothing is started for it in this pass. */
  readonly progress: VmiProgress;
  /** It asks for a migration (a free slot decides), or a restart (its launcher pod is evicted). */
  readonly wants?: 'migrate' | 'restart';
  readonly blocker?: Blocker;
  /** Waited for, a blocker only when the evacuation gives up (External). */
  readonly waiting?: Blocker;
}

export function itemOf(vmi: Vmi): PlanItem {
  return { kind: 'VirtualMachineInstance', uid: vmi.metadata.uid, name: keyOf(vmi) };
}

/** Seconds to wait after failed attempt `attempt` (1-based): the base, doubling, at most 10 minutes. */
export function retryDelaySeconds(options: KubeVirtOptions, attempt: number): number {
  return Math.min(600, options.retryBackoffSeconds * 2 ** Math.max(0, attempt - 1));
}

function base(vmi: Vmi, ctx: DecideContext): VmiProgress {
  const previous = ctx.previous;
  return {
    name: keyOf(vmi),
    strategy: effectiveStrategy(vmi, ctx.settings),
    status: 'waiting',
    attempts: Math.max(previous?.attempts ?? 0, ...(ctx.migrations?.own ?? []).map(attemptOf)),
    sourceNode: ctx.nodeName,
    ...(previous?.lastFailure ? { lastFailure: previous.lastFailure } : {}),
    ...(previous?.lastFailedMigration ? { lastFailedMigration: previous.lastFailedMigration } : {}),
  };
}

/**
 * Where a migration stands, as KubeVirt reports it: the VMI's `status.migrationState` while it is this
 * migration's (the hand-off writes the target node, the source the start of the transfer), else the
 * state KubeVirt copies onto the migration once it is final.
 */
export function migrationStateOf(vmim: Vmim, vmi: Vmi | undefined): MigrationState | undefined {
  const onVmi = vmi?.status?.migrationState;
  const uid = vmim.metadata.uid;
  if (onVmi && uid && onVmi.migrationUid === uid) return onVmi;
  return vmim.status?.migrationState;
}

/** The migration moving the VMI now, recorded for people (phase, source → target, since when). */
export function following(
  progress: VmiProgress,
  vmim: Vmim,
  ctx: Pick<DecideContext, 'previous' | 'now'> & { readonly vmi?: Vmi },
): VmiProgress {
  const state = migrationStateOf(vmim, ctx.vmi);
  const same = ctx.previous?.migration === vmim.metadata.name;
  // First seen already under way (after a crash, a continuation, someone else's migration): it began
  // when KubeVirt started the transfer, or when it was created — not when drainbridge first looked.
  const startedAt =
    (same ? ctx.previous?.startedAt : undefined) ??
    state?.startTimestamp ??
    vmim.metadata.creationTimestamp ??
    ctx.now.toISOString();
  const targetNode = state?.targetNode ?? (same ? ctx.previous?.targetNode : undefined);
  return {
    ...progress,
    status: 'migrating',
    migration: vmim.metadata.name,
    migrationBy: migrationMaker(vmim),
    migrationPhase: vmim.status?.phase || 'Pending',
    ...(state?.sourceNode ? { sourceNode: state.sourceNode } : {}),
    ...(targetNode ? { targetNode } : {}),
    startedAt,
  };
}

/** drainbridge's last attempt failed: retry after the backoff, or give up once the attempts are spent. */
function afterFailure(vmi: Vmi, progress: VmiProgress, failed: Vmim, ctx: DecideContext): Decision {
  // KubeVirt marks the migration Failed before it copies the VMI's final state onto it: read the VMI's.
  const state = migrationStateOf(failed, vmi);
  const reason = failureReasonOf(state);
  const same = ctx.previous?.migration === failed.metadata.name;
  const endedAt = state?.endTimestamp ?? (same ? ctx.previous?.endedAt : undefined) ?? ctx.now.toISOString();
  const recorded: VmiProgress = {
    ...progress,
    migration: failed.metadata.name,
    migrationBy: 'drainbridge',
    migrationPhase: 'Failed',
    lastFailure: reason,
    lastFailedMigration: failed.metadata.name,
    endedAt,
    ...(same && ctx.previous?.startedAt ? { startedAt: ctx.previous.startedAt } : {}),
  };
  if (progress.attempts >= ctx.options.maxAttempts) {
    const note = `VMI ${keyOf(vmi)}: ${progress.attempts} live migration(s) failed, the last (${failed.metadata.name}) with: ${reason}; it stays running on node ${ctx.nodeName}`;
    return {
      progress: { ...recorded, status: 'blocked', note },
      blocker: { code: 'MigrationFailed', reason: note, item: itemOf(vmi) },
    };
  }
  const retryAt = new Date(Date.parse(endedAt) + retryDelaySeconds(ctx.options, progress.attempts) * 1000);
  if (ctx.now < retryAt) return { progress: { ...recorded, status: 'retry-wait', retryAt: retryAt.toISOString() } };
  return { progress: { ...recorded, status: 'waiting', note: 'waiting for a free migration slot' }, wants: 'migrate' };
}

function unmigratable(
  vmi: Vmi,
  cls: Extract<VmiClass, { kind: 'unmigratable' }>,
  progress: VmiProgress,
  ctx: DecideContext,
): Decision {
  const optIn = ctx.options.restartUnmigratable;
  const verdict = optIn ? restartVerdict(vmi, cls, { vmName: ownerVmName(vmi), vm: ctx.owner }) : undefined;
  if (verdict?.restart && ctx.launcherPod) {
    const restarting = ctx.previous?.status === 'restarting' && Boolean(ctx.launcherPod.metadata?.deletionTimestamp);
    return restarting ? { progress: { ...progress, status: 'restarting' } } : { progress, wants: 'restart' };
  }
  const because = verdict && !verdict.restart ? verdict.because : 'its launcher pod is not running';
  const note = unmigratableReason(vmi, ctx.nodeName, cls, { enabled: optIn, because });
  return {
    progress: { ...progress, status: 'blocked', note },
    blocker: { code: 'NotLiveMigratable', reason: note, item: itemOf(vmi) },
  };
}

/** What to do about one (selected, not final) VMI on the node. */
export function decideVmi(vmi: Vmi, ctx: DecideContext): Decision {
  const progress = base(vmi, ctx);
  const current = ctx.migrations?.current;
  if (current) return { progress: following(progress, current, { ...ctx, vmi }) };
  const cls = classifyVmi(vmi, ctx.settings);
  if (cls.kind === 'leaving') return { progress: { ...progress, note: 'stopping or being deleted' } };
  if (cls.kind === 'starting') return { progress: { ...progress, note: 'not running yet' } };
  if (cls.kind === 'external') {
    const note = `VMI ${keyOf(vmi)} has evictionStrategy External: waiting for its external controller to move it off node ${ctx.nodeName}`;
    return {
      progress: { ...progress, status: 'external', note },
      waiting: { code: 'Other', reason: note, item: itemOf(vmi) },
    };
  }
  if (cls.kind === 'unmigratable') return unmigratable(vmi, cls, progress, ctx);
  const last = ctx.migrations?.own.at(-1);
  if (last?.status?.phase === 'Failed') return afterFailure(vmi, progress, last, ctx);
  if (last?.status?.phase === 'Succeeded') {
    // KubeVirt moves the VMI's nodeName after the migration ends (its handler and controller take two steps).
    return { progress: { ...following(progress, last, { ...ctx, vmi }), status: 'migrating' } };
  }
  if (!last && ctx.previous?.status === 'blocked' && progress.attempts >= ctx.options.maxAttempts) {
    // The failed migrations were garbage-collected: the attempts stay spent.
    const note = ctx.previous.note ?? `VMI ${keyOf(vmi)}: its live migrations failed`;
    return { progress: ctx.previous, blocker: { code: 'MigrationFailed', reason: note, item: itemOf(vmi) } };
  }
  return { progress: { ...progress, note: 'waiting for a free migration slot' }, wants: 'migrate' };
}
