/**
 * Cloud maintenance notices: which provider, which of its documents, what the policy decided. Shared by
 * the bus contracts (the optional `notice` field of Maintenance Requested / Ended) and lib/sources/.
 */

/** The clouds whose notices drainbridge reads. */
export const NOTICE_PROVIDERS = ['azure', 'aws', 'gcp', 'alibaba'] as const;
export type NoticeProvider = (typeof NOTICE_PROVIDERS)[number];

/** How a cloud's controller manager writes a node's `spec.providerID`: its scheme, and where the instance id is. */
export interface ProviderIdForm {
  readonly scheme: string;
  /**
   * `last-segment`: the last path segment (`aws:///us-west-2a/i-0abc`, `gce://project/zone/name`);
   * `after-region`: the last segment's part after `<region>.` (`alicloud://cn-hangzhou.i-bp1…`).
   */
  readonly instanceId: 'last-segment' | 'after-region';
}

/**
 * Each cloud's providerID form, so that an instance target (the bus contract's `instance`) resolves to its
 * node (lib/node/resolve.ts). Declared here, beside the provider's name, because the model is what both
 * lib/node and the cloud descriptors may read (lib/node importing lib/sources would close a folder
 * cycle); each cloud's descriptor carries its scheme, which the compiler holds to this one.
 */
export const NOTICE_PROVIDER_IDS = Object.freeze({
  azure: { scheme: 'azure://', instanceId: 'last-segment' },
  aws: { scheme: 'aws://', instanceId: 'last-segment' },
  gcp: { scheme: 'gce://', instanceId: 'last-segment' },
  // kubernetes/cloud-provider-alibaba-cloud, NodeFromProviderID: `alicloud://<region>.<instance id>`,
  // e.g. `alicloud://cn-hangzhou.i-v98dklsmnxkkgiiil7` (the prefix-less `<region>.<id>` form is not matched).
  alibaba: { scheme: 'alicloud://', instanceId: 'after-region' },
} as const) satisfies Readonly<Record<NoticeProvider, ProviderIdForm>>;

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
