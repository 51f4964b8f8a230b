/**
 * drainbridge's claims on migration slots, shared by every evacuation: one Lease in drainbridge's
 * namespace (`drainbridge-kubevirt-migrations`) whose annotation lists the migrations passes are about
 * to create. Counting the cluster's migrations and then creating more is a read-then-write: two
 * evacuations of different nodes doing it at the same moment would both see the last free slot. So a
 * pass that starts migrations first writes its claims — conditional on the Lease's resourceVersion —
 * and creates them only once that write landed. The second of two such passes gets a conflict, reads
 * again and counts the first one's claims (or, by then, its migrations).
 *
 * A claim counts until its migration shows in the cluster's list, or for CLAIM_TTL_SECONDS (a pass that
 * died between its claim and its create, a create virt-api refused: the slot stays taken that long, the
 * safe side of the limit). An unreadable claims record fails closed for that long — no
 * migrations start — and is then written afresh: every claim it could have held has expired by then.
 */
import type { V1Lease } from '@kubernetes/client-node';
import { z } from 'zod';
import type { KubeClient } from '../../clients/kube/client.ts';
import { createLease, readLease, updateLease } from '../../clients/kube/lease.ts';
import { ConflictError } from '../../errors/index.ts';
import { type RecordFormat, readJsonRecord, writeJsonRecord } from '../../util/json-record.ts';
import type { Vmim } from './model.ts';

export const CLAIMS_LEASE = 'drainbridge-kubevirt-migrations';
export const CLAIMS_ANNOTATION = 'drainbridge.io/migration-claims';
/** How long a claim counts without its migration showing up (a pass takes seconds from claim to create). */
export const CLAIM_TTL_SECONDS = 120;

/** One claimed migration, by `namespace/name` of the migration. */
export interface MigrationClaim {
  /** The node its VMI is migrated from (the per-node limit counts it there). */
  readonly node: string;
  /** `namespace/name` of the VMI. */
  readonly vmi: string;
  /** When it was claimed (ISO 8601). */
  readonly at: string;
}

export type Claims = Readonly<Record<string, MigrationClaim>>;

export const CLAIMS_FORMAT: RecordFormat<Claims> = {
  what: `KubeVirt migration claims (Lease ${CLAIMS_LEASE}, annotation ${CLAIMS_ANNOTATION})`,
  versions: [
    z.record(
      z.string(),
      z.looseObject({ node: z.string().min(1), vmi: z.string().min(1), at: z.iso.datetime({ offset: true }) }),
    ),
  ],
};

/** The claims as one pass read them, with the Lease they were read from (the write is conditional on it). */
export interface ClaimsRead {
  readonly lease: V1Lease | undefined;
  readonly claims: Claims;
  /** Set when the record cannot be read and may still hold live claims: start no migration. */
  readonly unreadable?: string;
}

function expired(claim: MigrationClaim, now: Date): boolean {
  return now.getTime() - Date.parse(claim.at) > CLAIM_TTL_SECONDS * 1000;
}

const keyOfMigration = (vmim: Vmim) => `${vmim.metadata.namespace}/${vmim.metadata.name}`;

/**
 * The claims that still count beside the listed migrations: not expired, their migration not listed yet.
 * Pure.
 */
export function pendingClaims(claims: Claims, migrations: readonly Vmim[], now: Date): MigrationClaim[] {
  const listed = new Set(migrations.map(keyOfMigration));
  return Object.entries(claims)
    .filter(([key, claim]) => !listed.has(key) && !expired(claim, now))
    .map(([, claim]) => claim);
}

/** The record after adding `added` and dropping what no longer counts. Pure. */
export function nextClaims(
  claims: Claims,
  added: Readonly<Record<string, MigrationClaim>>,
  migrations: readonly Vmim[],
  now: Date,
): Record<string, MigrationClaim> {
  const listed = new Set(migrations.map(keyOfMigration));
  const kept = Object.entries(claims).filter(([key, claim]) => !listed.has(key) && !expired(claim, now));
  return { ...Object.fromEntries(kept), ...added };
}

export class MigrationClaims {
  readonly #kube: KubeClient;
  readonly #namespace: string;

  constructor(kube: KubeClient, namespace: string) {
    this.#kube = kube;
    this.#namespace = namespace;
  }

  /** Reads the claims (before the pass lists the cluster's migrations: a claim is never missed twice). */
  async read(now: Date): Promise<ClaimsRead> {
    const lease = await readLease(this.#kube, this.#namespace, CLAIMS_LEASE);
    const read = readJsonRecord(lease?.metadata?.annotations?.[CLAIMS_ANNOTATION], CLAIMS_FORMAT);
    if (read.status === 'ok') return { lease, claims: read.value };
    if (read.status === 'absent') return { lease, claims: {} };
    const writtenAt = lease?.spec?.renewTime ? new Date(lease.spec.renewTime).getTime() : 0;
    const stale = now.getTime() - writtenAt > CLAIM_TTL_SECONDS * 1000;
    return stale ? { lease, claims: {} } : { lease, claims: {}, unreadable: read.reason };
  }

  /**
   * Writes the claims read with `added` and without what no longer counts, conditional on the Lease read;
   * false when another pass wrote in between (read again and count its claims).
   */
  async write(
    read: ClaimsRead,
    added: Readonly<Record<string, MigrationClaim>>,
    migrations: readonly Vmim[],
    now: Date,
  ): Promise<boolean> {
    const claims = nextClaims(read.claims, added, migrations, now);
    const annotations = {
      ...read.lease?.metadata?.annotations,
      [CLAIMS_ANNOTATION]: writeJsonRecord(claims, CLAIMS_FORMAT),
    };
    const lease: V1Lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { ...read.lease?.metadata, name: CLAIMS_LEASE, annotations },
      spec: { leaseDurationSeconds: CLAIM_TTL_SECONDS, renewTime: now },
    };
    try {
      if (read.lease) await updateLease(this.#kube, this.#namespace, lease);
      else await createLease(this.#kube, this.#namespace, lease);
      return true;
    } catch (error) {
      if (error instanceof ConflictError) return false;
      throw error;
    }
  }
}
