/**
 * The parts of KubeVirt's `kubevirt.io/v1` API drainbridge reads and writes: where its resources are
 * served, the labels and annotations KubeVirt sets, and the objects as drainbridge reads them. KubeVirt's
 * names (labels, annotation, phases, the `LiveMigratable` condition) are those of
 * `staging/src/kubevirt.io/api/core/v1/types.go`. The KubeVirt branch's own marks, options and progress
 * are lib/branches/kubevirt/model.ts.
 */
/** Where KubeVirt's resources are served. */
export const KUBEVIRT_GROUP = 'kubevirt.io';
export const KUBEVIRT_VERSION = 'v1';
export const KUBEVIRT_PLURALS = Object.freeze({
  vmis: 'virtualmachineinstances',
  vmims: 'virtualmachineinstancemigrations',
  vms: 'virtualmachines',
  kubevirts: 'kubevirts',
});

/** Labels and annotations KubeVirt sets. */
export const KUBEVIRT_LABELS = Object.freeze({
  /** On a VMI: the node it runs on (NodeNameLabel). The branch lists a node's VMIs by it. */
  nodeName: 'kubevirt.io/nodeName',
  /** On launcher pods: the uid of the VMI they run (CreatedByLabel). */
  createdBy: 'kubevirt.io/created-by',
  /** On a migration's target pod: the migration's uid (MigrationJobLabel). */
  migrationJobUid: 'kubevirt.io/migrationJobUID',
});
/** On launcher pods: the name of the VMI they run (DomainAnnotation). */
export const KUBEVIRT_DOMAIN_ANNOTATION = 'kubevirt.io/domain';
/** On migrations KubeVirt's evacuation controller creates: the node the VMI is evacuated from. */
export const EVACUATION_MIGRATION_ANNOTATION = 'kubevirt.io/evacuationMigration';

export type EvictionStrategy = 'None' | 'LiveMigrate' | 'LiveMigrateIfPossible' | 'External';
export const EVICTION_STRATEGIES: readonly EvictionStrategy[] = [
  'LiveMigrate',
  'LiveMigrateIfPossible',
  'External',
  'None',
];

export interface Condition {
  readonly type: string;
  readonly status: string;
  readonly reason?: string;
  readonly message?: string;
}

export interface ObjectMeta {
  readonly name: string;
  readonly namespace: string;
  readonly uid: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
  readonly ownerReferences?: readonly {
    readonly kind: string;
    readonly name: string;
    readonly uid?: string;
    readonly controller?: boolean;
  }[];
  readonly creationTimestamp?: string;
  readonly deletionTimestamp?: string;
}

/**
 * `VirtualMachineInstanceMigrationState`, as far as the branch reads it. KubeVirt writes it on the VMI
 * while the migration runs (the hand-off sets `migrationUid`, source and target node; the source sets
 * `startTimestamp` when the transfer starts, then `endTimestamp` and `completed`/`failed`) and copies it
 * to the migration only once that is final.
 */
export interface MigrationState {
  /** The migration this state belongs to (a VMI keeps the state of its last migration). */
  readonly migrationUid?: string;
  readonly sourceNode?: string;
  readonly targetNode?: string;
  readonly startTimestamp?: string;
  readonly endTimestamp?: string;
  readonly completed?: boolean;
  readonly failed?: boolean;
  readonly failureReason?: string;
  readonly abortStatus?: string;
}

/** A VirtualMachineInstance, as the branch reads it. */
export interface Vmi {
  readonly metadata: ObjectMeta;
  readonly spec?: { readonly evictionStrategy?: EvictionStrategy };
  readonly status?: {
    readonly phase?: string;
    readonly nodeName?: string;
    readonly conditions?: readonly Condition[];
    readonly migrationState?: MigrationState;
    /** Set by virt-api when an eviction of the launcher pod triggered an evacuation. */
    readonly evacuationNodeName?: string;
  };
}

export type MigrationPhase =
  | 'Pending'
  | 'Scheduling'
  | 'Scheduled'
  | 'PreparingTarget'
  | 'TargetReady'
  | 'Running'
  | 'Succeeded'
  | 'Failed';

/** A VirtualMachineInstanceMigration, as the branch reads it. */
export interface Vmim {
  readonly metadata: ObjectMeta;
  readonly spec: { readonly vmiName?: string };
  readonly status?: { readonly phase?: MigrationPhase | ''; readonly migrationState?: MigrationState };
}

/** A VirtualMachine, as the restart opt-in reads it (does it start its VMI again when it stops?). */
export interface VirtualMachine {
  readonly metadata: ObjectMeta;
  readonly spec?: { readonly running?: boolean; readonly runStrategy?: string };
}

/** The KubeVirt CR's settings the branch follows (KubeVirt's defaults when no CR is deployed). */
export interface KubeVirtSettings {
  /** Whether KubeVirt serves VMIs here at all. */
  readonly installed: boolean;
  /** `spec.configuration.evictionStrategy`: the default for VMIs without their own (KubeVirt's: None). */
  readonly evictionStrategy: EvictionStrategy;
  readonly parallelMigrationsPerCluster: number;
  readonly parallelOutboundMigrationsPerNode: number;
}

/** KubeVirt's defaults (`pkg/virt-config`). */
export const KUBEVIRT_DEFAULTS: KubeVirtSettings = Object.freeze({
  installed: false,
  evictionStrategy: 'None',
  parallelMigrationsPerCluster: 5,
  parallelOutboundMigrationsPerNode: 2,
});
