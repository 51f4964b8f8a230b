/**
 * The simulated KubeVirt: CRDs and KubeVirt CR, virt-api's admission webhooks, and the loops of
 * virt-controller and virt-handler that drainbridge meets — VMI lifecycle with launcher pods,
 * VirtualMachine run strategies, per-VMI PDBs, migrations, evacuation. See README.md in the parent
 * folder for what is modelled and what is not.
 */

import type { Context, Controller } from '../runtime.ts';
import { tolerateRace } from '../runtime.ts';
import { REFS } from '../types.ts';
import { KV_REFS, LABELS } from './api.ts';
import { type ClusterConfig, clusterConfig } from './config.ts';
import type { KubeVirtContext } from './context.ts';
import { ensureKubeVirtInstalled, KUBEVIRT_NAME, KUBEVIRT_NAMESPACE } from './crds.ts';
import { startDisruptionBudgetController } from './disruption-budget.ts';
import { startEvacuationController } from './evacuation.ts';
import { KubeVirtFaults } from './faults.ts';
import { MigrationHistory } from './history.ts';
import { startMigrationController } from './migration-controller.ts';
import { type KubeVirtOptions, resolveTimings } from './options.ts';
import { evictionWebhook, migrationWebhook } from './virt-api.ts';
import { startVmController } from './vm-controller.ts';
import { startVmiController } from './vmi-controller.ts';

export type { EvictionStrategy, MigrationPhase, RunStrategy } from './api.ts';
export { ANNOTATIONS, KV_REFS, LABELS, SIM_ANNOTATIONS } from './api.ts';
export type { ClusterConfig } from './config.ts';
export { DEFAULT_CONFIG } from './config.ts';
export { KUBEVIRT_NAME, KUBEVIRT_NAMESPACE, kubeVirtCr, kubeVirtCrds, kubeVirtInstallObjects } from './crds.ts';
export { DEFAULT_FAILURE_REASON, KubeVirtFaults, type MigrationFault } from './faults.ts';
export type { MigrationRecord, PhaseAt } from './history.ts';
export { MigrationHistory } from './history.ts';
export { type KubeVirtOptions, type KubeVirtTimings, resolveTimings } from './options.ts';
export { EVICTION_WEBHOOK, MIGRATION_WEBHOOK } from './virt-api.ts';

/** `spec.configuration.migrations` fields a test may change on the KubeVirt CR. */
export interface MigrationSettings {
  readonly parallelMigrationsPerCluster?: number;
  readonly parallelOutboundMigrationsPerNode?: number;
  readonly progressTimeout?: number;
  readonly completionTimeoutPerGiB?: number;
}

/** The running simulated KubeVirt, as tests drive it. */
export interface KubeVirt {
  /** Inject failures, hangs and non-migratable VMIs. */
  readonly faults: KubeVirtFaults;
  /** Every migration seen, with its phases over simulated time. */
  readonly history: MigrationHistory;
  /** The effective cluster configuration (KubeVirt CR over defaults). */
  config(): ClusterConfig;
  /** Merges into the KubeVirt CR's `spec.configuration.migrations` (as `kubectl patch kv` would). */
  setMigrationSettings(settings: MigrationSettings): void;
  /** Sets the cluster-wide `spec.configuration.evictionStrategy`. */
  setEvictionStrategy(strategy: string): void;
  stop(): void;
}

/** virt-handler labels every node it runs on `kubevirt.io/schedulable=true`; launcher pods select on it. */
function startNodeLabeller(context: Context): Controller {
  const label = (name: string): void => {
    const node = context.store.get(REFS.nodes, undefined, name);
    if (!node || node.metadata.labels?.[LABELS.schedulable] !== undefined) return;
    tolerateRace(() =>
      context.store.mutate(REFS.nodes, { name }, (copy) => {
        copy.metadata.labels = { ...copy.metadata.labels, [LABELS.schedulable]: 'true' };
        return copy;
      }),
    );
  };
  const unsubscribe = context.subscribe(REFS.nodes, (event) => {
    if (event.type !== 'DELETED') label(event.object.metadata.name ?? '');
  });
  return { stop: unsubscribe };
}

function updateConfiguration(context: Context, change: (configuration: Record<string, unknown>) => void): void {
  context.store.mutate(KV_REFS.kubevirts, { namespace: KUBEVIRT_NAMESPACE, name: KUBEVIRT_NAME }, (copy) => {
    const spec = (copy.spec ?? {}) as { configuration?: Record<string, unknown> };
    const configuration = structuredClone(spec.configuration ?? {});
    change(configuration);
    copy.spec = { ...spec, configuration };
    return copy;
  });
}

/** Installs what is missing (CRDs, KubeVirt CR) and starts every KubeVirt component on the context's store. */
export function startKubeVirt(context: Context, options: KubeVirtOptions = {}): KubeVirt {
  const timings = resolveTimings(options.timings);
  ensureKubeVirtInstalled(context.store, options.configuration);
  const kv: KubeVirtContext = { context, faults: new KubeVirtFaults(), timings };
  const history = new MigrationHistory(context.store);
  history.start();
  const removeHooks = [
    context.store.admission.add(evictionWebhook(context.store)),
    context.store.admission.add(migrationWebhook(context.store)),
  ];
  const running: Controller[] = [
    startNodeLabeller(context),
    startVmiController(kv),
    startVmController(kv),
    startDisruptionBudgetController(kv),
    startMigrationController(kv),
    startEvacuationController(kv),
  ];
  return {
    faults: kv.faults,
    history,
    config: () => clusterConfig(context.store),
    setMigrationSettings(settings) {
      updateConfiguration(context, (configuration) => {
        configuration.migrations = { ...(configuration.migrations as object | undefined), ...settings };
      });
    },
    setEvictionStrategy(strategy) {
      updateConfiguration(context, (configuration) => {
        configuration.evictionStrategy = strategy;
      });
    },
    stop() {
      for (const remove of removeHooks) remove();
      for (const controller of running) controller.stop();
      history.stop();
    },
  };
}
