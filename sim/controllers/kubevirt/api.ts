/**
 * The parts of KubeVirt's `kubevirt.io/v1` API the simulated KubeVirt reads and writes: resource
 * refs, the label/annotation/finalizer names its components put on objects, phases, and typed views.
 *
 * Names and values are taken from `staging/src/kubevirt.io/api/core/v1/types.go` (labels such as
 * `kubevirt.io/created-by`, `kubevirt.io/migrationJobUID`, the `kubevirt.io/domain` annotation, the
 * migration phases, the `LiveMigratable` condition and its `*NotLiveMigratable` reasons) and from
 * `pkg/controller` (event reasons).
 */
import type { KubeObject, ObjectMeta, ResourceRef } from '../../store/types.ts';
import type { Condition } from '../types.ts';

export const GROUP = 'kubevirt.io';
export const API_VERSION = 'kubevirt.io/v1';

/** The four KubeVirt resources the simulator serves, as store refs. */
export const KV_REFS = {
  vms: { group: GROUP, resource: 'virtualmachines' },
  vmis: { group: GROUP, resource: 'virtualmachineinstances' },
  vmims: { group: GROUP, resource: 'virtualmachineinstancemigrations' },
  kubevirts: { group: GROUP, resource: 'kubevirts' },
} as const satisfies Record<string, ResourceRef>;

/** Labels KubeVirt's components set (types.go). */
export const LABELS = {
  /** `kubevirt.io=virt-launcher` on every launcher pod (AppLabel). */
  app: 'kubevirt.io',
  /** The VMI's uid on its launcher pods; the per-VMI PDB selects on it (CreatedByLabel). */
  createdBy: 'kubevirt.io/created-by',
  /** The VMI's hostname on its launcher pods (DeprecatedVirtualMachineNameLabel). */
  vmName: 'vm.kubevirt.io/name',
  /** The node a VMI runs on, on the VMI (NodeNameLabel). */
  nodeName: 'kubevirt.io/nodeName',
  /** The node a migration target pod runs on, on the VMI during a migration (MigrationTargetNodeNameLabel). */
  migrationTargetNodeName: 'kubevirt.io/migrationTargetNodeName',
  /** The migration's uid on its target pod (MigrationJobLabel). */
  migrationJobUid: 'kubevirt.io/migrationJobUID',
  /** The VMI's name on a migration (MigrationSelectorLabel). */
  vmiName: 'kubevirt.io/vmi-name',
  /** The migration a PDB is expanded for (MigrationNameLabel). */
  migrationName: 'kubevirt.io/migrationName',
  /** Set by virt-handler on nodes it can run VMIs on (NodeSchedulable). */
  schedulable: 'kubevirt.io/schedulable',
} as const;

export const ANNOTATIONS = {
  /** The VMI's name on its launcher pods; virt-api's eviction admitter reads it (DomainAnnotation). */
  domain: 'kubevirt.io/domain',
  /** The migration's name on its target pod (MigrationJobNameAnnotation). */
  migrationJobName: 'kubevirt.io/migrationJobName',
  /** The source node on migrations the evacuation controller creates (EvacuationMigrationAnnotation). */
  evacuationMigration: 'kubevirt.io/evacuationMigration',
  /** Which container `kubectl logs/exec` picks on launcher pods. */
  defaultContainer: 'kubectl.kubernetes.io/default-container',
} as const;

/** Simulator-only annotations that stand in for what KubeVirt would derive from disks, devices and load. */
export const SIM_ANNOTATIONS = {
  /** On a VMI (or a VM's template): the reason it is not live-migratable, e.g. `DisksNotLiveMigratable`. */
  notMigratable: 'sim.drainbridge.io/not-migratable',
  /** On a VMI: how many seconds its live migration transfers memory (overrides the timing model). */
  migrationSeconds: 'sim.drainbridge.io/migration-seconds',
} as const;

export const FINALIZERS = {
  /** Added to migrations by virt-api's mutating webhook; the migration controller removes it when final. */
  migration: 'kubevirt.io/migrationJobFinalize',
  /** Added to VMIs by virt-controller; removed once their launcher pods are gone. */
  vmi: 'kubevirt.io/foregroundDeleteVirtualMachine',
} as const;

export type EvictionStrategy = 'None' | 'LiveMigrate' | 'LiveMigrateIfPossible' | 'External';
export const EVICTION_STRATEGIES: readonly EvictionStrategy[] = [
  'None',
  'LiveMigrate',
  'LiveMigrateIfPossible',
  'External',
];

export type VmiPhase = '' | 'Pending' | 'Scheduling' | 'Scheduled' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown';

export type MigrationPhase =
  | ''
  | 'Pending'
  | 'Scheduling'
  | 'Scheduled'
  | 'PreparingTarget'
  | 'TargetReady'
  | 'Running'
  | 'Succeeded'
  | 'Failed';

export const MIGRATION_PHASES: readonly MigrationPhase[] = [
  'Pending',
  'Scheduling',
  'Scheduled',
  'PreparingTarget',
  'TargetReady',
  'Running',
  'Succeeded',
  'Failed',
];

/** `VirtualMachineRunStrategy` values (types.go). */
export type RunStrategy = 'Always' | 'Halted' | 'Manual' | 'RerunOnFailure' | 'Once';
export const RUN_STRATEGIES: readonly RunStrategy[] = ['Always', 'Halted', 'Manual', 'RerunOnFailure', 'Once'];

/** `VirtualMachineInstanceMigrationState` as far as the simulator fills it. */
export interface MigrationState {
  migrationUid?: string;
  sourceNode?: string;
  sourcePod?: string;
  targetNode?: string;
  targetPod?: string;
  targetNodeAddress?: string;
  targetDirectMigrationNodePorts?: Record<string, number>;
  targetNodeDomainDetected?: boolean;
  targetNodeDomainReadyTimestamp?: string;
  startTimestamp?: string;
  endTimestamp?: string;
  completed?: boolean;
  failed?: boolean;
  abortRequested?: boolean;
  abortStatus?: 'Succeeded' | 'Failed' | 'Aborting';
  failureReason?: string;
  mode?: 'PreCopy' | 'PostCopy' | 'Paused';
  migrationConfiguration?: Record<string, unknown>;
  [key: string]: unknown;
}

export interface VmiStatus {
  phase?: VmiPhase;
  nodeName?: string;
  reason?: string;
  conditions?: Condition[];
  phaseTransitionTimestamps?: { phase: string; phaseTransitionTimestamp: string }[];
  interfaces?: Record<string, unknown>[];
  migrationState?: MigrationState;
  migrationMethod?: string;
  migrationTransport?: string;
  evacuationNodeName?: string;
  activePods?: Record<string, string>;
  [key: string]: unknown;
}

export interface Vmi extends KubeObject {
  metadata: ObjectMeta & { name: string; namespace: string };
  spec: {
    evictionStrategy?: EvictionStrategy;
    nodeSelector?: Record<string, string>;
    tolerations?: Record<string, unknown>[];
    affinity?: Record<string, unknown>;
    terminationGracePeriodSeconds?: number;
    domain?: {
      resources?: { requests?: { memory?: string | number } };
      memory?: { guest?: string | number };
      [key: string]: unknown;
    };
    [key: string]: unknown;
  };
  status?: VmiStatus;
}

export interface Vmim extends KubeObject {
  metadata: ObjectMeta & { name: string; namespace: string };
  spec: { vmiName?: string; [key: string]: unknown };
  status?: {
    phase?: MigrationPhase;
    conditions?: Condition[];
    phaseTransitionTimestamps?: { phase: string; phaseTransitionTimestamp: string }[];
    migrationState?: MigrationState;
    [key: string]: unknown;
  };
}

export interface VirtualMachine extends KubeObject {
  metadata: ObjectMeta & { name: string; namespace: string };
  spec: {
    running?: boolean;
    runStrategy?: RunStrategy;
    template?: { metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> }; spec?: unknown };
    [key: string]: unknown;
  };
  status?: Record<string, unknown>;
}

/** `namespace/name`: how faults, history and queue keys name a VMI. */
export function vmiKeyOf(object: { metadata: ObjectMeta }): string {
  return `${object.metadata.namespace}/${object.metadata.name}`;
}

export function conditionOf(
  object: { status?: { conditions?: Condition[] } | undefined },
  type: string,
): Condition | undefined {
  return object.status?.conditions?.find((c) => c.type === type);
}

/** `vmi.IsMigratable()`: the `LiveMigratable` condition is True. */
export function isMigratable(vmi: Vmi): boolean {
  return conditionOf(vmi, 'LiveMigratable')?.status === 'True';
}

/** `vmi.IsFinal()`. */
export function isFinalVmi(vmi: Vmi): boolean {
  return vmi.status?.phase === 'Succeeded' || vmi.status?.phase === 'Failed';
}

/** `migration.IsFinal()`. */
export function isFinalMigration(vmim: Vmim): boolean {
  return vmim.status?.phase === 'Succeeded' || vmim.status?.phase === 'Failed';
}

/**
 * `migration.IsRunning()` for a local (non-decentralized) migration: every phase from Scheduling to
 * Running counts against the limits; Pending, unset and final ones do not.
 */
export function isRunningMigration(vmim: Vmim): boolean {
  const phase = vmim.status?.phase ?? '';
  return phase !== '' && phase !== 'Pending' && !isFinalMigration(vmim);
}

const UNITS: Readonly<Record<string, number>> = {
  '': 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

/** A memory quantity in bytes (`2Gi`, `512M`, `1073741824`), or undefined when it does not parse. */
export function quantityBytes(value: string | number | undefined): number | undefined {
  if (typeof value === 'number') return value;
  const match = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$/.exec(value ?? '');
  if (!match) return undefined;
  return Number(match[1]) * (UNITS[match[2] ?? ''] ?? 1);
}

/** The guest memory in GiB (requests, else `memory.guest`; 1 GiB when neither is set). */
export function memoryGiB(vmi: Vmi): number {
  const domain = vmi.spec.domain;
  const bytes = quantityBytes(domain?.resources?.requests?.memory) ?? quantityBytes(domain?.memory?.guest);
  return bytes === undefined ? 1 : bytes / 2 ** 30;
}
