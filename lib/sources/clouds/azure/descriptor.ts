/** Azure: Scheduled Events from the Instance Metadata Service (lib/sources/clouds/contract/descriptor.ts says what a descriptor is). */

import { z } from 'zod';
import { wholeNumber } from '../../../settings/parsers.ts';
import { setting } from '../../../settings/setting.ts';
import { AGENT_READERS, defineCloud, metadataBaseUrl } from '../contract/descriptor.ts';
import { approved, evacuate, ignore } from '../contract/rules.ts';

/** The node agent's azure settings (AGENT_SETTINGS.azure, lib/sources/clouds/registry/settings.ts). */
export const AZURE_SETTINGS = {
  baseUrl: setting({
    env: 'DRAINBRIDGE_AGENT_AZURE_URL',
    parse: metadataBaseUrl,
    default: 'http://169.254.169.254',
    help: 'Azure IMDS base URL',
    readBy: AGENT_READERS,
  }),
  apiVersion: setting({
    env: 'DRAINBRIDGE_AGENT_AZURE_API_VERSION',
    parse: z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'must be an api-version such as 2020-07-01'),
    default: '2020-07-01',
    help: 'Scheduled Events api-version',
    readBy: AGENT_READERS,
  }),
  /** Seconds between two checks whether an event may be approved (they read the cluster). */
  approvalCheckSeconds: setting({
    env: 'DRAINBRIDGE_AGENT_AZURE_APPROVAL_CHECK_SECONDS',
    parse: wholeNumber(1, 300),
    default: '5',
    help: 'seconds between checks whether an event may be approved',
    readBy: AGENT_READERS,
  }),
};

export const AZURE_CLOUD = defineCloud({
  provider: 'azure',
  approvesEvents: true,
  docs: [
    'Azure Metadata Service: Scheduled Events for Linux VMs (https://learn.microsoft.com/azure/virtual-machines/linux/scheduled-events)',
    'Azure-Samples/scheduled-events-mock-server (main.py): the mock the docs recommend for testing',
  ],
  settings: AZURE_SETTINGS,
  providerIdScheme: 'azure://',
  sources: {
    'azure-scheduled-events': {
      label: 'Azure Scheduled Events',
      tag: 'se',
      arrives: 'metadata',
      documentVersion: 'DocumentIncarnation',
    },
  },
  noticeTypes: ['Freeze', 'Reboot', 'Redeploy', 'Preempt', 'Terminate'],
  policy: {
    Freeze: ignore('a pause of seconds (memory-preserving); draining would cost more than it saves'),
    Reboot: approved(evacuate('not-before', 'the VM reboots; local disks are kept')),
    Redeploy: approved(evacuate('not-before', 'the VM moves to another host; ephemeral disks are lost')),
    Preempt: approved(evacuate('deadline', 'the Spot VM is deleted in about 30 s')),
    Terminate: approved(evacuate('not-before', 'the VM is deleted')),
  },
});
