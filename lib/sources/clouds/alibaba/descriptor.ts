/**
 * Alibaba Cloud ECS: the instance metadata service's active system events
 * (`GET http://100.100.100.200/latest/maintenance/active-system-events`), polled by the node agent
 * (contract/descriptor.ts says what a descriptor is; README.md names the pages followed). The notice types
 * are ECS system-event types (`SystemMaintenance.Reboot`, …), each with `NotBefore`.
 */
import { setting } from '../../../settings/setting.ts';
import { AGENT_READERS, defineCloud, metadataBaseUrl } from '../contract/descriptor.ts';
import { evacuate } from '../contract/rules.ts';

/** The node agent's alibaba settings (AGENT_SETTINGS.alibaba, lib/sources/clouds/registry/settings.ts). */
export const ALIBABA_SETTINGS = {
  baseUrl: setting({
    env: 'DRAINBRIDGE_AGENT_ALIBABA_URL',
    parse: metadataBaseUrl,
    default: 'http://100.100.100.200',
    help: 'ECS instance metadata base URL',
    readBy: AGENT_READERS,
  }),
};

/** The ECS system-event types this agent knows (DescribeInstanceHistoryEvents' EventType values). */
export const ECS_EVENT_TYPES = [
  'SystemMaintenance.Reboot',
  'SystemMaintenance.Redeploy',
  'SystemMaintenance.Stop',
  'SystemFailure.Reboot',
  'SystemFailure.Redeploy',
  'SystemFailure.Stop',
  'SystemFailure.Delete',
  'InstanceFailure.Reboot',
  'InstanceExpiration.Stop',
  'InstanceExpiration.Delete',
  'AccountUnbalanced.Stop',
  'AccountUnbalanced.Delete',
] as const;

export const ALIBABA_CLOUD = defineCloud({
  provider: 'alibaba',
  approvesEvents: false,
  docs: [
    'ECS instance metadata, the table of metadata items: `/maintenance/active-system-events` (Alibaba Cloud help center, ECS user guide)',
    'ECS instance event notifications: the system-event content `eventId`, `eventType`, `eventStatus`, `notBefore` (https://www.alibabacloud.com/help/en/ecs/user-guide/instance-event-notification)',
    'DescribeInstanceHistoryEvents: event types and statuses Scheduled, Executing, Inquiring, Avoided, Executed, Canceled, Failed (https://www.alibabacloud.com/help/en/ecs/developer-reference/api-ecs-2014-05-26-describeinstancehistoryevents)',
  ],
  settings: ALIBABA_SETTINGS,
  providerIdScheme: 'alicloud://',
  sources: {
    'alibaba-system-events': {
      label: 'ECS active system events (instance metadata)',
      tag: 'events',
      arrives: 'metadata',
    },
  },
  noticeTypes: ECS_EVENT_TYPES,
  policy: {
    'SystemMaintenance.Reboot': evacuate('not-before', 'the instance restarts for host maintenance'),
    'SystemMaintenance.Redeploy': evacuate('not-before', 'the instance is moved to another host'),
    'SystemMaintenance.Stop': evacuate('not-before', 'the instance stops for host maintenance'),
    'SystemFailure.Reboot': evacuate('not-before', 'the instance restarts after a host failure'),
    'SystemFailure.Redeploy': evacuate('not-before', 'the instance is moved off a failing host'),
    'SystemFailure.Stop': evacuate('not-before', 'the instance stops after a host failure'),
    'SystemFailure.Delete': evacuate('not-before', 'the instance is released after a host failure'),
    'InstanceFailure.Reboot': evacuate('not-before', 'the instance restarts after an instance failure'),
    'InstanceExpiration.Stop': evacuate('not-before', 'the subscription expired: the instance stops'),
    'InstanceExpiration.Delete': evacuate('not-before', 'the subscription expired: the instance is released'),
    'AccountUnbalanced.Stop': evacuate('not-before', 'an overdue payment: the instance stops'),
    'AccountUnbalanced.Delete': evacuate('not-before', 'an overdue payment: the instance is released'),
  },
});
