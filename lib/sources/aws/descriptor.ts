/**
 * AWS: EC2 instance metadata (IMDSv2) on the node, AWS Health and Spot warnings on the default
 * EventBridge bus (lib/sources/descriptor.ts says what a descriptor is). The notice types are the IMDS
 * scheduled-event `Code`s (Health codes map onto them, eventbridge.ts), spot interruptions and rebalance
 * recommendations.
 */
import { defineCloud } from '../descriptor.ts';
import { evacuate } from '../rules.ts';

export const AWS_CLOUD = defineCloud({
  provider: 'aws',
  docs: [
    'Instance metadata categories (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/instancedata-data-categories.html)',
    'Reschedule a scheduled event for an EC2 instance (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/reschedule-event.html)',
    'AWS Health events in EventBridge; EC2 Spot Instance interruption notices',
  ],
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
