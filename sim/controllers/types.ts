/**
 * Typed views of the stored objects the control loops read and write. The store holds plain
 * `KubeObject`s; these interfaces name the fields the loops touch, everything else passes through.
 */
import type { SchedulingNode, SchedulingPod, Toleration } from '../../lib/clients/kube/scheduling.ts';
import type { LabelSelector } from '../../lib/clients/kube/selectors.ts';
import type { KubeObject, ObjectMeta, ResourceRef } from '../store/types.ts';

/** The resources the loops use, as store refs. */
export const REFS = {
  pods: { group: '', resource: 'pods' },
  nodes: { group: '', resource: 'nodes' },
  events: { group: '', resource: 'events' },
  namespaces: { group: '', resource: 'namespaces' },
  deployments: { group: 'apps', resource: 'deployments' },
  replicaSets: { group: 'apps', resource: 'replicasets' },
  statefulSets: { group: 'apps', resource: 'statefulsets' },
  daemonSets: { group: 'apps', resource: 'daemonsets' },
  jobs: { group: 'batch', resource: 'jobs' },
  pdbs: { group: 'policy', resource: 'poddisruptionbudgets' },
} as const satisfies Record<string, ResourceRef>;

export interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
  lastProbeTime?: string | null;
  lastUpdateTime?: string;
}

export interface Container {
  name: string;
  image?: string;
  [key: string]: unknown;
}

export interface PodSpec {
  nodeName?: string;
  schedulerName?: string;
  restartPolicy?: string;
  terminationGracePeriodSeconds?: number;
  containers: Container[];
  initContainers?: Container[];
  tolerations?: Toleration[];
  nodeSelector?: Record<string, string>;
  affinity?: NonNullable<SchedulingPod['spec']>['affinity'];
  hostNetwork?: boolean;
  hostname?: string;
  subdomain?: string;
  [key: string]: unknown;
}

export interface ContainerStatus {
  name: string;
  ready: boolean;
  started?: boolean;
  restartCount: number;
  image: string;
  imageID: string;
  containerID?: string;
  state: Record<string, unknown>;
}

export interface PodStatus {
  phase?: string;
  conditions?: Condition[];
  containerStatuses?: ContainerStatus[];
  hostIP?: string;
  hostIPs?: { ip: string }[];
  podIP?: string;
  podIPs?: { ip: string }[];
  startTime?: string;
  qosClass?: string;
  reason?: string;
  message?: string;
  [key: string]: unknown;
}

export interface Pod extends KubeObject {
  metadata: ObjectMeta;
  spec: PodSpec;
  status?: PodStatus;
}

export interface PodTemplate {
  metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: PodSpec;
}

export interface Node extends KubeObject {
  metadata: ObjectMeta & { name: string };
  spec?: NonNullable<SchedulingNode['spec']> & { podCIDR?: string; providerID?: string };
  status?: {
    allocatable?: Record<string, string>;
    capacity?: Record<string, string>;
    conditions?: Condition[];
    addresses?: { type: string; address: string }[];
    [key: string]: unknown;
  };
}

/** ReplicaSet, Deployment, StatefulSet, DaemonSet, Job: a selector and a pod template. */
export interface Workload extends KubeObject {
  spec: {
    replicas?: number;
    selector?: LabelSelector;
    template: PodTemplate;
    [key: string]: unknown;
  };
  status?: Record<string, unknown>;
}

/** Narrows a stored object to a typed view. The store validated kind and envelope on write. */
export function view<T extends KubeObject>(object: KubeObject): T {
  return object as T;
}
