/**
 * What one tool asked of the API server during one run, from the simulator's request log. Pure: it
 * classifies records, it never reads the log itself.
 */
import type { RequestRecord } from '../../sim/server/request-log.ts';

/** Request counts of one user. */
export interface RequestCounts {
  /** Every request answered, whatever its status. */
  total: number;
  /** Discovery and other non-resource reads (`/api`, `/apis`, `/openapi`, `/version`). */
  discovery: number;
  /** get, list and watch on resources. */
  reads: number;
  /** Writes that are not evictions (node patches, Evacuation records, events, leases). */
  writes: number;
  /** Eviction requests (`pods/eviction` create), accepted or not. */
  evictions: number;
  /** Evictions answered 2xx. */
  evictionsAccepted: number;
  /** Evictions answered 429 (PodDisruptionBudget or rate limit). */
  evictionsRefused: number;
  /** Requests answered ≥ 400 other than refused evictions (kubectl's wait-for-delete GETs end in 404 by design). */
  failed: number;
}

/** Requests by kind: `verb resource[/subresource]` (`get nodes`, `update evacuations`, `create pods/eviction`) → count. */
export type RequestKinds = Record<string, number>;

function emptyCounts(): RequestCounts {
  return {
    total: 0,
    discovery: 0,
    reads: 0,
    writes: 0,
    evictions: 0,
    evictionsAccepted: 0,
    evictionsRefused: 0,
    failed: 0,
  };
}

const READ_VERBS: ReadonlySet<string> = new Set(['get', 'list', 'watch']);

function isEviction(record: RequestRecord): boolean {
  return record.resource === 'pods' && record.subresource === 'eviction' && record.verb === 'create';
}

function countEviction(counts: RequestCounts, record: RequestRecord): void {
  counts.evictions++;
  if (record.status >= 200 && record.status < 300) counts.evictionsAccepted++;
  else if (record.status === 429) counts.evictionsRefused++;
  else counts.failed++;
}

/** Adds one record to `counts`. */
function countRecord(counts: RequestCounts, record: RequestRecord): void {
  counts.total++;
  if (isEviction(record)) {
    countEviction(counts, record);
    return;
  }
  if (record.status >= 400) counts.failed++;
  if (record.resource === '') counts.discovery++;
  else if (READ_VERBS.has(record.verb)) counts.reads++;
  else counts.writes++;
}

/** The kind of a request, as the tables print it: `list pods`, `create pods/eviction`, `get /api` for discovery. */
export function kindOf(record: RequestRecord): string {
  if (record.resource === '') return `${record.verb} ${record.path.split('?')[0]}`;
  return `${record.verb} ${record.resource}${record.subresource ? `/${record.subresource}` : ''}`;
}

/** Requests of every user by kind, for the breakdown of what a tool asked. */
export function countKinds(records: readonly RequestRecord[]): RequestKinds {
  const kinds: RequestKinds = {};
  for (const record of records) {
    const kind = kindOf(record);
    kinds[kind] = (kinds[kind] ?? 0) + 1;
  }
  return kinds;
}

/** Request counts per user (the request log's `user`: `kubernetes-admin`, `system:serviceaccount:…`). */
export function countByUser(records: readonly RequestRecord[]): Record<string, RequestCounts> {
  const byUser: Record<string, RequestCounts> = {};
  for (const record of records) {
    const counts = byUser[record.user] ?? emptyCounts();
    byUser[record.user] = counts;
    countRecord(counts, record);
  }
  return byUser;
}

/** The counts of every user added up. */
export function totalOf(byUser: Readonly<Record<string, RequestCounts>>): RequestCounts {
  const sum = emptyCounts();
  for (const counts of Object.values(byUser)) {
    for (const key of Object.keys(sum) as (keyof RequestCounts)[]) sum[key] += counts[key];
  }
  return sum;
}
