/**
 * What one pass (or `drainbridge plan`) reads about a node's VMs: KubeVirt's settings, the VMIs on the
 * node, the launcher pods on it, every migration in the cluster, and — only when the restart opt-in may
 * apply — the VirtualMachines that own VMIs which cannot migrate. Reads only.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { KubeVirtApi } from './api.ts';
import type { KubeVirtSettings, VirtualMachine, Vmi, Vmim } from './model.ts';

export interface KubeVirtObservation {
  readonly nodeName: string;
  /** `--pod-selector`: launcher pods not matching it (and so their VMIs) are left alone, as kubectl would. */
  readonly podSelector: string;
  readonly settings: KubeVirtSettings;
  /** VMIs KubeVirt reports on the node (`status.nodeName`), final ones included. */
  readonly vmis: readonly Vmi[];
  /** Launcher pods on the node matching `--pod-selector`, any phase. */
  readonly launcherPods: readonly V1Pod[];
  /** Every migration in the cluster, any phase. */
  readonly migrations: readonly Vmim[];
  /** The VirtualMachine owning a VMI (`namespace/name` of the VMI), where it was looked up. */
  readonly owners: ReadonlyMap<string, VirtualMachine | undefined>;
}

/** The controlling VirtualMachine of a VMI, if any (`namespace/name` of the VM). */
export function ownerVmName(vmi: Vmi): string | undefined {
  const owner = vmi.metadata.ownerReferences?.find((ref) => ref.controller && ref.kind === 'VirtualMachine');
  return owner ? owner.name : undefined;
}

export async function observeNode(
  kubevirt: KubeVirtApi,
  nodeName: string,
  settings: { podSelector: string; ownersOf?: (vmis: readonly Vmi[], settings: KubeVirtSettings) => readonly Vmi[] },
): Promise<KubeVirtObservation> {
  // Migrations first, then VMIs: a migration that ended between the two reads has already moved its
  // VMI (KubeVirt updates the VMI before it marks the migration Succeeded), so a VMI is never seen on the
  // node with its migration seen finished — which would ask for a second migration of a VMI that moved.
  const migrations = await kubevirt.migrations();
  const vmis = await kubevirt.vmisOnNode(nodeName);
  const [kvSettings, launcherPods] = await Promise.all([
    kubevirt.settings(vmis !== undefined),
    kubevirt.launcherPodsOnNode(nodeName, settings.podSelector),
  ]);
  const owners = new Map<string, VirtualMachine | undefined>();
  for (const vmi of settings.ownersOf?.(vmis ?? [], kvSettings) ?? []) {
    const vmName = ownerVmName(vmi);
    const key = `${vmi.metadata.namespace}/${vmi.metadata.name}`;
    owners.set(key, vmName ? await kubevirt.virtualMachine(vmi.metadata.namespace, vmName) : undefined);
  }
  return {
    nodeName,
    podSelector: settings.podSelector,
    settings: kvSettings,
    vmis: vmis ?? [],
    launcherPods,
    migrations,
    owners,
  };
}
