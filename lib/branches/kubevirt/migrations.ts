/**
 * drainbridge's own migrations: their names and bodies, and how a VMI's migrations are read back
 * (which one moves it now, how many attempts drainbridge made, why the last one failed). Pure.
 *
 * A migration's name is fixed by (request, VMI, attempt), so a pass that dies after creating one and
 * before recording it creates the same name again next time and gets AlreadyExists — never a second
 * migration for the same attempt; its labels find it again after a crash.
 */
import {
  isFinalMigration,
  isOwnMigration,
  KUBEVIRT_GROUP,
  KUBEVIRT_VERSION,
  MIGRATION_MARKS,
  type MigrationState,
  requestLabelValue,
  type Vmim,
  vmiKeyOfMigration,
} from './model.ts';

/** `drainbridge-<vmi>-<request hash>-<attempt>`, a DNS subdomain of at most 253 characters. */
export function migrationName(requestId: string, vmiName: string, attempt: number): string {
  const base = `drainbridge-${vmiName}`.slice(0, 220).replace(/[-.]+$/, '');
  return `${base}-${requestLabelValue(requestId).slice(0, 8)}-${attempt}`;
}

export interface NewMigration {
  readonly requestId: string;
  readonly namespace: string;
  readonly vmiName: string;
  readonly sourceNode: string;
  readonly attempt: number;
}

/** The VirtualMachineInstanceMigration drainbridge creates for one attempt. */
export function migrationBody(spec: NewMigration): Vmim & { apiVersion: string; kind: string } {
  const { managedBy, requestLabel, requestIdAnnotation, sourceNodeAnnotation, attemptAnnotation } = MIGRATION_MARKS;
  return {
    apiVersion: `${KUBEVIRT_GROUP}/${KUBEVIRT_VERSION}`,
    kind: 'VirtualMachineInstanceMigration',
    metadata: {
      name: migrationName(spec.requestId, spec.vmiName, spec.attempt),
      namespace: spec.namespace,
      uid: '',
      labels: { [managedBy.key]: managedBy.value, [requestLabel]: requestLabelValue(spec.requestId) },
      annotations: {
        [requestIdAnnotation]: spec.requestId,
        [sourceNodeAnnotation]: spec.sourceNode,
        [attemptAnnotation]: String(spec.attempt),
      },
    },
    spec: { vmiName: spec.vmiName },
  };
}

/** The attempt number drainbridge wrote on its migration (0 when unreadable). */
export function attemptOf(vmim: Vmim): number {
  const value = Number(vmim.metadata.annotations?.[MIGRATION_MARKS.attemptAnnotation]);
  return Number.isInteger(value) && value > 0 ? value : 0;
}

/** A VMI's migrations as this request sees them. */
export interface VmiMigrations {
  /** The unfinished migration moving it now (drainbridge's first, else anyone's). */
  readonly current?: Vmim;
  /** drainbridge's migrations of it for this request, by attempt. */
  readonly own: readonly Vmim[];
}

/** Groups the cluster's migrations by VMI (`namespace/name`). */
export function migrationsByVmi(migrations: readonly Vmim[], requestId: string): ReadonlyMap<string, VmiMigrations> {
  const out = new Map<string, { current?: Vmim; own: Vmim[] }>();
  for (const vmim of migrations) {
    const key = vmiKeyOfMigration(vmim);
    const entry = out.get(key) ?? { own: [] };
    const own = isOwnMigration(vmim, requestId);
    if (own) entry.own.push(vmim);
    if (!isFinalMigration(vmim) && (!entry.current || own)) entry.current = vmim;
    out.set(key, entry);
  }
  for (const entry of out.values()) entry.own.sort((a, b) => attemptOf(a) - attemptOf(b));
  return out;
}

/** KubeVirt's reason for a failed migration, as its migration state (decide.ts migrationStateOf) says it. */
export function failureReasonOf(state: MigrationState | undefined): string {
  if (state?.failureReason) return state.failureReason;
  if (state?.abortStatus === 'Succeeded') return 'the migration was aborted';
  return 'the migration failed (KubeVirt gave no reason)';
}

/** Migrations that count against the limits: every unfinished one (Pending too: it is waiting to run). */
export function unfinished(migrations: readonly Vmim[]): Vmim[] {
  return migrations.filter((vmim) => !isFinalMigration(vmim));
}
