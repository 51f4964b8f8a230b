/**
 * A store plus running controllers for the control-loop tests, with builders for the objects the
 * tests create (tests wait with test/support/wait.ts).
 */
import { type ControllerOptions, type Controllers, startControllers } from '../../../sim/controllers/index.ts';
import { type ClosableStore, createStore } from '../../../sim/store/index.ts';
import type { KubeObject, ResourceRef } from '../../../sim/store/types.ts';

export const PODS: ResourceRef = { group: '', resource: 'pods' };
export const NODES: ResourceRef = { group: '', resource: 'nodes' };
export const EVENTS: ResourceRef = { group: '', resource: 'events' };
export const RS: ResourceRef = { group: 'apps', resource: 'replicasets' };
export const DEPLOYMENTS: ResourceRef = { group: 'apps', resource: 'deployments' };
export const STS: ResourceRef = { group: 'apps', resource: 'statefulsets' };
export const DS: ResourceRef = { group: 'apps', resource: 'daemonsets' };
export const JOBS: ResourceRef = { group: 'batch', resource: 'jobs' };
export const PDBS: ResourceRef = { group: 'policy', resource: 'poddisruptionbudgets' };

export interface Sim {
  readonly store: ClosableStore;
  readonly controllers: Controllers;
  close(): void;
}

/** A store at `speed` with every loop running; close it in `after`/`finally`. */
export function startSim(speed = 200, options: ControllerOptions = {}): Sim {
  const store = createStore({ speed });
  const controllers = startControllers(store, { podStartupDelayMs: 1000, jobPodRunMs: 2000, ...options });
  return {
    store,
    controllers,
    close() {
      controllers.stop();
      store.close();
    },
  };
}

export function node(
  name: string,
  extra: { unschedulable?: boolean; pods?: number; labels?: Record<string, string> } = {},
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: { 'kubernetes.io/hostname': name, ...extra.labels } },
    spec: { unschedulable: extra.unschedulable ?? false },
    status: {
      allocatable: { pods: String(extra.pods ?? 110), cpu: '8', memory: '32Gi' },
      capacity: { pods: String(extra.pods ?? 110), cpu: '8', memory: '32Gi' },
      conditions: [
        { type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status' },
      ],
    },
  };
}

export function template(labels: Record<string, string>, spec: Record<string, unknown> = {}): Record<string, unknown> {
  return { metadata: { labels }, spec: { containers: [{ name: 'app', image: 'nginx:1.27' }], ...spec } };
}

export function workload(kind: string, name: string, spec: Record<string, unknown>, namespace = 'default'): KubeObject {
  const apiVersion = kind === 'Job' ? 'batch/v1' : 'apps/v1';
  return { apiVersion, kind, metadata: { name, namespace }, spec };
}

export function pods(store: ClosableStore, selector?: string): KubeObject[] {
  return store.list(PODS, selector ? { labelSelector: selector } : {}).items;
}

export function phase(pod: KubeObject): string | undefined {
  return (pod.status as { phase?: string } | undefined)?.phase;
}

export function nodeNameOf(pod: KubeObject): string | undefined {
  return (pod.spec as { nodeName?: string } | undefined)?.nodeName;
}

export function isReady(pod: KubeObject): boolean {
  const conditions = (pod.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? [];
  return conditions.some((c) => c.type === 'Ready' && c.status === 'True');
}

/** Sets `spec.unschedulable` as `kubectl cordon` does. */
export function cordon(store: ClosableStore, name: string): void {
  store.mutate(NODES, { name }, (copy) => {
    (copy.spec as Record<string, unknown>).unschedulable = true;
    return copy;
  });
}
