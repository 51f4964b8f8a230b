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
  };
}

/**
 * The Maintenance Ended detail. `notice` is the notice as last seen, when the agent still knows it
 * (after a restart it may only know the request id, from the node's ledger).
 */
export function endedEvent(
  context: EventContext & { readonly provider: Notice['provider'] },
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
  };
}
