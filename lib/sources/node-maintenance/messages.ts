/**
 * node-maintenance-operator's words, so that tooling and runbooks written for NMO match drainbridge's
 * statuses and Events: the admission errors of its webhook (internal/webhook/v1beta1/
 * nodemaintenance_webhook.go) and the Event reasons and messages of pkg/utils/events.go.
 */

export const NMO_ERRORS = Object.freeze({
  nodeNotFound: (node: string) => `invalid nodeName, no node with name ${node} found`,
  maintenanceExists: (node: string) => `invalid nodeName, a NodeMaintenance for node ${node} already exists`,
  controlPlaneQuorum: (node: string) =>
    `can not put master/control-plane node into maintenance at this moment, disrupting node ${node} will violate etcd quorum`,
  nodeNameUpdate: "updating spec.NodeName isn't allowed",
  /** The controller's error for a node gone while in maintenance (apimachinery's NotFound). */
  nodeGone: (node: string) => `nodes "${node}" not found`,
});

export type NmoEventReason =
  | 'BeginMaintenance'
  | 'FailedMaintenance'
  | 'SucceedMaintenance'
  | 'UncordonNode'
  | 'RemovedMaintenance';

export const NMO_EVENT_MESSAGES: Readonly<Record<NmoEventReason, string>> = Object.freeze({
  BeginMaintenance: 'Begin a node maintenance',
  FailedMaintenance: 'Failed a node maintenance',
  SucceedMaintenance: 'Node maintenance was succeeded',
  UncordonNode: 'Uncordon a node',
  RemovedMaintenance: 'Removed a node maintenance',
});
