/**
 * Field schemas shared by every event contract. Each names what it accepts in its error message,
 * because the message is what an operator sees when an invocation is refused.
 */
import { z } from 'zod';
import { NOTICE_ACTIONS, NOTICE_PROVIDERS, NOTICE_SOURCES } from '../../model/notice.ts';
import { INSTANCE_PROVIDERS, ORIGINS } from '../../model/request.ts';
import { WINDOW_ENDS } from '../../model/window.ts';

/** A Kubernetes object name (DNS-1123 subdomain): what the API server accepts for a Node. */
export const NodeName = z
  .string()
  .min(1, 'must not be empty')
  .max(253, 'must be at most 253 characters (a Kubernetes node name)')
  .regex(
    /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/,
    'must be a valid node name: lowercase letters, digits, "-" and ".", starting and ending with a letter or digit',
  );

/**
 * The idempotency key of a maintenance request. Restricted to characters that are safe in
 * annotations, Lease holder identities and log lines.
 */
export const RequestId = z
  .string()
  .min(1, 'must not be empty')
  .max(128, 'must be at most 128 characters')
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9._:@/-]*$/,
    'may contain only letters, digits and . _ : @ / - (starting with a letter or digit)',
  );

/** Who asked: a user name, a controller, a cloud notice id. */
export const Requester = z.string().min(1, 'must not be empty').max(256, 'must be at most 256 characters');

export const Reason = z.string().max(1024, 'must be at most 1024 characters');

export const Origin = z.enum(ORIGINS, { error: `must be one of ${ORIGINS.join(', ')}` });

/** An instant with an explicit offset (`2026-11-21T10:00:00Z`). */
export const Instant = z.iso.datetime({
  offset: true,
  error: 'must be an ISO 8601 date-time with a time zone, e.g. 2026-11-21T10:00:00Z',
});

/** A node's `spec.providerID`, e.g. `aws:///eu-west-1a/i-0abc…`, `azure:///subscriptions/…`, `gce://project/zone/name`. */
export const ProviderID = z
  .string()
  .min(1, 'must not be empty')
  .max(1024, 'must be at most 1024 characters')
  .regex(/^[a-z][a-z0-9+.-]*:\/\/\S*$/, "must look like <provider>://<id>, as in a node's spec.providerID");

export const CloudInstance = z.strictObject({
  provider: z.enum(INSTANCE_PROVIDERS, { error: `must be one of ${INSTANCE_PROVIDERS.join(', ')}` }),
  id: z
    .string()
    .min(1, 'must not be empty')
    .max(512, 'must be at most 512 characters')
    .regex(/^\S+$/, 'must not contain spaces'),
});

const TARGET_KEYS = ['nodeName', 'providerID', 'instance'] as const;

/** Exactly one of a node name, a providerID, or a cloud instance. */
export const Target = z
  .strictObject({
    nodeName: NodeName.optional(),
    providerID: ProviderID.optional(),
    instance: CloudInstance.optional(),
  })
  .superRefine((target, ctx) => {
    const given = TARGET_KEYS.filter((key) => target[key] !== undefined);
    if (given.length !== 1) {
      ctx.addIssue({
        code: 'custom',
        message:
          given.length === 0
            ? 'must name exactly one of nodeName, providerID, instance (none given)'
            : `must name exactly one of nodeName, providerID, instance (got ${given.join(' and ')})`,
      });
    }
  })
  .describe('exactly one of nodeName, providerID, instance');

const seconds = (what: string) =>
  z.number({ error: `must be a number of seconds (${what})` }).int('must be a whole number');

/** kubectl drain's options; every field optional, defaults come from configuration (kubectl's by default). */
export const DrainOptionsInput = z.strictObject({
  force: z.boolean().optional(),
  ignoreDaemonSets: z.boolean().optional(),
  deleteEmptyDirData: z.boolean().optional(),
  gracePeriodSeconds: seconds("-1 uses each pod's own").min(-1, 'must be -1 or more').optional(),
  timeoutSeconds: seconds('0 waits for ever')
    .min(0, 'must be 0 or more')
    .max(7 * 24 * 3600, 'must be at most a week')
    .optional(),
  podSelector: z.string().max(1024).optional(),
  disableEviction: z.boolean().optional(),
  skipWaitForDeleteTimeoutSeconds: seconds('0 never skips').min(0, 'must be 0 or more').optional(),
  chunkSize: z.number().int().min(1).max(10_000).optional(),
});

/**
 * The cloud maintenance notice a request came from (set by the node agent and the AWS notice normaliser):
 * the provider's own event id and type, the document it was read from, and what the notice policy decided.
 */
export const CloudNotice = z.strictObject({
  provider: z.enum(NOTICE_PROVIDERS, { error: `must be one of ${NOTICE_PROVIDERS.join(', ')}` }),
  source: z.enum(NOTICE_SOURCES, { error: `must be one of ${NOTICE_SOURCES.join(', ')}` }),
  /** Azure EventId, EC2 instance event id, AWS Health event ARN, … (what repeats of one notice share). */
  eventId: z.string().min(1, 'must not be empty').max(1600, 'must be at most 1600 characters'),
  /** The provider's type: Reboot, system-reboot, AWS_EC2_INSTANCE_STOP_SCHEDULED, MIGRATE_ON_HOST_MAINTENANCE, … */
  eventType: z.string().min(1, 'must not be empty').max(256, 'must be at most 256 characters'),
  action: z.enum(NOTICE_ACTIONS, { error: `must be one of ${NOTICE_ACTIONS.join(', ')}` }),
});

/**
 * Which version of a cloud notice a request carries: the provider's own revision (`key`: Azure's
 * DocumentIncarnation, GCE's ETag, EC2's EventId + NotBefore, AWS Health's lastUpdatedTime) and when the
 * publisher saw it (`at`). A request re-published under the same requestId with a later `at` is a
 * reschedule: the workflow plans the pending evacuation again (lib/progress/reschedule.ts).
 */
export const NoticeRevision = z.strictObject({
  key: z.string().min(1, 'must not be empty').max(512, 'must be at most 512 characters'),
  at: Instant,
});

/** A maintenance window's name: also part of request ids and of its schedules' names. */
export const WindowName = z
  .string()
  .min(1, 'must not be empty')
  .max(40, 'must be at most 40 characters')
  .regex(
    /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/,
    'must be lowercase letters, digits and "-", starting and ending with a letter or digit',
  );

/** The occurrence of a maintenance window a request belongs to (set by the window's schedule). */
export const WindowOccurrenceInput = z
  .strictObject({
    name: WindowName,
    opensAt: Instant,
    closesAt: Instant,
    maxNodes: z.number().int('must be a whole number').min(1, 'must be at least 1').max(10_000),
    endsOn: z.enum(WINDOW_ENDS, { error: `must be one of ${WINDOW_ENDS.join(', ')}` }),
  })
  .superRefine((window, ctx) => {
    if (Date.parse(window.closesAt) <= Date.parse(window.opensAt)) {
      ctx.addIssue({ code: 'custom', path: ['closesAt'], message: 'must be later than opensAt' });
    }
  });

/**
 * When an evacuation of a request with notBefore starts, and on what estimate: published in
 * Evacuation Progress (phase MaintenanceScheduled) and kept in the Evacuation record.
 */
export const StartTimingInput = z.strictObject({
  notBefore: Instant,
  /** notBefore − estimateSeconds − marginSeconds, or the moment it was computed when that is past. */
  startAt: Instant,
  estimateSeconds: z.number().min(0),
  marginSeconds: z.number().min(0),
  /** The time left was shorter than the estimate: the evacuation starts at once and will likely not finish before notBefore. */
  late: z.boolean(),
  /** What the estimate is made of, e.g. "pods: 2 waves under PDB shop/web (30 s grace, 30 s to Ready)". */
  basis: z.array(z.string().max(512)).max(20),
  /** Set when late: says so in words. */
  warning: z.string().max(1024).optional(),
});
