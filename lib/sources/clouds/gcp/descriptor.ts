/** GCE: the metadata server's maintenance documents (lib/sources/clouds/contract/descriptor.ts says what a descriptor is). */
import { bool, wholeNumber } from '../../../settings/parsers.ts';
import { setting } from '../../../settings/setting.ts';
import { AGENT_READERS, defineCloud, metadataBaseUrl } from '../contract/descriptor.ts';
import { evacuate } from '../contract/rules.ts';

/** The node agent's gcp settings (AGENT_SETTINGS.gcp, lib/sources/clouds/registry/settings.ts). */
export const GCP_SETTINGS = {
  baseUrl: setting({
    env: 'DRAINBRIDGE_AGENT_GCP_URL',
    parse: metadataBaseUrl,
    default: 'http://metadata.google.internal',
    help: 'GCE metadata server base URL',
    readBy: AGENT_READERS,
  }),
  /** `timeout_sec` of the hanging maintenance-event request. */
  waitSeconds: setting({
    env: 'DRAINBRIDGE_AGENT_GCP_WAIT_SECONDS',
    parse: wholeNumber(1, 3600),
    default: '60',
    help: '`timeout_sec` of the hanging maintenance-event read',
    readBy: AGENT_READERS,
  }),
  /** Read `upcoming-maintenance` too. */
  upcoming: setting({
    env: 'DRAINBRIDGE_AGENT_GCP_UPCOMING',
    parse: bool,
    default: 'true',
    help: 'read the upcoming-maintenance document too',
    readBy: AGENT_READERS,
  }),
  /** Read `preempted` (Spot and preemptible VMs; opt-in, as AWS spot is). */
  preempted: setting({
    env: 'DRAINBRIDGE_AGENT_GCP_PREEMPTED',
    parse: bool,
    default: 'false',
    help: 'read the preempted value (Spot and preemptible VMs: 30 s from the notice to the stop)',
    readBy: AGENT_READERS,
  }),
  upcomingPollSeconds: setting({
    env: 'DRAINBRIDGE_AGENT_GCP_UPCOMING_POLL_SECONDS',
    parse: wholeNumber(5, 86_400),
    default: '60',
    help: 'seconds between reads of upcoming-maintenance',
    readBy: AGENT_READERS,
  }),
};

export const GCP_CLOUD = defineCloud({
  provider: 'gcp',
  approvesEvents: false,
  docs: [
    'Monitor and plan for a host maintenance event (https://cloud.google.com/compute/docs/instances/monitor-plan-host-maintenance-event)',
    'Create and use preemptible VMs, "Detecting if a VM was preempted" (https://cloud.google.com/compute/docs/instances/create-use-preemptible)',
  ],
  settings: GCP_SETTINGS,
  providerIdScheme: 'gce://',
  sources: {
    'gcp-maintenance-event': {
      label: 'GCE maintenance-event',
      tag: 'maintenance-event',
      arrives: 'metadata',
      documentVersion: 'ETag',
    },
    'gcp-upcoming-maintenance': {
      label: 'GCE upcoming-maintenance',
      tag: 'upcoming',
      arrives: 'metadata',
      optIn: 'DRAINBRIDGE_AGENT_GCP_UPCOMING (on by default)',
    },
    'gcp-preempted': {
      label: 'GCE preempted (Spot or preemptible VM)',
      tag: 'preempted',
      arrives: 'metadata',
      optIn: 'DRAINBRIDGE_AGENT_GCP_PREEMPTED',
    },
  },
  noticeTypes: ['MIGRATE_ON_HOST_MAINTENANCE', 'TERMINATE_ON_HOST_MAINTENANCE', 'upcoming-maintenance', 'preempted'],
  policy: {
    MIGRATE_ON_HOST_MAINTENANCE: evacuate('deadline', 'live migration in about 60 s'),
    TERMINATE_ON_HOST_MAINTENANCE: evacuate('deadline', 'the VM stops in about 60 s'),
    'upcoming-maintenance': evacuate('not-before', 'a host maintenance window is scheduled'),
    preempted: evacuate(
      'deadline',
      'the Spot or preemptible VM is stopped 30 s after the notice; grace periods are cut to fit (only read when the preempted source is enabled)',
    ),
  },
});
