/**
 * The parts of KubeVirt's `kubevirt.io/v1` API the KubeVirt branch reads and writes, the marks
 * drainbridge puts on its own migrations, the branch's options, and the progress it keeps between
 * passes. Plain JSON, so the cluster-backed ProgressStore can hold it.
 *
 * KubeVirt's names (labels, annotation, phases, the `LiveMigratable` condition) are those of
 * `staging/src/kubevirt.io/api/core/v1/types.go`.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { SPANS_SCHEMA, type Span } from '../../model/timeline.ts';
import type { RecordFormat } from '../../util/json-record.ts';

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

/** drainbridge's marks on the migrations it creates: found again by label after a crash, never duplicated. */
export const MIGRATION_MARKS = Object.freeze({
  managedBy: { key: 'app.kubernetes.io/managed-by', value: 'drainbridge' },
  /** A hash of the requestId (label values are short and restricted; the full id is the annotation). */
  requestLabel: 'drainbridge.io/request',
  requestIdAnnotation: 'drainbridge.io/request-id',
  sourceNodeAnnotation: 'drainbridge.io/source-node',
  attemptAnnotation: 'drainbridge.io/attempt',
});

/** The label value naming a request on its migrations: 16 hex digits of the requestId's SHA-256. */
export function requestLabelValue(requestId: string): string {
  return createHash('sha256').update(requestId).digest('hex').slice(0, 16);
}

/** The label selector of drainbridge's migrations for one request. */
export function ownMigrationsSelector(requestId: string): string {
  const { managedBy, requestLabel } = MIGRATION_MARKS;
  return `${managedBy.key}=${managedBy.value},${requestLabel}=${requestLabelValue(requestId)}`;
}

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

/** The branch's options (lib/config `kubevirt`). */
export interface KubeVirtOptions {
  /** drainbridge's own limit of migrations in flight from the node (KubeVirt's, if lower, wins). */
  readonly maxMigrationsPerNode: number;
  /** drainbridge's own limit of migrations in flight cluster-wide, everyone's counted (KubeVirt's, if lower, wins). */
  readonly maxMigrationsPerCluster: number;
  /** Migrations per VMI (the first included) before its failure is a blocker. */
  readonly maxAttempts: number;
  /** Seconds before the second attempt; doubles per attempt, at most 10 minutes. */
  readonly retryBackoffSeconds: number;
  /** Opt-in: restart VMIs that cannot live-migrate through the VirtualMachine that runs them always. */
  readonly restartUnmigratable: boolean;
}

export const DEFAULT_KUBEVIRT_OPTIONS: KubeVirtOptions = Object.freeze({
  maxMigrationsPerNode: 2,
  maxMigrationsPerCluster: 5,
  maxAttempts: 3,
  retryBackoffSeconds: 30,
  restartUnmigratable: false,
});

/** Where one VMI stands in this evacuation. */
export type VmiStatus =
  /** On the node, not moving yet (starting up, waiting for a free migration slot or its retry time). */
  | 'waiting'
  /** A migration (drainbridge's, KubeVirt's or someone's) is moving it. */
  | 'migrating'
  /** Its migration failed; another attempt follows at `retryAt`. */
  | 'retry-wait'
  /** Its launcher pod was evicted (opt-in restart): it stops here and its VirtualMachine starts it elsewhere. */
  | 'restarting'
  /** `External`: its external controller moves it; drainbridge waits. */
  | 'external'
  /** It cannot leave without being shut down (None, not migratable) or its attempts ran out: a blocker. */
  | 'blocked'
  /** Left the node by a live migration. */
  | 'moved'
  /** Left the node otherwise (restarted elsewhere, stopped or deleted by someone). */
  | 'left';

/** One VMI's progress, kept in the Evacuation record (`status.branches.kubevirt.state.vmis[uid]`). */
export interface VmiProgress {
  /** `namespace/name`. */
  readonly name: string;
  readonly strategy: EvictionStrategy;
  readonly status: VmiStatus;
  /** Migrations drainbridge started for it. */
  readonly attempts: number;
  /** The migration moving it (or the last one): name, who made it, its phase. */
  readonly migration?: string;
  readonly migrationBy?: 'drainbridge' | 'kubevirt' | 'other';
  readonly migrationPhase?: string;
  readonly sourceNode: string;
  readonly targetNode?: string;
  /** When the current (or last) migration was first seen, and when it ended (ISO 8601). */
  readonly startedAt?: string;
  readonly endedAt?: string;
  /** After a failed attempt: when the next may start. */
  readonly retryAt?: string;
  /** KubeVirt's reason for the last failed attempt, and that attempt's migration. */
  readonly lastFailure?: string;
  readonly lastFailedMigration?: string;
  /** Why it is blocked or waited for (the sentence of its blocker). */
  readonly note?: string;
  /** Timeline (lib/branches/kubevirt/progress.ts `withTimeline`): its first move started, it left the node. */
  readonly askedAt?: string;
  readonly goneAt?: string;
  /** What it waited for (a migration slot, a retry, a blocker, its external controller), from–to. */
  readonly waits?: readonly Span[];
}

export interface KubeVirtBranchState {
  readonly vmis: Readonly<Record<string, VmiProgress>>;
}

export const INITIAL_KUBEVIRT_STATE: KubeVirtBranchState = Object.freeze({ vmis: {} });

const Instant = z.iso.datetime({ offset: true });
const VMI_STATUSES = [
  'waiting',
  'migrating',
  'retry-wait',
  'restarting',
  'external',
  'blocked',
  'moved',
  'left',
] as const;

/**
 * The KubeVirt branch's state as the pass writes it (`status.branches.kubevirt.state`), checked on every
 * read: a damaged one is RecordUnreadable, never a fresh start (that would forget which migrations are
 * drainbridge's and how many attempts each VMI had).
 */
export const KUBEVIRT_STATE_FORMAT: RecordFormat<KubeVirtBranchState> = {
  what: 'KubeVirt branch state (Evacuation status.branches.kubevirt.state)',
  versions: [
    z.looseObject({
      vmis: z.record(
        z.string(),
        z.looseObject({
          name: z.string().min(1),
          strategy: z.enum(['None', 'LiveMigrate', 'LiveMigrateIfPossible', 'External']),
          status: z.enum(VMI_STATUSES),
          attempts: z.number().int().min(0),
          migration: z.string().optional(),
          migrationBy: z.enum(['drainbridge', 'kubevirt', 'other']).optional(),
          migrationPhase: z.string().optional(),
          sourceNode: z.string(),
          targetNode: z.string().optional(),
          startedAt: Instant.optional(),
          endedAt: Instant.optional(),
          retryAt: Instant.optional(),
          lastFailure: z.string().optional(),
          lastFailedMigration: z.string().optional(),
          note: z.string().optional(),
          // The timeline, added beside version 1's fields, optional: older records read, older builds ignore it.
          askedAt: Instant.optional(),
          goneAt: Instant.optional(),
          waits: SPANS_SCHEMA.optional(),
        }),
      ),
    }),
  ],
};

/** `namespace/name` of a KubeVirt object. */
export function keyOf(object: { readonly metadata: ObjectMeta }): string {
  return `${object.metadata.namespace}/${object.metadata.name}`;
}

/** `migration.IsFinal()`. */
export function isFinalMigration(vmim: Vmim): boolean {
  return vmim.status?.phase === 'Succeeded' || vmim.status?.phase === 'Failed';
}

/** The `namespace/name` of the VMI a migration moves. */
export function vmiKeyOfMigration(vmim: Vmim): string {
  return `${vmim.metadata.namespace}/${vmim.spec.vmiName ?? ''}`;
}

/** Whether drainbridge created the migration for `requestId`. */
export function isOwnMigration(vmim: Vmim, requestId: string): boolean {
  const labels = vmim.metadata.labels ?? {};
  const { managedBy, requestLabel, requestIdAnnotation } = MIGRATION_MARKS;
  return (
    labels[managedBy.key] === managedBy.value &&
    labels[requestLabel] === requestLabelValue(requestId) &&
    // The label is a hash: the annotation settles a collision.
    (vmim.metadata.annotations?.[requestIdAnnotation] ?? requestId) === requestId
  );
}

/** Who made a migration, for people. */
export function migrationMaker(vmim: Vmim): 'drainbridge' | 'kubevirt' | 'other' {
  const { managedBy } = MIGRATION_MARKS;
  if (vmim.metadata.labels?.[managedBy.key] === managedBy.value) return 'drainbridge';
  if (vmim.metadata.annotations?.[EVACUATION_MIGRATION_ANNOTATION] !== undefined) return 'kubevirt';
  return 'other';
}
