/**
 * Cloud maintenance notices: which provider, which of its documents, what the policy decided. Shared by
 * the bus contracts (the optional `notice` field of Maintenance Requested / Ended) and lib/sources/.
 */

/** The clouds whose notices drainbridge reads. */
export const NOTICE_PROVIDERS = ['azure', 'aws', 'gcp', 'alibaba'] as const;
export type NoticeProvider = (typeof NOTICE_PROVIDERS)[number];

/** Where a notice was read: one entry per provider document (lib/sources/<provider>/). */
export const NOTICE_SOURCES = [
  /** Azure IMDS `/metadata/scheduledevents`. */
  'azure-scheduled-events',
  /** EC2 IMDS `/latest/meta-data/events/maintenance/scheduled`. */
  'aws-scheduled-events',
  /** EC2 IMDS `/latest/meta-data/spot/instance-action` (opt-in). */
  'aws-spot-instance-action',
  /** EC2 IMDS `/latest/meta-data/events/recommendations/rebalance` (opt-in). */
  'aws-rebalance-recommendation',
  /** An AWS Health scheduled-change event for EC2 on the default EventBridge bus. */
  'aws-health',
  /** An "EC2 Spot Instance Interruption Warning" on the default EventBridge bus (opt-in). */
  'aws-spot-interruption-warning',
  /** GCE metadata `instance/maintenance-event`. */
  'gcp-maintenance-event',
  /** GCE metadata `instance/upcoming-maintenance`. */
  'gcp-upcoming-maintenance',
  /** GCE metadata `instance/preempted`: a Spot or preemptible VM is being stopped (opt-in). */
  'gcp-preempted',
  /** Alibaba Cloud ECS metadata `maintenance/active-system-events`. */
  'alibaba-system-events',
] as const;
export type NoticeSource = (typeof NOTICE_SOURCES)[number];

/**
 * What the notice policy decided for a notice type: `evacuate` (publish Maintenance Requested) or
 * `ignore` (log it, publish nothing). Only `evacuate` notices reach the bus; `ignore` exists so that
 * `drainbridge plan` can show the whole policy.
 */
export const NOTICE_ACTIONS = ['evacuate', 'ignore'] as const;
export type NoticeAction = (typeof NOTICE_ACTIONS)[number];
