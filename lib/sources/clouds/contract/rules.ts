/**
 * What a notice policy rule is, and the helpers the clouds' descriptors write their default rules with.
 * A leaf: the descriptors (lib/sources/clouds/<cloud>/descriptor.ts) and policy.ts import it, it imports neither.
 */
import type { NoticeAction } from '../../../model/notice.ts';
import type { DrainOptions } from '../../../model/request.ts';

/**
 * How the notice's time is used:
 *  - `not-before`: it becomes the request's `notBefore` (the workflow starts early enough to finish
 *    before it) and the notice's end, when given, the request's `deadline`;
 *  - `deadline`: the request starts at once and gives up at that time (notices that leave minutes or
 *    seconds, where waiting for anything would be wrong).
 */
export const NOTICE_TIMINGS = ['not-before', 'deadline'] as const;
export type NoticeTiming = (typeof NOTICE_TIMINGS)[number];

export interface NoticeRule {
  readonly action: NoticeAction;
  readonly timing: NoticeTiming;
  /** Azure only: POST StartRequests once every resource the event lists is on a node drainbridge drained for it. */
  readonly approveWhenDrained: boolean;
  /**
   * Drain options the request carries, set by the operator (DRAINBRIDGE_NOTICE_POLICY, the node agent's drain
   * flags): they win over the evacuating process's settings and the origin's defaults, field by field.
   */
  readonly drain: Partial<DrainOptions>;
  /** Why the default is what it is (shown by `plan`). */
  readonly why: string;
}

/**
 * The built-in rules carry no drain options: the request's origin (aws, azure, gcp) decides them as AWS
 * NTH does (lib/model/drain-defaults.ts; docs/drain-defaults.md), below the operator's settings. An
 * operator who wants kubectl's refusal back for a notice type whose node comes back (a reboot, a live
 * migration) sets it here, e.g. `{"aws":{"instance-reboot":{"drain":{"deleteEmptyDirData":false}}}}`.
 */
const ORIGIN_DEFAULTS: Partial<DrainOptions> = Object.freeze({});

export function evacuate(timing: NoticeTiming, why: string): NoticeRule {
  return Object.freeze({ action: 'evacuate', timing, approveWhenDrained: false, drain: ORIGIN_DEFAULTS, why });
}

/** Azure: the event is approved once drainbridge drained every node it lists. */
export function approved(rule: NoticeRule): NoticeRule {
  return Object.freeze({ ...rule, approveWhenDrained: true });
}

export function ignore(why: string): NoticeRule {
  return Object.freeze({
    action: 'ignore',
    timing: 'not-before',
    approveWhenDrained: false,
    drain: ORIGIN_DEFAULTS,
    why,
  });
}
