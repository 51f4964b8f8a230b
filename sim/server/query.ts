/** Query-string options of list, watch, delete and write requests. */
import { badRequest } from '../store/status.ts';
import type { DeleteOptions, ListOptions } from '../store/types.ts';

/** `?labelSelector&fieldSelector&limit&continue` (namespace comes from the path). */
export function listOptionsOf(query: URLSearchParams, namespace: string): ListOptions {
  const options: ListOptions = {};
  if (namespace) options.namespace = namespace;
  const label = query.get('labelSelector');
  if (label) options.labelSelector = label;
  const field = query.get('fieldSelector');
  if (field) options.fieldSelector = field;
  const limit = query.get('limit');
  if (limit) {
    const parsed = Number(limit);
    if (!Number.isInteger(parsed) || parsed < 0) throw badRequest(`limit: invalid value "${limit}"`);
    options.limit = parsed;
  }
  const token = query.get('continue');
  if (token) options.continue = token;
  return options;
}

/** `dryRun=All`; any other value is refused as the apiserver does. */
export function isDryRun(query: URLSearchParams): boolean {
  const values = query.getAll('dryRun');
  if (values.length === 0) return false;
  for (const value of values) {
    if (value !== 'All') throw badRequest(`Invalid dryRun: "${value}": supported values: "All"`);
  }
  return true;
}

interface DeleteBody {
  gracePeriodSeconds?: unknown;
  propagationPolicy?: unknown;
  orphanDependents?: unknown;
  preconditions?: { uid?: unknown; resourceVersion?: unknown } | null;
  dryRun?: unknown;
}

function gracePeriodOf(query: URLSearchParams, body: DeleteBody): number | undefined {
  const raw = query.get('gracePeriodSeconds') ?? body.gracePeriodSeconds;
  if (raw === undefined || raw === null) return undefined;
  const value = Number(raw);
  if (!Number.isInteger(value)) throw badRequest(`gracePeriodSeconds: invalid value "${String(raw)}"`);
  return value;
}

function propagationOf(query: URLSearchParams, body: DeleteBody): DeleteOptions['propagationPolicy'] {
  const raw = query.get('propagationPolicy') ?? body.propagationPolicy;
  if (raw === undefined || raw === null) return body.orphanDependents === true ? 'Orphan' : undefined;
  if (raw === 'Orphan' || raw === 'Background' || raw === 'Foreground') return raw;
  throw badRequest(
    `propagationPolicy: Unsupported value: "${String(raw)}": supported values: "Foreground", "Background", "Orphan"`,
  );
}

/** Delete options from the query and an optional `DeleteOptions` body. */
export function deleteOptionsOf(query: URLSearchParams, rawBody: unknown, dryRun: boolean): DeleteOptions {
  const body = (rawBody && typeof rawBody === 'object' ? rawBody : {}) as DeleteBody;
  const options: DeleteOptions = {};
  const grace = gracePeriodOf(query, body);
  if (grace !== undefined) options.gracePeriodSeconds = grace;
  const policy = propagationOf(query, body);
  if (policy) options.propagationPolicy = policy;
  const pre = body.preconditions;
  if (pre && typeof pre === 'object') {
    options.preconditions = {};
    if (typeof pre.uid === 'string') options.preconditions.uid = pre.uid;
    if (typeof pre.resourceVersion === 'string') options.preconditions.resourceVersion = pre.resourceVersion;
  }
  const bodyDryRun = Array.isArray(body.dryRun) && body.dryRun.includes('All');
  if (dryRun || bodyDryRun) options.dryRun = true;
  return options;
}
