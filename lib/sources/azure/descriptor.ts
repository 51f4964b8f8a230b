/** Azure: Scheduled Events from the Instance Metadata Service (lib/sources/descriptor.ts says what a descriptor is). */
import { defineCloud } from '../descriptor.ts';
import { approved, evacuate, ignore } from '../rules.ts';

export const AZURE_CLOUD = defineCloud({
  provider: 'azure',
  docs: [
    'Azure Metadata Service: Scheduled Events for Linux VMs (https://learn.microsoft.com/azure/virtual-machines/linux/scheduled-events)',
    'Azure-Samples/scheduled-events-mock-server (main.py): the mock the docs recommend for testing',
  ],
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
