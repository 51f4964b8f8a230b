/**
 * Which Kubernetes node an Azure Scheduled Events resource is. Pure.
 *
 * `Resources` holds VM names as the instance metadata service reports them (`compute.name`):
 *  - a standalone VM or a VM of a Flexible scale set: the VM's name (`my-vm-1`);
 *  - an instance of a Uniform scale set: `<scale set>_<instance id>` (`aks-nodepool1-12345678-vmss_3`).
 * A node's `spec.providerID`, set by the Azure cloud provider, names the same thing as an ARM path:
 *  - `azure:///subscriptions/<sub>/resourceGroups/<rg>/providers/Microsoft.Compute/virtualMachines/<vm>`;
 *  - `azure:///subscriptions/<sub>/resourceGroups/<rg>/providers/Microsoft.Compute/virtualMachineScaleSets/<ss>/virtualMachines/<id>`.
 * The node name is not enough on its own: AKS names a scale-set node after the instance's computer name
 * (`aks-nodepool1-12345678-vmss000003`, the id in base 36), not after the resource. So a resource maps to
 * the node whose providerID names it; only nodes without an Azure providerID (clusters run without the
 * cloud provider) are matched by name, case-insensitively, as hostname = VM name is the usual set-up
 * there. Azure names are case-insensitive. Anything else — no node, two nodes — is unmapped, and an
 * event with an unmapped resource is never approved.
 */
import type { V1Node } from '@kubernetes/client-node';

const VM = /\/providers\/microsoft\.compute\/virtualmachines\/([^/]+)$/i;
const SCALE_SET_VM = /\/providers\/microsoft\.compute\/virtualmachinescalesets\/([^/]+)\/virtualmachines\/([^/]+)$/i;

/** The Scheduled Events resource name a providerID stands for, or undefined when it is not an Azure VM. */
export function resourceNameOfProviderId(providerID: string): string | undefined {
  if (!providerID.toLowerCase().startsWith('azure://')) return undefined;
  const scaleSet = SCALE_SET_VM.exec(providerID);
  if (scaleSet) return `${scaleSet[1]}_${scaleSet[2]}`;
  return VM.exec(providerID)?.[1];
}

/** The resource name of a node: from its providerID, else (no Azure providerID) its own name. */
export function resourceNameOfNode(node: V1Node): string | undefined {
  const providerID = node.spec?.providerID ?? '';
  if (providerID.toLowerCase().startsWith('azure://')) return resourceNameOfProviderId(providerID);
  return node.metadata?.name;
}

/** The one node `resource` is, or undefined (no node, or more than one). */
export function nodeForResource(resource: string, nodes: readonly V1Node[]): V1Node | undefined {
  const wanted = resource.toLowerCase();
  const matches = nodes.filter((node) => resourceNameOfNode(node)?.toLowerCase() === wanted);
  return matches.length === 1 ? matches[0] : undefined;
}

export interface ResourceMapping {
  /** Resource → node name, for every resource that maps to exactly one node. */
  readonly nodes: ReadonlyMap<string, string>;
  /** Resources that map to no node (or to several). */
  readonly unmapped: readonly string[];
}

/** Maps every resource of an event. */
export function mapResources(resources: readonly string[], nodes: readonly V1Node[]): ResourceMapping {
  const mapped = new Map<string, string>();
  const unmapped: string[] = [];
  for (const resource of resources) {
    const node = nodeForResource(resource, nodes)?.metadata?.name;
    if (node) mapped.set(resource, node);
    else unmapped.push(resource);
  }
  return { nodes: mapped, unmapped };
}
