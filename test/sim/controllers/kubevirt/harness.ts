/**
 * A simulator with KubeVirt for the KubeVirt tests: nodes, the KubeVirt CR, short timings, plain
 * HTTP (for the admission webhooks), builders for VMIs and VMs, and `until`, which re-checks a
 * condition on every store change of the resources it names — no fixed sleeps.
 */

import type { KubeVirt, KubeVirtOptions } from '../../../../sim/controllers/index.ts';
import { type Simulator, startSimulator } from '../../../../sim/index.ts';
import type { KubeObject, ObjectStore, ResourceRef } from '../../../../sim/store/types.ts';
import { api } from '../../helpers.ts';

export const VMIS: ResourceRef = { group: 'kubevirt.io', resource: 'virtualmachineinstances' };
export const VMIMS: ResourceRef = { group: 'kubevirt.io', resource: 'virtualmachineinstancemigrations' };
export const VMS: ResourceRef = { group: 'kubevirt.io', resource: 'virtualmachines' };
export const KUBEVIRTS: ResourceRef = { group: 'kubevirt.io', resource: 'kubevirts' };
export const PODS: ResourceRef = { group: '', resource: 'pods' };
export const PDBS: ResourceRef = { group: 'policy', resource: 'poddisruptionbudgets' };
export const NODES: ResourceRef = { group: '', resource: 'nodes' };
export const EVENTS: ResourceRef = { group: '', resource: 'events' };

export interface KvSim {
  readonly sim: Simulator;
  readonly store: ObjectStore;
  readonly kubevirt: KubeVirt;
  stop(): Promise<void>;
}

export interface KvSimOptions {
  readonly nodes?: readonly string[];
  readonly speed?: number;
  /** KubeVirt CR `spec.configuration`. */
  readonly configuration?: Record<string, unknown>;
  readonly kubevirt?: KubeVirtOptions['timings'];
}

/** Starts a simulator with KubeVirt on `nodes` (default node-1…node-3), namespace `vms`. */
export async function startKubeVirtSim(options: KvSimOptions = {}): Promise<KvSim> {
  const nodes = (options.nodes ?? ['node-1', 'node-2', 'node-3']).map((name) => ({ name }));
  const sim = await startSimulator({
    tls: false,
    speed: options.speed ?? 100,
    scenario: { name: 'kubevirt-test', nodes, namespaces: ['vms'], podStartupDelaySeconds: 1 },
    controllerOptions: {
      podStartupDelayMs: 1000,
      kubevirt: { configuration: options.configuration ?? {}, timings: options.kubevirt ?? {} },
    },
  });
  const kubevirt = sim.kubevirt;
  if (!kubevirt) throw new Error('the simulator did not start KubeVirt');
  return { sim, store: sim.store, kubevirt, stop: () => sim.stop() };
}

export interface VmiOptions {
  readonly strategy?: 'None' | 'LiveMigrate' | 'LiveMigrateIfPossible' | 'External';
  readonly memory?: string;
  /** Pins the VMI to a node (a nodeSelector on the hostname). */
  readonly node?: string;
  readonly notMigratable?: string;
  readonly migrationSeconds?: number;
  readonly namespace?: string;
}

/** A VMI manifest. */
export function vmi(name: string, options: VmiOptions = {}): KubeObject {
  const annotations: Record<string, string> = {};
  if (options.notMigratable) annotations['sim.drainbridge.io/not-migratable'] = options.notMigratable;
  if (options.migrationSeconds !== undefined) {
    annotations['sim.drainbridge.io/migration-seconds'] = String(options.migrationSeconds);
  }
  return {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachineInstance',
    metadata: {
      name,
      namespace: options.namespace ?? 'vms',
      labels: { 'kubevirt.io/vm': name },
      ...(Object.keys(annotations).length ? { annotations } : {}),
    },
    spec: {
      ...(options.strategy ? { evictionStrategy: options.strategy } : {}),
      ...(options.node ? { nodeSelector: { 'kubernetes.io/hostname': options.node } } : {}),
      domain: { devices: {}, resources: { requests: { memory: options.memory ?? '1Gi' } } },
    },
  };
}

/** A VirtualMachine manifest whose template is `vmi(name, options)`. */
export function vm(name: string, runStrategy: string, options: VmiOptions = {}): KubeObject {
  const template = vmi(name, options);
  return {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachine',
    metadata: { name, namespace: options.namespace ?? 'vms' },
    spec: {
      runStrategy,
      template: {
        metadata: { labels: template.metadata.labels, annotations: template.metadata.annotations },
        spec: template.spec,
      },
    },
  };
}

/**
 * Resolves with the first value `check` returns that is not undefined/false, checking now and after
 * every change of `refs`; rejects after `timeoutMs` of simulated time, naming `what`.
 */
export function until<T>(
  store: ObjectStore,
  what: string,
  check: () => T | undefined | false,
  options: { refs?: readonly ResourceRef[]; timeoutMs?: number } = {},
): Promise<T> {
  const refs = options.refs ?? [VMIS, VMIMS, PODS, PDBS, EVENTS];
  const timeoutMs = options.timeoutMs ?? 600_000;
  return new Promise((resolve, reject) => {
    let done = false;
    const watches: { stop(): void }[] = [];
    const finish = (error: Error | undefined, value?: T): void => {
      if (done) return;
      done = true;
      for (const watch of watches) watch.stop();
      timer.cancel();
      if (error) reject(error);
      else resolve(value as T);
    };
    const test = (): void => {
      if (done) return;
      try {
        const value = check();
        if (value !== undefined && value !== false) finish(undefined, value);
      } catch (error) {
        finish(error as Error);
      }
    };
    const timer = store.clock.setTimeout(
      () => finish(new Error(`timed out after ${timeoutMs} simulated ms waiting for ${what}`)),
      timeoutMs,
    );
    for (const ref of refs) watches.push(store.watch(ref, { resourceVersion: store.currentResourceVersion() }, test));
    test();
  });
}

type Status = Record<string, unknown> & {
  phase?: string;
  nodeName?: string;
  conditions?: { type: string; status: string; reason?: string; message?: string }[];
  migrationState?: Record<string, unknown>;
  evacuationNodeName?: string;
};

export function statusOf(object: KubeObject | undefined): Status {
  return (object?.status ?? {}) as Status;
}

export function getVmi(store: ObjectStore, name: string, namespace = 'vms'): KubeObject | undefined {
  return store.get(VMIS, namespace, name);
}

/** Waits until the VMI is Running (and returns it). */
export function running(store: ObjectStore, name: string, namespace = 'vms'): Promise<KubeObject> {
  return until(store, `VMI ${name} Running`, () => {
    const found = getVmi(store, name, namespace);
    return statusOf(found).phase === 'Running' ? found : undefined;
  });
}

/** The VMI's launcher pods (any phase). */
export function launchers(store: ObjectStore, vmiObject: KubeObject): KubeObject[] {
  return store.list(PODS, {
    namespace: vmiObject.metadata.namespace,
    labelSelector: `kubevirt.io=virt-launcher,kubevirt.io/created-by=${vmiObject.metadata.uid}`,
  }).items;
}

/** The running launcher pod on the VMI's node. */
export function currentLauncher(store: ObjectStore, vmiObject: KubeObject): KubeObject | undefined {
  const node = statusOf(vmiObject).nodeName;
  return launchers(store, vmiObject).find(
    (pod) => (pod.spec as { nodeName?: string }).nodeName === node && statusOf(pod).phase === 'Running',
  );
}

/** Creates a migration through the API (virt-api's webhooks apply); returns the answer. */
export function postMigration(kv: KvSim, vmiName: string, name?: string) {
  return api(kv.sim, 'POST', '/apis/kubevirt.io/v1/namespaces/vms/virtualmachineinstancemigrations', {
    body: {
      apiVersion: 'kubevirt.io/v1',
      kind: 'VirtualMachineInstanceMigration',
      metadata: name ? { name } : { generateName: `${vmiName}-migration-` },
      spec: { vmiName },
    },
  });
}

/** Evicts a pod through the API (virt-api's eviction webhook applies). */
export function evict(kv: KvSim, pod: KubeObject, dryRun = false) {
  const { namespace, name } = pod.metadata;
  return api(kv.sim, 'POST', `/api/v1/namespaces/${namespace}/pods/${name}/eviction`, {
    body: {
      apiVersion: 'policy/v1',
      kind: 'Eviction',
      metadata: { name, namespace },
      ...(dryRun ? { deleteOptions: { dryRun: ['All'] } } : {}),
    },
  });
}

/** The phases a migration went through, from the history. */
export function phasesOf(kv: KvSim, name: string): string[] {
  return kv.kubevirt.history.migrations((r) => r.name === name).flatMap((r) => r.phases.map((p) => p.phase));
}

/** Waits until the named migration is final; returns its phases. */
export async function finished(kv: KvSim, name: string): Promise<string[]> {
  await kv.kubevirt.history.when(
    (history) =>
      history
        .migrations((r) => r.name === name)
        .some((r) => r.phases.some((p) => p.phase === 'Succeeded' || p.phase === 'Failed')),
    600_000,
  );
  return phasesOf(kv, name);
}

/** Sets `spec.unschedulable` (kubectl cordon). */
export function cordon(store: ObjectStore, node: string): void {
  store.mutate(NODES, { name: node }, (copy) => {
    (copy.spec as Record<string, unknown>).unschedulable = true;
    return copy;
  });
}

export function eventsFor(store: ObjectStore, object: KubeObject): { reason: string; message: string; type: string }[] {
  return store
    .list(EVENTS, { namespace: object.metadata.namespace })
    .items.filter((e) => (e.involvedObject as { uid?: string }).uid === object.metadata.uid)
    .map((e) => ({ reason: String(e.reason), message: String(e.message), type: String(e.type) }));
}
