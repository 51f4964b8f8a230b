/**
 * drainbridge's own pod filters, in kubectl's `PodFilter` shape (filters.ts): which of the node's pods
 * a pod branch moves at all. KubeVirt launcher pods are never evicted by a pod branch — their VM's
 * branch moves them by live migration; pods matching `infraPodSelector` (nova-compute, libvirt, agents)
 * belong to the `infra-pods` branch, which runs after the VM branches, and every other pod to `pods`.
 * A pod handed off stops the chain (`delete: false`), as kubectl's first "don't delete" does.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { matchesAll, type Requirement } from '../../clients/kube/selectors.ts';
import { OKAY, type PodDeleteStatus, type PodFilter } from './filters.ts';

/** The pod drain's two branches. */
export type PodBranch = 'pods' | 'infra-pods';

/** `kubevirt.io=virt-launcher`: the pod that runs a KubeVirt VM; its eviction can shut the VM down. */
export const LAUNCHER_LABEL = Object.freeze({ key: 'kubevirt.io', value: 'virt-launcher' });

export function isLauncherPod(pod: V1Pod): boolean {
  return pod.metadata?.labels?.[LAUNCHER_LABEL.key] === LAUNCHER_LABEL.value;
}

const LAUNCHER: PodDeleteStatus = Object.freeze({
  delete: false,
  verdict: 'Skip',
  message: 'KubeVirt launcher pod: its VM is live-migrated, never evicted',
  handOff: 'vm-branch',
});

export const launcherPodFilter: PodFilter = (pod) => (isLauncherPod(pod) ? LAUNCHER : OKAY);

/** Hands each pod that belongs to the other pod branch over to it. */
export function infraPodFilter(branch: PodBranch, infra: readonly Requirement[]): PodFilter {
  const takesInfraPods = branch === 'infra-pods';
  const other = branch === 'pods' ? 'infra-pods' : 'pods';
  const handedOff: PodDeleteStatus = Object.freeze({
    delete: false,
    verdict: 'Skip',
    message: `held for the ${other} branch`,
    handOff: 'other-pod-branch',
  });
  return (pod) => {
    const isInfra = infra.length > 0 && matchesAll(infra, pod.metadata?.labels);
    return isInfra === takesInfraPods ? OKAY : handedOff;
  };
}

/** The filters of one pod branch, in order: VM pods first (a launcher pod is never an infra pod). */
export function podBranchFilters(branch: PodBranch, infra: readonly Requirement[]): readonly PodFilter[] {
  return [launcherPodFilter, infraPodFilter(branch, infra)];
}
