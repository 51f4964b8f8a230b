/**
 * medik8s node-maintenance-operator's NodeMaintenance (`nodemaintenance.medik8s.io/v1beta1`, cluster-
 * scoped), as its api/v1beta1 types define it, field names and casing included (`totalpods` is lower
 * case there), so tooling written for NMO reads drainbridge's status unchanged.
 */
import type { KubernetesObject } from '@kubernetes/client-node';

export const NODE_MAINTENANCE_API = Object.freeze({
  group: 'nodemaintenance.medik8s.io',
  version: 'v1beta1',
  plural: 'nodemaintenances',
});
export const NODE_MAINTENANCE_CRD = 'nodemaintenances.nodemaintenance.medik8s.io';

/**
 * Which NodeMaintenance API a source serves: medik8s's (NMO today) or the older KubeVirt/HCO group
 * (`nodemaintenance.kubevirt.io/v1beta1`), whose status spells the pod total `totalPods`. The same
 * controller serves both; only the group, the CRD and that field name differ.
 */
export interface NodeMaintenanceFlavor {
  readonly api: { readonly group: string; readonly version: string; readonly plural: string };
  readonly crd: string;
  /** The status field for all pods on the node at the start. */
  readonly totalPodsField: 'totalpods' | 'totalPods';
  /** The forwarder source's name (readiness, logs). */
  readonly source: string;
  /** The informer's resource name (readiness, watch-restart metrics). */
  readonly resource: string;
}

export const MEDIK8S_FLAVOR: NodeMaintenanceFlavor = Object.freeze({
  api: NODE_MAINTENANCE_API,
  crd: NODE_MAINTENANCE_CRD,
  totalPodsField: 'totalpods',
  source: 'node-maintenance',
  resource: 'nodemaintenances',
});

export const KUBEVIRT_FLAVOR: NodeMaintenanceFlavor = Object.freeze({
  api: Object.freeze({ group: 'nodemaintenance.kubevirt.io', version: 'v1beta1', plural: 'nodemaintenances' }),
  crd: 'nodemaintenances.nodemaintenance.kubevirt.io',
  totalPodsField: 'totalPods',
  source: 'node-maintenance-kubevirt',
  resource: 'nodemaintenances.nodemaintenance.kubevirt.io',
});

/** The status as this flavor stores it, read in medik8s's names (`totalPods` → `totalpods`). */
export function statusFromWire(flavor: NodeMaintenanceFlavor, nm: NodeMaintenance): NodeMaintenance {
  if (flavor.totalPodsField === 'totalpods' || !nm.status) return nm;
  const { totalPods, ...rest } = nm.status as NodeMaintenanceStatus & { totalPods?: number };
  return { ...nm, status: { ...rest, ...(totalPods !== undefined ? { totalpods: totalPods } : {}) } };
}

/** A status patch in medik8s's names, written in this flavor's. */
export function patchToWire(flavor: NodeMaintenanceFlavor, patch: Record<string, unknown>): Record<string, unknown> {
  if (flavor.totalPodsField === 'totalpods' || !Object.hasOwn(patch, 'totalpods')) return patch;
  const { totalpods, ...rest } = patch;
  return { ...rest, totalPods: totalpods };
}

/** drainbridge's finalizer: the CR stays until drainbridge has ended the maintenance. */
export const DRAINBRIDGE_FINALIZER = 'drainbridge.io/node-maintenance';
/** node-maintenance-operator's own finalizer (`v1beta1.NodeMaintenanceFinalizer`): NMO handles this CR. */
export const NMO_FINALIZER = 'foregroundDeleteNodeMaintenance';
/** The taint NMO puts on the nodes it maintains (internal/controller/taint.go). */
export const NMO_DRAIN_TAINT = 'medik8s.io/drain';
/** The label NMO puts on them, so medik8s remediators leave them alone (medik8s/common labels). */
export const NMO_EXCLUDE_LABEL = 'remediation.medik8s.io/exclude-from-remediation';
/**
 * The node drainbridge took this NodeMaintenance for, written with its finalizer (one conditional patch,
 * so it is the nodeName drainbridge read). Served and restored whatever `spec.nodeName` says later.
 */
export const SERVED_NODE_ANNOTATION = 'drainbridge.io/node-maintenance-node';

export type MaintenancePhase = 'Running' | 'Succeeded' | 'Failed';

export interface PodReference {
  namespace: string;
  name: string;
}

/** `NodeMaintenanceStatus`, every field optional as in NMO (`omitempty`). */
export interface NodeMaintenanceStatus {
  phase?: MaintenancePhase;
  /** Percentage of the pods up for eviction that have left. */
  drainProgress?: number;
  /** RFC 3339, when the status last changed. */
  lastUpdate?: string;
  lastError?: string;
  /** Names of the pods still to be evicted. */
  pendingPods?: string[];
  pendingPodsRefs?: PodReference[];
  /** All pods on the node at the start (NMO spells it `totalpods`). */
  totalpods?: number;
  /** Pods up for eviction at the start. */
  evictionPods?: number;
  errorOnLeaseCount?: number;
}

export interface NodeMaintenance extends KubernetesObject {
  metadata: {
    name?: string;
    uid?: string;
    resourceVersion?: string;
    finalizers?: string[];
    /** Present once deletion started (a string on the wire; only its presence is read). */
    deletionTimestamp?: Date;
    /** Orders two NodeMaintenances for one node: the older one is served (a string on the wire). */
    creationTimestamp?: Date;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  spec: { nodeName: string; reason?: string };
  status?: NodeMaintenanceStatus;
}

/** The maintenance request of a NodeMaintenance: `nm.<name>.<uid prefix>`, stable for the CR's life. */
export function nodeMaintenanceRequestId(nm: NodeMaintenance): string {
  const name = (nm.metadata.name ?? 'nm').slice(0, 100).replace(/[-.]+$/, '');
  return `nm.${name}.${(nm.metadata.uid ?? '').replace(/-/g, '').slice(0, 12)}`;
}
