/**
 * What a notification says: the event, the node, the request, and for a blocked or failed evacuation
 * the blockers. The summary is one sentence a person reads in a chat channel.
 */

export const NOTIFICATION_EVENTS = [
  'EvacuationStarted',
  'EvacuationBlocked',
  'EvacuationFailed',
  'EvacuationSucceeded',
  'NodeRestored',
  /** The circuit breaker's `Admission Paused` bus event. */
  'AdmissionPaused',
  /** `Admission Resumed`: published by the first admission after `drainbridge resume`. */
  'AdmissionResumed',
] as const;
export type NotificationEvent = (typeof NOTIFICATION_EVENTS)[number];

export interface Notification {
  readonly event: NotificationEvent;
  /** The node concerned ('' for fleet-wide events such as AdmissionResumed). */
  readonly node: string;
  readonly requestId: string;
  readonly executionId: string;
  /** What stops the evacuation, one sentence each (blocked and failed). */
  readonly blockers: readonly string[];
  /** The error of a failed evacuation, why admission paused, or who resumed it and why it had paused. */
  readonly reason: string;
  /** ISO time the notification was made. */
  readonly time: string;
}

const HEADLINES: Record<NotificationEvent, string> = {
  EvacuationStarted: 'evacuation started',
  EvacuationBlocked: 'evacuation blocked',
  EvacuationFailed: 'evacuation FAILED',
  EvacuationSucceeded: 'evacuation succeeded',
  NodeRestored: 'node restored',
  AdmissionPaused: 'admission PAUSED',
  AdmissionResumed: 'admission resumed',
};

/** One line: `drainbridge: evacuation blocked on node-2 (request r-1): <blocker>; <blocker>`. */
export function summaryOf(notification: Notification): string {
  const on = notification.node ? ` on ${notification.node}` : '';
  const request = notification.requestId ? ` (request ${notification.requestId})` : '';
  const why = [notification.reason, ...notification.blockers].filter((part) => part !== '').join('; ');
  return `drainbridge: ${HEADLINES[notification.event]}${on}${request}${why ? `: ${why}` : ''}`;
}
