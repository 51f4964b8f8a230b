/**
 * The KubeVirt section's cluster: node-1 runs 20 live-migratable VMs of mixed memory sizes (1–16 GiB),
 * node-2 and node-3 are empty; KubeVirt's default limits (2 outbound per node, 5 per cluster) written
 * out on the KubeVirt CR, and the simulator's migration time proportional to memory (transfer = base +
 * seconds per GiB). The sizes are listed out of size order, so a scheduler that hands slots out by name
 * is not accidentally the best one. Pure: returns the scenario as an object.
 */

/** Guest memory of vm-01 … vm-20, in GiB (87 GiB in all). */
export const VM_MEMORY_GIB: readonly number[] = [2, 16, 1, 4, 8, 1, 12, 2, 4, 1, 6, 2, 6, 1, 4, 2, 8, 1, 4, 2];

/** KubeVirt's defaults (pkg/virt-config): what the floor is computed from. */
export const KUBEVIRT_LIMITS = { parallelOutboundMigrationsPerNode: 2, parallelMigrationsPerCluster: 5 } as const;

/** Simulated seconds each migration step takes (the simulator's defaults, written out). */
export const MIGRATION_TIMINGS = {
  targetPreparationSeconds: 1,
  migrationStartSeconds: 0.5,
  transferBaseSeconds: 2,
  transferSecondsPerGiB: 1,
  sourceLauncherExitSeconds: 2,
} as const;

/** A target launcher pod starts this long after it is bound (the scenario's pod start-up delay). */
export const POD_STARTUP_SECONDS = 2;

export const KUBEVIRT_NODE = 'node-1';
export const VM_NAMESPACE = 'vms';

export function vmName(index: number): string {
  return `vm-${String(index + 1).padStart(2, '0')}`;
}

function virtualMachine(index: number, memoryGiB: number): Record<string, unknown> {
  const name = vmName(index);
  return {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachine',
    metadata: { name, namespace: VM_NAMESPACE },
    spec: {
      runStrategy: 'Always',
      template: {
        metadata: { labels: { 'kubevirt.io/vm': name } },
        spec: {
          evictionStrategy: 'LiveMigrate',
          // Preferred, not required: every VM starts on node-1 and may run anywhere after it is cordoned.
          affinity: {
            nodeAffinity: {
              preferredDuringSchedulingIgnoredDuringExecution: [
                {
                  weight: 100,
                  preference: {
                    matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [KUBEVIRT_NODE] }],
                  },
                },
              ],
            },
          },
          domain: { devices: {}, resources: { requests: { memory: `${memoryGiB}Gi` } } },
        },
      },
    },
  };
}

function node(name: string): Record<string, unknown> {
  return {
    name,
    labels: { 'node-role.kubernetes.io/worker': '' },
    capacity: { pods: 110, cpu: '64', memory: '256Gi' },
  };
}

/** The scenario at `speed`. */
export function kubevirtScenario(speed: number): Record<string, unknown> {
  return {
    name: 'kubevirt-20',
    description: `${VM_MEMORY_GIB.length} live-migratable VMs (1–16 GiB) on ${KUBEVIRT_NODE}, two empty nodes, KubeVirt's default limits`,
    speed,
    podStartupDelaySeconds: POD_STARTUP_SECONDS,
    nodes: [node(KUBEVIRT_NODE), node('node-2'), node('node-3')],
    namespaces: [VM_NAMESPACE],
    kubevirt: {
      configuration: { migrations: { ...KUBEVIRT_LIMITS } },
      timings: { ...MIGRATION_TIMINGS },
      virtualMachines: VM_MEMORY_GIB.map((gib, i) => virtualMachine(i, gib)),
    },
  };
}
