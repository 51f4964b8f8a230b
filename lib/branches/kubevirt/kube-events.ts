/**
 * Kubernetes Events on the VMIs drainbridge moves, so that `kubectl describe vmi` tells what happened
 * to a VM: its migration started, it moved, a migration failed (and when the next follows), it cannot
 * leave without being shut down, it waits for its external controller, the opt-in restart. One Event
 * per change of a VMI's progress (never one per pass); written best effort.
 */
import type { CoreV1Event } from '@kubernetes/client-node';
import type { KubeClient } from '../../clients/kube/client.ts';
import type { KubeVirtBranchState, KubeVirtOptions, VmiProgress } from './model.ts';
import { KUBEVIRT_GROUP, KUBEVIRT_VERSION } from './model.ts';

export const VMI_EVENT_REASONS = [
  'MigrationStarted',
  'Migrated',
  'MigrationFailed',
  'NotLiveMigratable',
  'WaitingForExternalController',
  'Restarting',
  // Restore and abort (cancel.ts): drainbridge's migration aborted; someone else's left running.
  'MigrationAborted',
  'MigrationLeftRunning',
] as const;

export interface VmiEvent {
  readonly vmi: { readonly namespace: string; readonly name: string; readonly uid: string };
  readonly reason: (typeof VMI_EVENT_REASONS)[number];
  readonly message: string;
  readonly type: 'Normal' | 'Warning';
}

function refOf(uid: string, progress: VmiProgress): VmiEvent['vmi'] {
  const [namespace = '', name = ''] = progress.name.split('/');
  return { namespace, name, uid };
}

function seconds(from: string | undefined, to: string | undefined): string {
  if (!from || !to) return '';
  return ` in ${Math.max(0, Math.round((Date.parse(to) - Date.parse(from)) / 1000))} s`;
}

type Context = { readonly nodeName: string; readonly requestId: string; readonly options: KubeVirtOptions };

/** A failed attempt, once per failed migration: what failed, and what follows. */
function failureEvent(next: VmiProgress, ctx: Context): Event {
  const max = ctx.options.maxAttempts;
  const then =
    next.status === 'blocked'
      ? `no attempts left (${next.attempts} of ${max}): the VM stays running on node ${ctx.nodeName}`
      : `it is tried again${next.retryAt ? ` at ${next.retryAt}` : ''}`;
  const message = `migration ${next.lastFailedMigration} failed: ${next.lastFailure}; ${then}`;
  return { reason: 'MigrationFailed', message, type: 'Warning' };
}

type Event = Pick<VmiEvent, 'reason' | 'message' | 'type'>;

/** The Events for one VMI's change of progress (a failure and the next attempt can come in one pass). */
function eventsOf(previous: VmiProgress | undefined, next: VmiProgress, ctx: Context): Event[] {
  const events: Event[] = [];
  if (next.lastFailedMigration && next.lastFailedMigration !== previous?.lastFailedMigration) {
    events.push(failureEvent(next, ctx));
  }
  if (next.status === 'migrating' && next.migrationBy === 'drainbridge' && previous?.migration !== next.migration) {
    const message = `drainbridge migration ${next.migration} moves the VM off node ${ctx.nodeName} (attempt ${next.attempts} of ${ctx.options.maxAttempts}, request ${ctx.requestId})`;
    events.push({ reason: 'MigrationStarted', message, type: 'Normal' });
  }
  const other = previous?.status !== next.status ? statusEvent(next, ctx) : undefined;
  return other ? [...events, other] : events;
}

/** The Event for a VMI's new status, if it is one people should read. */
function statusEvent(next: VmiProgress, ctx: Context): Event | undefined {
  switch (next.status) {
    case 'moved': {
      const by = {
        drainbridge: "drainbridge's migration",
        kubevirt: "KubeVirt's evacuation migration",
        other: 'migration',
      }[next.migrationBy ?? 'other'];
      const message = `live-migrated off node ${next.sourceNode} to ${next.targetNode ?? 'another node'} by ${by} ${next.migration ?? '(unknown)'}${seconds(next.startedAt, next.endedAt)}`;
      return { reason: 'Migrated', message, type: 'Normal' };
    }
    case 'blocked':
      // A spent VMI's failure Event came with its last failed migration (above).
      return next.lastFailedMigration
        ? undefined
        : { reason: 'NotLiveMigratable', message: next.note ?? '', type: 'Warning' };
    case 'external':
      return { reason: 'WaitingForExternalController', message: next.note ?? '', type: 'Normal' };
    case 'restarting': {
      const message = `restart opted into (--kubevirt-restart-unmigratable): its launcher pod is evicted, the VM shuts down on node ${ctx.nodeName} and its VirtualMachine starts it on another node`;
      return { reason: 'Restarting', message, type: 'Warning' };
    }
    default:
      return undefined;
  }
}

/** The Events for the changes from the stored progress to `next`. Pure. */
export function eventsFor(
  ctx: Context & { readonly state: KubeVirtBranchState },
  next: KubeVirtBranchState,
): VmiEvent[] {
  const events: VmiEvent[] = [];
  for (const [uid, progress] of Object.entries(next.vmis)) {
    for (const event of eventsOf(ctx.state.vmis[uid], progress, ctx))
      events.push({ vmi: refOf(uid, progress), ...event });
  }
  return events;
}

function randomSuffix(): string {
  return Math.floor(Math.random() * 0xffff)
    .toString(16)
    .padStart(4, '0');
}

/** The Event object for a VMI. Pure; names are unique per VMI and instant. */
export function buildVmiEvent(event: VmiEvent, now: Date, sequence: number): CoreV1Event {
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: {
      name: `${event.vmi.name}.${now.getTime().toString(16)}${sequence}${randomSuffix()}`,
      namespace: event.vmi.namespace,
    },
    involvedObject: {
      apiVersion: `${KUBEVIRT_GROUP}/${KUBEVIRT_VERSION}`,
      kind: 'VirtualMachineInstance',
      namespace: event.vmi.namespace,
      name: event.vmi.name,
      uid: event.vmi.uid,
    },
    reason: event.reason,
    message: event.message,
    type: event.type,
    source: { component: 'drainbridge' },
    reportingComponent: 'drainbridge',
    reportingInstance: 'drainbridge',
    firstTimestamp: now,
    lastTimestamp: now,
    count: 1,
  };
}

/** Records the Events; best effort (an Event that cannot be written must not stop the evacuation). */
export async function recordVmiEvents(kube: KubeClient, events: readonly VmiEvent[], now: Date): Promise<number> {
  let failed = 0;
  for (const [index, event] of events.entries()) {
    try {
      await kube.createEvent(buildVmiEvent(event, now, index));
    } catch {
      failed++;
    }
  }
  return failed;
}
