/**
 * Every KubeVirt API call drainbridge makes, through the one Kubernetes client (lib/clients/kube: timeouts,
 * retries of transient errors, named errors). deploy/base/rbac/drainbridge.yaml grants exactly these:
 * list kubevirts, list virtualmachineinstances, get virtualmachines, list/watch/create/delete
 * virtualmachineinstancemigrations (plus pods list and pods/eviction, which the drain has already).
 *
 * A cluster without KubeVirt answers 404 for its resources: that reads as "no KubeVirt" (no VMIs,
 * KubeVirt's defaults), never as an error.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { KubeClient } from '../kube/client.ts';
import { isNotFound } from '../kube/errors.ts';
import type { ChangeSignal, WatchedList } from '../kube/watched-list.ts';
import {
  EVICTION_STRATEGIES,
  type EvictionStrategy,
  KUBEVIRT_DEFAULTS,
  KUBEVIRT_GROUP,
  KUBEVIRT_LABELS,
  KUBEVIRT_PLURALS,
  KUBEVIRT_VERSION,
  type KubeVirtSettings,
  type VirtualMachine,
  type Vmi,
  type Vmim,
} from './types.ts';

/** `kubevirt.io=virt-launcher`: KubeVirt's label on every launcher pod. */
export const LAUNCHER_SELECTOR = 'kubevirt.io=virt-launcher';

interface KubeVirtCr {
  readonly metadata?: { readonly deletionTimestamp?: string };
  readonly status?: { readonly phase?: string };
  readonly spec?: {
    readonly configuration?: {
      readonly evictionStrategy?: string;
      readonly migrations?: {
        readonly parallelMigrationsPerCluster?: number;
        readonly parallelOutboundMigrationsPerNode?: number;
      };
    };
  };
}

const api = (plural: string) => ({ group: KUBEVIRT_GROUP, version: KUBEVIRT_VERSION, plural });

function positiveOr(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : fallback;
}

/** The settings of the deployed KubeVirt CR (`ClusterConfig.GetConfigFromKubeVirtCR`: one with a phase, not deleting). Pure. */
export function settingsOf(crs: readonly KubeVirtCr[], vmisServed: boolean): KubeVirtSettings {
  const cr = crs.find((kv) => !kv.metadata?.deletionTimestamp && Boolean(kv.status?.phase));
  const configuration = cr?.spec?.configuration;
  const strategy = configuration?.evictionStrategy;
  return {
    installed: vmisServed,
    evictionStrategy: EVICTION_STRATEGIES.includes(strategy as EvictionStrategy)
      ? (strategy as EvictionStrategy)
      : KUBEVIRT_DEFAULTS.evictionStrategy,
    parallelMigrationsPerCluster: positiveOr(
      configuration?.migrations?.parallelMigrationsPerCluster,
      KUBEVIRT_DEFAULTS.parallelMigrationsPerCluster,
    ),
    parallelOutboundMigrationsPerNode: positiveOr(
      configuration?.migrations?.parallelOutboundMigrationsPerNode,
      KUBEVIRT_DEFAULTS.parallelOutboundMigrationsPerNode,
    ),
  };
}

export class KubeVirtApi {
  readonly #kube: KubeClient;

  constructor(kube: KubeClient) {
    this.#kube = kube;
  }

  /** Lists a KubeVirt resource in every namespace; undefined when KubeVirt does not serve it (404). */
  async #listAll<T>(plural: string, labelSelector?: string): Promise<T[] | undefined> {
    try {
      return await this.#kube.listAll<T>(`list ${plural}.${KUBEVIRT_GROUP}`, async (page, options) => {
        const found: unknown = await this.#kube.custom.listClusterCustomObject(
          { ...api(plural), ...page, ...(labelSelector ? { labelSelector } : {}) },
          options,
        );
        return found as { items: T[]; metadata?: { _continue?: string } };
      });
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  /** The cluster's KubeVirt settings (KubeVirt's defaults without a deployed KubeVirt CR). */
  async settings(vmisServed: boolean): Promise<KubeVirtSettings> {
    return settingsOf((await this.#listAll<KubeVirtCr>(KUBEVIRT_PLURALS.kubevirts)) ?? [], vmisServed);
  }

  /** The VMIs KubeVirt reports on the node (by its `kubevirt.io/nodeName` label, checked against `status.nodeName`); undefined without KubeVirt. */
  async vmisOnNode(nodeName: string): Promise<Vmi[] | undefined> {
    const listed = await this.#listAll<Vmi>(KUBEVIRT_PLURALS.vmis, `${KUBEVIRT_LABELS.nodeName}=${nodeName}`);
    return listed?.filter((vmi) => vmi.status?.nodeName === nodeName);
  }

  /**
   * The VMI `namespace/name`, wherever it runs (listed by name: the RBAC grants list, not get); undefined
   * when it is gone or KubeVirt is not installed.
   */
  async vmiNamed(namespace: string, name: string): Promise<Vmi | undefined> {
    try {
      const found: unknown = await this.#kube.call(`list virtualmachineinstances ${namespace}/${name}`, (options) =>
        this.#kube.custom.listNamespacedCustomObject(
          { ...api(KUBEVIRT_PLURALS.vmis), namespace, fieldSelector: `metadata.name=${name}` },
          options,
        ),
      );
      return (found as { items?: Vmi[] }).items?.find((vmi) => vmi.metadata.name === name);
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  /** Every migration in the cluster (the limits count everyone's); [] without KubeVirt. */
  async migrations(labelSelector?: string): Promise<Vmim[]> {
    return (await this.#listAll<Vmim>(KUBEVIRT_PLURALS.vmims, labelSelector)) ?? [];
  }

  /**
   * The migrations matching `labelSelector`, listed now and kept current by a watch from that list's
   * resourceVersion (not opened yet: the caller starts it), with the signal the events `wakes` picks set;
   * undefined without KubeVirt. The watch module is loaded here, at first use: processes that only read
   * the branches' definitions (the forwarder) never load client-node's watch.
   */
  async watchedMigrations(
    labelSelector: string,
    wakes: (type: string, vmim: Vmim) => boolean,
  ): Promise<{ list: WatchedList<Vmim>; signal: ChangeSignal } | undefined> {
    const plural = KUBEVIRT_PLURALS.vmims;
    let listed: { items: Vmim[]; resourceVersion: string };
    try {
      listed = await this.#kube.listAllAt<Vmim>(`list ${plural}.${KUBEVIRT_GROUP}`, async (page, options) => {
        const found: unknown = await this.#kube.custom.listClusterCustomObject(
          { ...api(plural), ...page, labelSelector },
          options,
        );
        return found as { items: Vmim[]; metadata?: { _continue?: string; resourceVersion?: string } };
      });
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
    const { ChangeSignal, WatchedList } = await import('../kube/watched-list.ts');
    const path = `/apis/${KUBEVIRT_GROUP}/${KUBEVIRT_VERSION}/${plural}`;
    const signal = new ChangeSignal();
    const spec = { path, query: { labelSelector }, wakes };
    return { list: new WatchedList<Vmim>(listed.items, listed.resourceVersion, spec, signal), signal };
  }

  /** The launcher pods on the node, with `--pod-selector` (if any) applied as kubectl applies it. */
  launcherPodsOnNode(nodeName: string, podSelector: string): Promise<V1Pod[]> {
    const labelSelector = podSelector ? `${LAUNCHER_SELECTOR},${podSelector}` : LAUNCHER_SELECTOR;
    return this.#kube.listPodsOnNode(nodeName, { labelSelector });
  }

  async virtualMachine(namespace: string, name: string): Promise<VirtualMachine | undefined> {
    try {
      const found: unknown = await this.#kube.call(`get virtualmachine ${namespace}/${name}`, (options) =>
        this.#kube.custom.getNamespacedCustomObject({ ...api(KUBEVIRT_PLURALS.vms), namespace, name }, options),
      );
      return found as VirtualMachine;
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  /** Creates a migration. One attempt: the caller reads virt-api's refusals (400) and AlreadyExists (409). */
  async createMigration(body: Vmim & { apiVersion: string; kind: string }): Promise<Vmim> {
    const { namespace, name } = body.metadata;
    const created: unknown = await this.#kube.call(
      `create virtualmachineinstancemigration ${namespace}/${name}`,
      (options) =>
        this.#kube.custom.createNamespacedCustomObject({ ...api(KUBEVIRT_PLURALS.vmims), namespace, body }, options),
      { retry: false },
    );
    return created as Vmim;
  }

  /** Deletes a migration (KubeVirt aborts it if it runs), with a uid precondition; a gone one is fine. */
  async deleteMigration(vmim: Vmim): Promise<void> {
    const { namespace, name, uid } = vmim.metadata;
    try {
      await this.#kube.call(`delete virtualmachineinstancemigration ${namespace}/${name}`, (options) =>
        this.#kube.custom.deleteNamespacedCustomObject(
          { ...api(KUBEVIRT_PLURALS.vmims), namespace, name, body: { preconditions: { uid } } },
          options,
        ),
      );
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }

  /** Evicts a launcher pod (only the restart opt-in does; its VM stops and starts again elsewhere). */
  evictLauncherPod(pod: V1Pod): Promise<void> {
    return this.#kube.evictPod(pod);
  }
}
