/**
 * Validation at the edge: every event and invocation goes through here before anything else runs.
 * A refusal is an `InvalidInput` naming each bad field; nothing has been changed when it is thrown.
 */
import type { z } from 'zod';
import { type FieldProblem, InvalidInput } from '../../errors/index.ts';
import { CONTRACTS, type DetailByType, type DetailType, KNOWN_VERSIONS } from './contracts.ts';

/** `a.b[2].c` from a zod issue path. */
export function formatPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>((out, key) => {
    if (typeof key === 'number') return `${out}[${key}]`;
    return out ? `${out}.${String(key)}` : String(key);
  }, '');
}

function joinPath(prefix: string, path: string): string {
  if (!prefix) return path;
  if (!path) return prefix;
  return path.startsWith('[') ? `${prefix}${path}` : `${prefix}.${path}`;
}

/**
 * Turns zod's issues into problems whose paths start at `prefix` (e.g. `detail`). One problem per
 * field: the first check that failed (an empty name is "must not be empty", not also "invalid").
 */
export function problemsOf(error: z.ZodError, prefix = ''): FieldProblem[] {
  const all = error.issues.flatMap((issue): FieldProblem[] => {
    const path = joinPath(prefix, formatPath(issue.path));
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => ({
        path: joinPath(path, key),
        message: 'unknown field (not part of this version of the contract)',
      }));
    }
    // Only a reported input tells "missing" from "wrong type" (zod leaves `input` out unless asked: see safeParseReporting).
    if (issue.code === 'invalid_type' && 'input' in issue && issue.input === undefined) {
      return [{ path, message: 'is required' }];
    }
    return [{ path, message: issue.message }];
  });
  return all.filter((problem, index) => all.findIndex((p) => p.path === problem.path) === index);
}

/**
 * `schema.safeParse` with the offending input kept in each issue, so `problemsOf` can tell a missing
 * field ("is required") from a wrong-typed one ("expected boolean, received string"). The input stays in
 * the issue objects only: problemsOf's messages never echo it (configuration may hold secrets).
 */
export function safeParseReporting<S extends z.ZodType>(schema: S, value: unknown): z.ZodSafeParseResult<z.output<S>> {
  return schema.safeParse(value, { reportInput: true });
}

function isDetailType(value: unknown): value is DetailType {
  return typeof value === 'string' && Object.hasOwn(CONTRACTS, value);
}

function versionProblem(detailType: DetailType, detail: unknown, prefix: string): FieldProblem | undefined {
  if (typeof detail !== 'object' || detail === null || Array.isArray(detail)) {
    return { path: prefix || 'detail', message: 'must be a JSON object' };
  }
  const version = (detail as { version?: unknown }).version;
  if (version === undefined) return { path: joinPath(prefix, 'version'), message: 'is required' };
  if (!(KNOWN_VERSIONS as readonly unknown[]).includes(version)) {
    return {
      path: joinPath(prefix, 'version'),
      message: `unknown version ${JSON.stringify(version)} of "${detailType}"; this drainbridge understands version ${KNOWN_VERSIONS.join(', ')}`,
    };
  }
  return undefined;
}

/** Validates one event's detail against its contract. */
export function parseDetail<T extends DetailType>(detailType: T, detail: unknown, prefix = ''): DetailByType[T] {
  const versionIssue = versionProblem(detailType, detail, prefix);
  if (versionIssue) throw new InvalidInput(`invalid "${detailType}" event`, [versionIssue]);
  const result = safeParseReporting(CONTRACTS[detailType].schema, detail);
  if (!result.success) throw new InvalidInput(`invalid "${detailType}" event`, problemsOf(result.error, prefix));
  return result.data as DetailByType[T];
}

/** An EventBridge event as delivered to a target (the fields drainbridge reads). */
export interface BusEvent<T extends DetailType = DetailType> {
  readonly source: string;
  readonly detailType: T;
  readonly detail: DetailByType[T];
  /** The bus's event id: EventBridge delivers at least once, so the same id may arrive twice. */
  readonly id?: string;
}

/** Validates a whole EventBridge event (`source`, `detail-type`, `detail`). */
export function parseBusEvent(event: unknown): BusEvent {
  if (typeof event !== 'object' || event === null) {
    throw new InvalidInput('invalid event', [{ path: '', message: 'must be a JSON object (an EventBridge event)' }]);
  }
  const { source, detail } = event as { source?: unknown; detail?: unknown };
  const detailType = (event as Record<string, unknown>)['detail-type'];
  if (!isDetailType(detailType)) {
    const known = Object.keys(CONTRACTS).join(', ');
    throw new InvalidInput('invalid event', [
      { path: 'detail-type', message: `must be one of ${known} (got ${JSON.stringify(detailType)})` },
    ]);
  }
  const expected = CONTRACTS[detailType].source;
  if (source !== expected) {
    throw new InvalidInput('invalid event', [
      { path: 'source', message: `"${detailType}" events come from "${expected}" (got ${JSON.stringify(source)})` },
    ]);
  }
  const id = (event as { id?: unknown }).id;
  return {
    source: expected,
    detailType,
    detail: parseDetail(detailType, detail, 'detail'),
    ...(typeof id === 'string' ? { id } : {}),
  };
}
