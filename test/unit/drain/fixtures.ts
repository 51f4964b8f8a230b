/** Pod, PDB and node builders for the drain and ledger unit tests. */
import type { V1Node, V1Pod, V1PodDisruptionBudget } from '@kubernetes/client-node';

let counter = 0;

export interface PodSpec {
  name: string;
  namespace?: string;
  owner?: 'ReplicaSet' | 'DaemonSet' | 'StatefulSet' | 'Job' | 'VirtualMachineInstance';
  ownerName?: string;
  phase?: 'Pending' | 'Running' | 'Succeeded' | 'Failed';
  emptyDir?: boolean;
  mirror?: boolean;
  labels?: Record<string, string>;
  deletedSecondsAgo?: number;
  uid?: string;
}

export const NOW = new Date('2026-11-21T03:00:00Z');

export function pod(spec: PodSpec): V1Pod {
  counter++;
  const metadata: NonNullable<V1Pod['metadata']> = {
    name: spec.name,
    namespace: spec.namespace ?? 'default',
    uid: spec.uid ?? `uid-${spec.name}-${counter}`,
    labels: spec.labels ?? {},
    annotations: spec.mirror ? { 'kubernetes.io/config.mirror': 'abc' } : {},
  };
  if (spec.owner) {
    metadata.ownerReferences = [
      { apiVersion: 'v1', kind: spec.owner, name: spec.ownerName ?? `${spec.name}-owner`, uid: 'o', controller: true },
    ];
  }
  if (spec.deletedSecondsAgo !== undefined) {
    metadata.deletionTimestamp = new Date(NOW.getTime() - spec.deletedSecondsAgo * 1000);
  }
  return {
    metadata,
    spec: {
      nodeName: 'node-a',
      containers: [{ name: 'c' }],
      volumes: spec.emptyDir ? [{ name: 'scratch', emptyDir: {} }] : [],
    },
    status: { phase: spec.phase ?? 'Running' },
  };
}

export function pdb(
  name: string,
  matchLabels: Record<string, string>,
  disruptionsAllowed: number,
  namespace = 'default',
): V1PodDisruptionBudget {
  return {
    metadata: { name, namespace },
    spec: { selector: { matchLabels }, minAvailable: 1 },
    status: { disruptionsAllowed, currentHealthy: 1, desiredHealthy: 1, expectedPods: 1 },
  };
}

export interface NodeSpec {
  name?: string;
  unschedulable?: boolean;
  annotations?: Record<string, string>;
  taints?: { key: string; effect: string; value?: string }[];
  resourceVersion?: string;
}

export function node(spec: NodeSpec = {}): V1Node {
  return {
    metadata: {
      name: spec.name ?? 'node-a',
      uid: 'node-uid',
      resourceVersion: spec.resourceVersion ?? '100',
      annotations: { ...spec.annotations },
    },
    spec: { unschedulable: spec.unschedulable, taints: spec.taints },
  };
}
