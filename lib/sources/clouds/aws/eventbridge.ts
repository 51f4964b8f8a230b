/**
 * AWS's own events on the account's default EventBridge bus → notices. Pure.
 *
 * AWS Health (`source: aws.health`, `detail-type: AWS Health Event`), a scheduled change for EC2:
 *   { "eventArn": "arn:aws:health:us-east-1::event/EC2/AWS_EC2_INSTANCE_STOP_SCHEDULED/…", "service": "EC2",
 *     "eventTypeCode": "AWS_EC2_INSTANCE_STOP_SCHEDULED", "eventTypeCategory": "scheduledChange",
 *     "startTime": "Sat, 05 Jun 2016 15:10:09 GMT", "endTime": "…", "statusCode": "upcoming",
 *     "eventDescription": [{ "language": "en_US", "latestDescription": "…" }],
 *     "affectedEntities": [{ "entityValue": "i-12345678" }] }
 * (dates RFC 1123; statusCode upcoming, open or closed; Health sends the same eventArn again as it changes).
 *
 * EC2 Spot Instance Interruption Warning (`source: aws.ec2`), two minutes before the action:
 *   { "instance-id": "i-1234567890abcdef0", "instance-action": "terminate" }.
 */
import { z } from 'zod';
import { problemsOf, safeParseReporting } from '../../../bus/contracts/parse.ts';
import { parseRfc1123, parseRfc3339 } from '../dates.ts';
import { type Notice, NoticeParseError } from '../notice.ts';
import type { NoticeType } from '../policy.ts';
import { SPOT_ACTIONS } from './parse.ts';

/**
 * The AWS Health event types for EC2 scheduled maintenance that concern an instance (the
 * `AWS_EC2_*_SCHEDULED` codes naming instances), and the policy rule each falls under. Dedicated-host
 * events are not here: they name the host (`h-…`), not the instances on it.
 */
export const HEALTH_EVENT_TYPES = Object.freeze({
  AWS_EC2_INSTANCE_REBOOT_MAINTENANCE_SCHEDULED: 'instance-reboot',
  AWS_EC2_INSTANCE_REBOOT_FLEXIBLE_MAINTENANCE_SCHEDULED: 'instance-reboot',
  AWS_EC2_SYSTEM_REBOOT_MAINTENANCE_SCHEDULED: 'system-reboot',
  AWS_EC2_INSTANCE_NETWORK_MAINTENANCE_SCHEDULED: 'system-maintenance',
  AWS_EC2_INSTANCE_POWER_MAINTENANCE_SCHEDULED: 'system-maintenance',
  AWS_EC2_PERSISTENT_INSTANCE_POWER_MAINTENANCE_SCHEDULED: 'system-maintenance',
  AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED: 'instance-retirement',
  AWS_EC2_PERSISTENT_INSTANCE_RETIREMENT_SCHEDULED: 'instance-retirement',
  AWS_EC2_INSTANCE_STOP_SCHEDULED: 'instance-stop',
} satisfies Record<string, NoticeType<'aws'>>);
export type HealthEventType = keyof typeof HEALTH_EVENT_TYPES;
const HEALTH_CODES = Object.keys(HEALTH_EVENT_TYPES) as [HealthEventType, ...HealthEventType[]];

export const HEALTH_STATUSES = ['upcoming', 'open', 'closed'] as const;
export const HEALTH_DETAIL_TYPE = 'AWS Health Event';
export const SPOT_WARNING_DETAIL_TYPE = 'EC2 Spot Instance Interruption Warning';

const INSTANCE_ID = /^i-[0-9a-f]{8,17}$/;
const oneOf = <T extends readonly [string, ...string[]]>(values: T) =>
  z.enum(values, { error: (issue) => `must be one of ${values.join(', ')} (got ${JSON.stringify(issue.input)})` });
const rfc1123 = z
  .string({ error: 'must be an RFC 1123 date such as "Sat, 05 Jun 2016 15:10:09 GMT"' })
  .refine((text) => parseRfc1123(text) !== undefined, {
    error: 'must be an RFC 1123 date such as "Sat, 05 Jun 2016 15:10:09 GMT"',
  });
const instanceId = z
  .string({ error: 'must be an EC2 instance id' })
  .regex(INSTANCE_ID, 'must be an EC2 instance id (i-…)');

const HealthDetail = z.looseObject({
  eventArn: z
    .string({ error: 'must be an AWS Health event ARN' })
    .regex(/^arn:aws[a-z-]*:health:/, 'must be an AWS Health event ARN'),
  service: z.literal('EC2', { error: 'must be EC2' }),
  eventTypeCode: oneOf(HEALTH_CODES),
  eventTypeCategory: z.literal('scheduledChange', { error: 'must be scheduledChange' }),
  startTime: rfc1123,
  endTime: rfc1123.optional(),
  statusCode: oneOf(HEALTH_STATUSES).optional(),
  eventDescription: z
    .array(z.looseObject({ language: z.string().optional(), latestDescription: z.string().optional() }))
    .optional(),
  affectedEntities: z
    .array(z.looseObject({ entityValue: instanceId }), { error: 'must be a list of affected instances' })
    .min(1, 'must name at least one instance'),
});
type HealthDetail = z.infer<typeof HealthDetail>;

const HealthEvent = z.looseObject({
  source: z.literal('aws.health', { error: 'must be aws.health' }),
  'detail-type': z.literal(HEALTH_DETAIL_TYPE, { error: `must be "${HEALTH_DETAIL_TYPE}"` }),
  detail: HealthDetail,
});

const SpotWarning = z.looseObject({
  source: z.literal('aws.ec2', { error: 'must be aws.ec2' }),
  'detail-type': z.literal(SPOT_WARNING_DETAIL_TYPE, { error: `must be "${SPOT_WARNING_DETAIL_TYPE}"` }),
  id: z.string({ error: 'must be the event id' }).min(1),
  time: z
    .string({ error: 'must be an RFC 3339 time' })
    .refine((text) => parseRfc3339(text) !== undefined, { error: 'must be an RFC 3339 time' }),
  detail: z.looseObject({ 'instance-id': instanceId, 'instance-action': oneOf(SPOT_ACTIONS) }),
});

function healthDescription(detail: HealthDetail): string {
  const english = detail.eventDescription?.find((d) => d.language?.startsWith('en')) ?? detail.eventDescription?.[0];
  return english?.latestDescription?.trim() || `${detail.eventTypeCode} (AWS Health)`;
}

function healthStatus(code: HealthDetail['statusCode']): Notice['status'] {
  if (code === 'closed') return 'ended';
  return code === 'open' ? 'started' : 'scheduled';
}

function healthNotice(detail: HealthDetail): Notice {
  const notBefore = parseRfc1123(detail.startTime);
  const notAfter = detail.endTime ? parseRfc1123(detail.endTime) : undefined;
  return {
    provider: 'aws',
    source: 'aws-health',
    eventId: detail.eventArn,
    eventType: detail.eventTypeCode,
    policyKey: HEALTH_EVENT_TYPES[detail.eventTypeCode],
    status: healthStatus(detail.statusCode),
    providerStatus: detail.statusCode ?? 'upcoming',
    ...(notBefore ? { notBefore } : {}),
    ...(notAfter && notBefore && notAfter > notBefore ? { notAfter } : {}),
    description: healthDescription(detail),
    instanceIds: [...new Set(detail.affectedEntities.map((entity) => entity.entityValue))],
  };
}

function spotNotice(event: z.infer<typeof SpotWarning>): Notice {
  const warnedAt = Date.parse(parseRfc3339(event.time) as string);
  // The warning comes two minutes before the action (EC2 documentation); the event carries no action time.
  const actionAt = new Date(warnedAt + 120_000).toISOString();
  const id = event.detail['instance-id'];
  const action = event.detail['instance-action'];
  return {
    provider: 'aws',
    source: 'aws-spot-interruption-warning',
    eventId: `spot-warning-${id}-${new Date(warnedAt).toISOString()}`,
    eventType: action,
    policyKey: 'spot-interruption',
    status: 'scheduled',
    providerStatus: action,
    notBefore: actionAt,
    description: `EC2 Spot Instance Interruption Warning: ${action} of ${id} at about ${actionAt}`,
    instanceIds: [id],
  };
}

/** An AWS Health or spot-warning event from the default bus → its notice; anything else throws NoticeParseError. */
export function parseAwsBusEvent(event: unknown): Notice {
  const source = (event as { source?: unknown } | null)?.source;
  if (source === 'aws.ec2') {
    const parsed = safeParseReporting(SpotWarning, event);
    if (!parsed.success) throw new NoticeParseError('aws-spot-interruption-warning', problemsOf(parsed.error));
    return spotNotice(parsed.data);
  }
  const parsed = safeParseReporting(HealthEvent, event);
  if (!parsed.success) throw new NoticeParseError('aws-health', problemsOf(parsed.error));
  return healthNotice(parsed.data.detail);
}
