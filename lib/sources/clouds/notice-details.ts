/**
 * Notices → the bus contracts: `Maintenance Requested` when a notice that the policy evacuates for
 * appears, `Maintenance Ended` when it is over or gone. Pure; the request id is the caller's
 * (lib/sources/clouds/ids.ts), so every producer of one notice on one node agrees on it.
 */
import type { MaintenanceEndedEvent, MaintenanceRequestedEvent } from '../../bus/contracts/contracts.ts';
import { describeNotice, type Notice } from './notice.ts';
import type { NoticeRule } from './policy.ts';

export interface EventContext {
  readonly requestId: string;
  readonly nodeName: string;
  /** Who asks: `drainbridge-node-agent/<node>`, `drainbridge-aws-notices`. */
  readonly requester: string;
  readonly now: Date;
  /** The provider's revision of the notice, when the caller has one (AWS Health's lastUpdatedTime); else `NotBefore <time>`. */
  readonly revisionKey?: string;
  /** When the provider sent this version (an EventBridge event's `time`: resends are ordered by it); else `now`. */
  readonly revisionAt?: Date;
}

function later(time: string | undefined, than: number): string | undefined {
  return time !== undefined && Date.parse(time) > than ? time : undefined;
}

/** `notBefore` and `deadline` of the request, from the notice's times and the rule's timing. */
export function requestTimes(notice: Notice, rule: NoticeRule, now: Date): { notBefore?: string; deadline?: string } {
  if (rule.timing === 'deadline') {
    // Start at once; give up when the impact comes (a past impact time is no deadline).
    const deadline = later(notice.notBefore, now.getTime());
    return deadline ? { deadline } : {};
  }
  const notBefore = notice.notBefore;
  const floor = Math.max(now.getTime(), notBefore ? Date.parse(notBefore) : 0);
  const deadline = later(notice.notAfter, floor);
  return { ...(notBefore ? { notBefore } : {}), ...(deadline ? { deadline } : {}) };
}

function noticeField(notice: Notice, rule: NoticeRule): NonNullable<MaintenanceRequestedEvent['notice']> {
  return {
    provider: notice.provider,
    source: notice.source,
    eventId: notice.eventId,
    eventType: notice.eventType,
    action: rule.action,
  };
}

/** The revision key of a notice read in a versioned document: `DocumentIncarnation 7, NotBefore …`. */
export function documentRevisionKey(versionName: string, version: string, notice: Notice): string {
  return `${versionName} ${version}, NotBefore ${notice.notBefore ?? 'none'}`;
}

/**
 * The notice's revision: the provider's own key (or the start it names: for EC2 the pair EventId +
 * NotBefore, the event id being the request's) and when this publisher saw it. Each publish of a request
 * carries one, so a re-publish after a reschedule is later than the first (lib/progress/reschedule.ts).
 */
export function revisionOf(notice: Notice, context: EventContext): NonNullable<MaintenanceRequestedEvent['revision']> {
  const key = context.revisionKey ?? `NotBefore ${notice.notBefore ?? 'none'}`;
  return { key: key.slice(0, 512), at: (context.revisionAt ?? context.now).toISOString() };
}

/** The Maintenance Requested detail for a notice the policy evacuates for. */
export function requestedEvent(notice: Notice, rule: NoticeRule, context: EventContext): MaintenanceRequestedEvent {
  const drain = Object.keys(rule.drain).length > 0 ? { drain: { ...rule.drain } } : {};
  return {
    version: '1',
    requestId: context.requestId,
    requester: context.requester,
    origin: notice.provider,
    target: { nodeName: context.nodeName },
    reason: describeNotice(notice),
    ...requestTimes(notice, rule, context.now),
    ...drain,
    notice: noticeField(notice, rule),
    revision: revisionOf(notice, context),
  };
}

/**
 * The Maintenance Ended detail. `notice` is the notice as last seen, when the agent still knows it
 * (after a restart it may only know the request id, from the node's ledger).
 */
export function endedEvent(
  context: EventContext & { readonly provider: Notice['provider']; readonly unreadableSince?: string },
  why: string,
  last?: { readonly notice: Notice; readonly rule: NoticeRule },
): MaintenanceEndedEvent {
  return {
    version: '1',
    requestId: context.requestId,
    requester: context.requester,
    origin: context.provider,
    target: { nodeName: context.nodeName },
    reason: why.length <= 1024 ? why : `${why.slice(0, 1021)}...`,
    ...(last ? { notice: noticeField(last.notice, last.rule) } : {}),
    ...(context.unreadableSince ? { unreadableSince: context.unreadableSince } : {}),
  };
}
