/**
 * What one pass (or `drainbridge plan`) reads about a node's VMs: KubeVirt's settings, the VMIs on the
 * node, the launcher pods on it, every migration in the cluster, the VMIs of launcher pods on the node
 * that KubeVirt does not report there (a VMI that moved away leaves its old launcher pod behind for a
 * moment), and — only when the restart opt-in may apply — the VirtualMachines that own VMIs which cannot
 * migrate. Reads only.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { KubeVirtApi } from '../../clients/kubevirt/api.ts';
import {
  KUBEVIRT_DOMAIN_ANNOTATION,
  KUBEVIRT_LABELS,
  type KubeVirtSettings,
  type VirtualMachine,
  type Vmi,
  type Vmim,
} from './model.ts';

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
  /** By uid: the VMIs of active launcher pods on the node that KubeVirt reports elsewhere (or nowhere yet). */
  readonly elsewhere: ReadonlyMap<string, Vmi>;
  /** The VirtualMachine owning a VMI (`namespace/name` of the VMI), where it was looked up. */
  readonly owners: ReadonlyMap<string, VirtualMachine | undefined>;
}

/** The VMI a launcher pod runs (its controlling owner; KubeVirt's `kubevirt.io/domain` annotation names it too). */
export function launcherVmi(pod: V1Pod): { readonly namespace: string; readonly name: string; readonly uid: string } {
  const owner = pod.metadata?.ownerReferences?.find((ref) => ref.controller && ref.kind === 'VirtualMachineInstance');
  return {
    namespace: pod.metadata?.namespace ?? '',
    name: owner?.name ?? pod.metadata?.annotations?.[KUBEVIRT_DOMAIN_ANNOTATION] ?? '',
    uid: pod.metadata?.labels?.[KUBEVIRT_LABELS.createdBy] ?? owner?.uid ?? '',
  };
}

function isActivePod(pod: V1Pod): boolean {
  return pod.status?.phase !== 'Succeeded' && pod.status?.phase !== 'Failed';
}

/** The VMIs of the node's active launcher pods that no VMI on the node accounts for, read by name. */
async function vmisElsewhere(
  kubevirt: KubeVirtApi,
  onNode: readonly Vmi[],
  launcherPods: readonly V1Pod[],
): Promise<Map<string, Vmi>> {
  const known = new Set(onNode.map((vmi) => vmi.metadata.uid));
  const found = new Map<string, Vmi>();
  for (const pod of launcherPods.filter(isActivePod)) {
    const owner = launcherVmi(pod);
    if (!owner.name || !owner.uid || known.has(owner.uid) || found.has(owner.uid)) continue;
    const vmi = await kubevirt.vmiNamed(owner.namespace, owner.name);
    if (vmi?.metadata.uid === owner.uid) found.set(owner.uid, vmi);
  }
  return found;
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
  const elsewhere = vmis === undefined ? new Map<string, Vmi>() : await vmisElsewhere(kubevirt, vmis, launcherPods);
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
    elsewhere,
    owners,
  };
}
