/**
 * Is medik8s node-maintenance-operator installed? Read from the NodeMaintenance CRD, which whoever
 * installed last owns: NMO's manifests label it `node-maintenance-operator`, and OLM (NMO's usual
 * installer) marks what it manages with `olm.managed` / `operators.coreos.com/<package>.<namespace>`
 * labels. drainbridge's own CRD (deploy/base/crds/nodemaintenances.yaml) carries none of them. Per CR, NMO's
 * finalizer says the same (decide.ts). Pure.
 */
import type { V1CustomResourceDefinition } from '@kubernetes/client-node';

/** Why NMO is taken to be installed, or undefined. */
export function nmoMarker(crd: Pick<V1CustomResourceDefinition, 'metadata'> | undefined): string | undefined {
  const labels = crd?.metadata?.labels ?? {};
  if (Object.hasOwn(labels, 'node-maintenance-operator')) {
    return 'the NodeMaintenance CRD carries the node-maintenance-operator label';
  }
  const olm = Object.keys(labels).find((key) => key.startsWith('operators.coreos.com/node-maintenance-operator'));
  if (olm) return `the NodeMaintenance CRD is managed by OLM for node-maintenance-operator (${olm})`;
  return undefined;
}
