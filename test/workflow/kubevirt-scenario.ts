/**
 * KubeVirt scenarios for the workflow suite: three schedulable nodes, VMs that start on node-1 unless
 * they say otherwise (preferred affinity), and optionally the ordinary pods of the `kubevirt` scenario (`shop/web` ×3 with
 * a PDB, a DaemonSet). Plus the reads the KubeVirt tests share (VMIs, drainbridge's migrations from the
 * request log).
 */
import type { MigrationRecord } from '../../sim/controllers/kubevirt/index.ts';
import { DRAINBRIDGE_USER, type WorkflowSim } from './harness.ts';

export interface VmSpec {
  readonly name: string;
  readonly strategy?: 'None' | 'LiveMigrate' | 'LiveMigrateIfPossible' | 'External';
  readonly notMigratable?: string;
  readonly runStrategy?: 'Always' | 'RerunOnFailure' | 'Manual' | 'Halted' | 'Once';
  /** Seconds the memory transfer takes (fixed, whatever the memory). */
  readonly migrationSeconds?: number;
  readonly memory?: string;
  /** The node it prefers, so starts on (default node-1). */
  readonly node?: string;
}

function preferring(node: string) {
  return {
    nodeAffinity: {
      preferredDuringSchedulingIgnoredDuringExecution: [
        {
          weight: 100,
          preference: { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [node] }] },
        },
      ],
    },
  };
}

const PREFER_NODE_1 = preferring('node-1');

function virtualMachine(vm: VmSpec) {
  const annotations: Record<string, string> = {};
  if (vm.notMigratable) annotations['sim.drainbridge.io/not-migratable'] = vm.notMigratable;
  if (vm.migrationSeconds !== undefined)
    annotations['sim.drainbridge.io/migration-seconds'] = String(vm.migrationSeconds);
  return {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachine',
    metadata: { name: vm.name, namespace: 'vms' },
    spec: {
      runStrategy: vm.runStrategy ?? 'Always',
      template: {
        metadata: { labels: { 'kubevirt.io/vm': vm.name }, annotations },
        spec: {
          ...(vm.strategy ? { evictionStrategy: vm.strategy } : {}),
          affinity: preferring(vm.node ?? 'node-1'),
          domain: { devices: {}, resources: { requests: { memory: vm.memory ?? '1Gi' } } },
        },
      },
    },
  };
}

const ORDINARY_PODS = {
  namespaces: ['shop', 'monitoring', 'vms'],
  workloads: [
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: 'shop', labels: { app: 'web' } },
      spec: {
        replicas: 3,
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: { affinity: PREFER_NODE_1, containers: [{ name: 'nginx', image: 'nginx:1.27' }] },
        },
      },
    },
    {
      apiVersion: 'apps/v1',
      kind: 'DaemonSet',
      metadata: { name: 'node-exporter', namespace: 'monitoring', labels: { app: 'node-exporter' } },
      spec: {
        selector: { matchLabels: { app: 'node-exporter' } },
        template: {
          metadata: { labels: { app: 'node-exporter' } },
          spec: { containers: [{ name: 'node-exporter', image: 'quay.io/prometheus/node-exporter:v1.8.2' }] },
        },
      },
    },
  ],
  pdbs: [
    {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: 'web', namespace: 'shop' },
      spec: { minAvailable: 2, selector: { matchLabels: { app: 'web' } } },
    },
  ],
};

export interface KubeVirtScenarioOptions {
  readonly vms: readonly VmSpec[];
  /** The KubeVirt CR's `spec.configuration.migrations` (KubeVirt's defaults where absent). */
  readonly migrations?: Record<string, number>;
  readonly evictionStrategy?: string;
  readonly pods?: boolean;
  /** How long a migrated VM's old launcher pod runs on after the move (the simulator's default: 2 s). */
  readonly sourceLauncherExitSeconds?: number;
}

export function kubeVirtScenario(options: KubeVirtScenarioOptions): Record<string, unknown> {
  const node = (name: string) => ({ name, capacity: { pods: 110, cpu: '64', memory: '256Gi' } });
  return {
    name: 'kubevirt-workflow',
    podStartupDelaySeconds: 2,
    nodes: [node('node-1'), node('node-2'), node('node-3')],
    ...(options.pods ? ORDINARY_PODS : { namespaces: ['vms'] }),
    kubevirt: {
      configuration: {
        evictionStrategy: options.evictionStrategy ?? 'None',
        migrations: { completionTimeoutPerGiB: 100_000, progressTimeout: 100_000, ...options.migrations },
      },
      timings: {
        targetPreparationSeconds: 1,
        migrationStartSeconds: 0.5,
        transferBaseSeconds: 2,
        transferSecondsPerGiB: 1,
        ...(options.sourceLauncherExitSeconds !== undefined
          ? { sourceLauncherExitSeconds: options.sourceLauncherExitSeconds }
          : {}),
      },
      virtualMachines: options.vms.map(virtualMachine),
    },
  };
}

export interface VmiView {
  readonly name: string;
  readonly phase: string;
  readonly nodeName: string;
  readonly uid: string;
}

/** Every VMI, as the cluster admin reads it. */
export async function vmis(w: WorkflowSim): Promise<Map<string, VmiView>> {
  const list = (await w.admin.custom.listClusterCustomObject({
    group: 'kubevirt.io',
    version: 'v1',
    plural: 'virtualmachineinstances',
  })) as {
    items: {
      metadata: { namespace: string; name: string; uid: string };
      status?: { phase?: string; nodeName?: string };
    }[];
  };
  return new Map(
    list.items.map((vmi) => {
      const name = `${vmi.metadata.namespace}/${vmi.metadata.name}`;
      return [
        name,
        { name, phase: vmi.status?.phase ?? '', nodeName: vmi.status?.nodeName ?? '', uid: vmi.metadata.uid },
      ];
    }),
  );
}

/**
 * How many VirtualMachineInstanceMigrations drainbridge created (successful create requests in the
 * request log; a create's URL names no object, so which VMI each moved is the migration history's to say).
 */
export function migrationsCreated(w: WorkflowSim, since = 0): number {
  return w.sim.requestLog
    .writes({ since, user: DRAINBRIDGE_USER, resource: 'virtualmachineinstancemigrations' })
    .filter((record) => record.verb === 'create').length;
}

/** Migrations drainbridge deleted, from the request log. */
export function migrationsDeleted(w: WorkflowSim, since = 0): string[] {
  return w.sim.requestLog
    .writes({ since, user: DRAINBRIDGE_USER, resource: 'virtualmachineinstancemigrations' })
    .filter((record) => record.verb === 'delete')
    .map((record) => `${record.namespace}/${record.name ?? ''}`);
}

/** Launcher pods drainbridge evicted, from the request log. */
export function launcherEvictions(w: WorkflowSim, since = 0): string[] {
  return w.sim.requestLog
    .writes({ since, user: DRAINBRIDGE_USER, resource: 'pods' })
    .filter((record) => record.subresource === 'eviction' && (record.name ?? '').startsWith('virt-launcher-'))
    .map((record) => `${record.namespace}/${record.name ?? ''}`);
}

/** Whether the simulator's migration history says drainbridge made the migration. */
export function byDrainbridge(record: MigrationRecord): boolean {
  return record.labels['app.kubernetes.io/managed-by'] === 'drainbridge';
}
