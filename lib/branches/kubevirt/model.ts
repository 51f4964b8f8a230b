/**
 * The KubeVirt branch's model: the marks drainbridge puts on its own migrations, the branch's options,
 * and the progress it keeps between passes. Plain JSON, so the cluster-backed ProgressStore can hold it.
 * KubeVirt's own API (resources, labels, the objects as drainbridge reads them) is
 * lib/clients/kubevirt/types.ts, re-exported here for the branch's modules.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import {
  EVACUATION_MIGRATION_ANNOTATION,
  type EvictionStrategy,
  type ObjectMeta,
  type Vmim,
} from '../../clients/kubevirt/types.ts';
import { SPANS_SCHEMA, type Span } from '../../model/timeline.ts';
import type { RecordFormat } from '../../util/json-record.ts';

/** KubeVirt's API, as drainbridge reads it (lib/clients/kubevirt/types.ts), named here too for the branch's modules. */
export {
  type Condition,
  EVACUATION_MIGRATION_ANNOTATION,
  EVICTION_STRATEGIES,
  type EvictionStrategy,
  KUBEVIRT_DEFAULTS,
  KUBEVIRT_DOMAIN_ANNOTATION,
  KUBEVIRT_GROUP,
  KUBEVIRT_LABELS,
  KUBEVIRT_PLURALS,
  KUBEVIRT_VERSION,
  type KubeVirtSettings,
  type MigrationPhase,
  type MigrationState,
  type ObjectMeta,
  type VirtualMachine,
  type Vmi,
  type Vmim,
} from '../../clients/kubevirt/types.ts';

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
