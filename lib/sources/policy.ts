/**
 * The notice policy: per provider and notice type, whether drainbridge evacuates, how the notice's time
 * becomes the request's times, which drain options the request carries, and (Azure) whether the event is
 * approved once drainbridge drained for it. Plain data, so `drainbridge plan` can show it; operators
 * override any part of it with DRAINBRIDGE_NOTICE_POLICY (lib/sources/config.ts).
 */
import type { NoticeAction, NoticeProvider } from '../domain/notice.ts';
import type { DrainOptions } from '../domain/request.ts';

/** The notice types of each provider: the keys of its policy rules. */
export const NOTICE_TYPES = {
  /** Azure Scheduled Events `EventType`. */
  azure: ['Freeze', 'Reboot', 'Redeploy', 'Preempt', 'Terminate'],
  /**
   * EC2: the IMDS scheduled-event `Code`s (AWS Health codes map onto them, see aws/health.ts), spot
   * interruptions (IMDS `instance-action`, EventBridge warning) and rebalance recommendations.
   */
  aws: [
    'system-reboot',
    'system-maintenance',
    'instance-reboot',
    'instance-retirement',
    'instance-stop',
    'spot-interruption',
    'rebalance-recommendation',
  ],
  /** GCE `maintenance-event` values, the `upcoming-maintenance` document and `preempted` (Spot, preemptible VMs). */
  gcp: ['MIGRATE_ON_HOST_MAINTENANCE', 'TERMINATE_ON_HOST_MAINTENANCE', 'upcoming-maintenance', 'preempted'],
} as const satisfies Record<NoticeProvider, readonly string[]>;

export type NoticeType<P extends NoticeProvider = NoticeProvider> = (typeof NOTICE_TYPES)[P][number];

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

export type NoticePolicy = { readonly [P in NoticeProvider]: Readonly<Record<NoticeType<P>, NoticeRule>> };

/**
 * The built-in rules carry no drain options: the request's origin (aws, azure, gcp) decides them as AWS
 * NTH does (lib/domain/drain-defaults.ts; docs/drain-defaults.md), below the operator's settings. An
 * operator who wants kubectl's refusal back for a notice type whose node comes back (a reboot, a live
 * migration) sets it here, e.g. `{"aws":{"instance-reboot":{"drain":{"deleteEmptyDirData":false}}}}`.
 */
const ORIGIN_DEFAULTS: Partial<DrainOptions> = Object.freeze({});

function evacuate(timing: NoticeTiming, why: string): NoticeRule {
  return Object.freeze({ action: 'evacuate', timing, approveWhenDrained: false, drain: ORIGIN_DEFAULTS, why });
}

/** Azure: the event is approved once drainbridge drained every node it lists. */
function approved(rule: NoticeRule): NoticeRule {
  return Object.freeze({ ...rule, approveWhenDrained: true });
}

function ignore(why: string): NoticeRule {
  return Object.freeze({
    action: 'ignore',
    timing: 'not-before',
    approveWhenDrained: false,
    drain: ORIGIN_DEFAULTS,
    why,
  });
}

const AZURE: NoticePolicy['azure'] = Object.freeze({
  Freeze: ignore('a pause of seconds (memory-preserving); draining would cost more than it saves'),
  Reboot: approved(evacuate('not-before', 'the VM reboots; local disks are kept')),
  Redeploy: approved(evacuate('not-before', 'the VM moves to another host; ephemeral disks are lost')),
  Preempt: approved(evacuate('deadline', 'the Spot VM is deleted in about 30 s')),
  Terminate: approved(evacuate('not-before', 'the VM is deleted')),
});

const AWS: NoticePolicy['aws'] = Object.freeze({
  'system-reboot': evacuate('not-before', 'the host reboots'),
  'system-maintenance': evacuate('not-before', 'power or network maintenance of the host'),
  'instance-reboot': evacuate('not-before', 'the instance reboots'),
  'instance-retirement': evacuate('not-before', 'the instance is stopped or terminated for good'),
  'instance-stop': evacuate('not-before', 'the instance stops; instance-store data is lost'),
  'spot-interruption': evacuate('deadline', 'two minutes before the spot instance goes'),
  'rebalance-recommendation': evacuate(
    'deadline',
    'an interruption is likely soon (only read when the rebalance source is enabled)',
  ),
});

const GCP: NoticePolicy['gcp'] = Object.freeze({
  MIGRATE_ON_HOST_MAINTENANCE: evacuate('deadline', 'live migration in about 60 s'),
  TERMINATE_ON_HOST_MAINTENANCE: evacuate('deadline', 'the VM stops in about 60 s'),
  'upcoming-maintenance': evacuate('not-before', 'a host maintenance window is scheduled'),
  preempted: evacuate(
    'deadline',
    'the Spot or preemptible VM is stopped 30 s after the notice; grace periods are cut to fit (only read when the preempted source is enabled)',
  ),
});

export const DEFAULT_NOTICE_POLICY: NoticePolicy = Object.freeze({ azure: AZURE, aws: AWS, gcp: GCP });

/** The rule for a notice; undefined for a key the policy does not know (the parsers never produce one). */
export function ruleFor(policy: NoticePolicy, provider: NoticeProvider, key: string): NoticeRule | undefined {
  const rules = policy[provider] as Readonly<Record<string, NoticeRule>>;
  return Object.hasOwn(rules, key) ? rules[key] : undefined;
}

/** One row per provider and type, for `drainbridge plan` and the README. */
export interface PolicyRow extends NoticeRule {
  readonly provider: NoticeProvider;
  readonly type: string;
}

export function describePolicy(policy: NoticePolicy = DEFAULT_NOTICE_POLICY): PolicyRow[] {
  return (Object.keys(NOTICE_TYPES) as NoticeProvider[]).flatMap((provider) =>
    NOTICE_TYPES[provider].map((type) => ({
      provider,
      type,
      ...(ruleFor(policy, provider, type) as NoticeRule),
    })),
  );
}

/**
 * The policy with the node agent's drain flags (`drainbridge forwarder --node-agent --force …`) under each
 * rule's own drain options: a rule's (DRAINBRIDGE_NOTICE_POLICY, per notice type) is the more specific.
 */
export function policyWithDrain(policy: NoticePolicy, drain: Partial<DrainOptions>): NoticePolicy {
  if (Object.keys(drain).length === 0) return policy;
  const withFlags = (rules: Readonly<Record<string, NoticeRule>>) =>
    Object.fromEntries(
      Object.entries(rules).map(([type, rule]) => [type, { ...rule, drain: { ...drain, ...rule.drain } }]),
    );
  return {
    azure: withFlags(policy.azure),
    aws: withFlags(policy.aws),
    gcp: withFlags(policy.gcp),
  } as NoticePolicy;
}
