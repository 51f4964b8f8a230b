/**
 * The Kubernetes calls the KubeVirt branch makes, by operation, as RBAC sees them: what its definition
 * (lib/branches/kubevirt/definition.ts) declares, so that the preflight asks for them and the RBAC test
 * checks them against what the branch really calls. KubeVirt's objects answer 404 where KubeVirt does
 * not run: no VMs to move.
 */
import { type AccessSettings, type ApiAccess, call } from '../../model/api-access.ts';

const KUBEVIRT = { group: 'kubevirt.io' } as const;

const READS = [
  call('list', 'kubevirts', "read KubeVirt's eviction-strategy default and migration limits", KUBEVIRT),
  call('list', 'virtualmachineinstances', 'list the VMs on the node', KUBEVIRT),
  call(
    'list',
    'virtualmachineinstancemigrations',
    'follow live migrations (everyone’s count toward the limits)',
    KUBEVIRT,
  ),
];
const ABORTS = call('delete', 'virtualmachineinstancemigrations', "abort drainbridge's own live migrations", KUBEVIRT);

export const KUBEVIRT_ACCESS = {
  evacuate: (settings: AccessSettings): ApiAccess[] => [
    ...READS,
    call('create', 'virtualmachineinstancemigrations', 'live-migrate the VMs', KUBEVIRT),
    call(
      'watch',
      'virtualmachineinstancemigrations',
      "start the next migration as soon as one of drainbridge's own ends",
      KUBEVIRT,
    ),
    ABORTS,
    ...(settings.kubevirtRestart
      ? [call('get', 'virtualmachines', "check a VM's run strategy before a restart", KUBEVIRT)]
      : []),
  ],
  plan: (settings: AccessSettings): ApiAccess[] => [
    ...READS,
    ...(settings.kubevirtRestart ? [call('get', 'virtualmachines', "check a VM's run strategy", KUBEVIRT)] : []),
  ],
  // Restore stops drainbridge's live migrations of the request first.
  restore: (): ApiAccess[] => [
    call('list', 'virtualmachineinstances', 'find the VMs drainbridge was moving', KUBEVIRT),
    call('list', 'virtualmachineinstancemigrations', "find drainbridge's live migrations still running", KUBEVIRT),
    ABORTS,
  ],
};
