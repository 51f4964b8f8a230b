/**
 * AWS: EC2 instance metadata (IMDSv2) on the node, AWS Health and Spot warnings on the default
 * EventBridge bus (lib/sources/clouds/contract/descriptor.ts says what a descriptor is). The notice types are the IMDS
 * scheduled-event `Code`s (Health codes map onto them, eventbridge.ts), spot interruptions and rebalance
 * recommendations.
 */
import { bool, wholeNumber } from '../../../settings/parsers.ts';
import { setting } from '../../../settings/setting.ts';
import { AGENT_READERS, defineCloud, metadataBaseUrl } from '../contract/descriptor.ts';
import { evacuate } from '../contract/rules.ts';

/** The node agent's aws settings (AGENT_SETTINGS.aws, lib/sources/clouds/registry/settings.ts). */
export const AWS_SETTINGS = {
  baseUrl: setting({
    env: 'DRAINBRIDGE_AGENT_AWS_URL',
    parse: metadataBaseUrl,
    default: 'http://169.254.169.254',
    help: 'EC2 IMDS base URL',
    readBy: AGENT_READERS,
  }),
  tokenTtlSeconds: setting({
    env: 'DRAINBRIDGE_AGENT_AWS_TOKEN_TTL_SECONDS',
    parse: wholeNumber(1, 21_600),
    default: '3600',
    help: 'IMDSv2 session token lifetime (1–21600)',
    readBy: AGENT_READERS,
  }),
  /** Read the spot `instance-action` notice (opt-in). */
  spot: setting({
    env: 'DRAINBRIDGE_AGENT_AWS_SPOT',
    parse: bool,
    default: 'false',
    help: 'read the spot instance-action notice',
    readBy: AGENT_READERS,
  }),
  /** Read the rebalance recommendation (opt-in). */
  rebalance: setting({
    env: 'DRAINBRIDGE_AGENT_AWS_REBALANCE',
    parse: bool,
    default: 'false',
    help: 'read the rebalance recommendation',
    readBy: AGENT_READERS,
  }),
};

export const AWS_CLOUD = defineCloud({
  provider: 'aws',
  approvesEvents: false,
  docs: [
    'Instance metadata categories (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/instancedata-data-categories.html)',
    'Reschedule a scheduled event for an EC2 instance (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/reschedule-event.html)',
    'AWS Health events in EventBridge; EC2 Spot Instance interruption notices',
  ],
  settings: AWS_SETTINGS,
  providerIdScheme: 'aws://',
  sources: {
    'aws-scheduled-events': { label: 'EC2 scheduled events (IMDS)', tag: 'scheduled', arrives: 'metadata' },
    'aws-spot-instance-action': {
      label: 'EC2 spot instance-action (IMDS)',
      tag: 'spot',
      arrives: 'metadata',
      optIn: 'DRAINBRIDGE_AGENT_AWS_SPOT',
    },
    'aws-rebalance-recommendation': {
      label: 'EC2 rebalance recommendation (IMDS)',
      tag: 'rebalance',
      arrives: 'metadata',
      optIn: 'DRAINBRIDGE_AGENT_AWS_REBALANCE',
    },
    'aws-health': { label: 'AWS Health event', tag: 'health', arrives: 'event-bus' },
    'aws-spot-interruption-warning': {
      label: 'EC2 Spot Instance Interruption Warning',
      tag: 'spot',
      arrives: 'event-bus',
      optIn: 'spotInterruptionWarnings (serverless param)',
    },
  },
  noticeTypes: [
    'system-reboot',
    'system-maintenance',
    'instance-reboot',
    'instance-retirement',
    'instance-stop',
    'spot-interruption',
    'rebalance-recommendation',
  ],
  policy: {
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
  },
});
