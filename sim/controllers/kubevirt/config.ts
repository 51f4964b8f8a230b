/**
 * The cluster-wide KubeVirt configuration as virt-controller and virt-api see it: the KubeVirt CR's
 * `spec.configuration` over KubeVirt's defaults, read fresh on every use so a test (or `kubectl
 * patch kv`) can change the limits while migrations run.
 *
 * Defaults are those of `pkg/virt-config/virt-config.go` and `pkg/virt-config/configuration.go`:
 * 5 parallel migrations per cluster, 2 outbound per node, progress timeout 150 s, completion timeout
 * 150 s per GiB, drain taint `kubevirt.io/drain`, cluster eviction strategy `None`. As
 * `ClusterConfig.GetConfigFromKubeVirtCR` does, only a KubeVirt CR that reports a phase and is not
 * being deleted counts.
 */
import type { ObjectStore } from '../../store/types.ts';
import { type EvictionStrategy, isMigratable, KV_REFS, type Vmi } from './api.ts';

export interface ClusterConfig {
  readonly evictionStrategy: EvictionStrategy;
  readonly parallelMigrationsPerCluster: number;
  readonly parallelOutboundMigrationsPerNode: number;
  /** Seconds without progress before virt-launcher aborts a migration. */
  readonly progressTimeout: number;
  /** Seconds per GiB of guest memory a migration may take before it is aborted. */
  readonly completionTimeoutPerGiB: number;
  readonly nodeDrainTaintKey: string;
}

export const DEFAULT_CONFIG: ClusterConfig = {
  evictionStrategy: 'None',
  parallelMigrationsPerCluster: 5,
  parallelOutboundMigrationsPerNode: 2,
  progressTimeout: 150,
  completionTimeoutPerGiB: 150,
  nodeDrainTaintKey: 'kubevirt.io/drain',
};

interface Configuration {
  evictionStrategy?: EvictionStrategy;
  migrations?: {
    parallelMigrationsPerCluster?: number;
    parallelOutboundMigrationsPerNode?: number;
    progressTimeout?: number;
    completionTimeoutPerGiB?: number;
    nodeDrainTaintKey?: string;
  };
}

const numberOr = (value: unknown, fallback: number): number =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : fallback;

/** The effective configuration (defaults when no deployed KubeVirt CR exists). */
export function clusterConfig(store: ObjectStore): ClusterConfig {
  const cr = store
    .list(KV_REFS.kubevirts)
    .items.find(
      (kv) => !kv.metadata.deletionTimestamp && Boolean((kv.status as { phase?: string } | undefined)?.phase),
    );
  const configuration = ((cr?.spec as { configuration?: Configuration } | undefined)?.configuration ??
    {}) as Configuration;
  const migrations = configuration.migrations ?? {};
  return {
    evictionStrategy: configuration.evictionStrategy ?? DEFAULT_CONFIG.evictionStrategy,
    parallelMigrationsPerCluster: numberOr(
      migrations.parallelMigrationsPerCluster,
      DEFAULT_CONFIG.parallelMigrationsPerCluster,
    ),
    parallelOutboundMigrationsPerNode: numberOr(
      migrations.parallelOutboundMigrationsPerNode,
      DEFAULT_CONFIG.parallelOutboundMigrationsPerNode,
    ),
    progressTimeout: numberOr(migrations.progressTimeout, DEFAULT_CONFIG.progressTimeout),
    completionTimeoutPerGiB: numberOr(migrations.completionTimeoutPerGiB, DEFAULT_CONFIG.completionTimeoutPerGiB),
    nodeDrainTaintKey: migrations.nodeDrainTaintKey ?? DEFAULT_CONFIG.nodeDrainTaintKey,
  };
}

/** `migrations.VMIEvictionStrategy`: the VMI's own strategy, else the cluster's. */
export function evictionStrategyOf(vmi: Vmi, config: ClusterConfig): EvictionStrategy {
  return vmi.spec.evictionStrategy ?? config.evictionStrategy;
}

/** `migrations.VMIMigratableOnEviction`: LiveMigrate always, LiveMigrateIfPossible when migratable. */
export function migratesOnEviction(vmi: Vmi, config: ClusterConfig): boolean {
  const strategy = evictionStrategyOf(vmi, config);
  return strategy === 'LiveMigrate' || (strategy === 'LiveMigrateIfPossible' && isMigratable(vmi));
}
