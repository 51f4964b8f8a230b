/** GCE: the metadata server's maintenance documents (lib/sources/descriptor.ts says what a descriptor is). */
import { defineCloud } from '../descriptor.ts';
import { evacuate } from '../rules.ts';

export const GCP_CLOUD = defineCloud({
  provider: 'gcp',
  docs: [
    'Monitor and plan for a host maintenance event (https://cloud.google.com/compute/docs/instances/monitor-plan-host-maintenance-event)',
    'Create and use preemptible VMs, "Detecting if a VM was preempted" (https://cloud.google.com/compute/docs/instances/create-use-preemptible)',
  ],
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
