/**
 * Records drainbridge keeps as JSON text in the cluster — the node's ledger, the admission queue on the
 * Lease, the owner claim on the Evacuation record — read through one schema-checked, versioned reader.
 *
 * A read is `absent` (no text), `ok` (the value, checked against its version's schema) or `unreadable`
 * (not JSON, not the schema, or a version this build does not know), with a reason naming the record.
 * An unreadable record is never read as empty or absent (issue 12: a damaged ledger read as empty lost
 * holds and uncordoned nodes under maintenance): each reader throws RecordUnreadable (`readLedger`,
 * `readOwner`, `readQueue`, the branch states) or, where it only informs, reports it and acts on nothing
 * (`ledgerOf` in the forwarder, the admission count, the CLI's node line).
 *
 * Versions: version 1 is the format every record has had so far, written without a stamp. A later
 * format is written stamped (`"$version": 2` beside its fields; a requestId cannot start with `$`, so
 * the stamp cannot collide with a map's keys) and read by its own schema; a stamp newer than this
 * build knows is unreadable, never guessed at.
 */
import type { z } from 'zod';

export const VERSION_KEY = '$version';

export type RecordRead<T> =
  | { readonly status: 'absent' }
  | { readonly status: 'ok'; readonly value: T; readonly version: number }
  | { readonly status: 'unreadable'; readonly reason: string };

export interface RecordFormat<T> {
  /** What the record is and where it lives, for reasons: `ledger (node annotation drainbridge.io/ledger)`. */
  readonly what: string;
  /**
   * The schema of each version, oldest first (index 0 is version 1). Each reads its version into the
   * current shape T (an older version's schema transforms, so callers only ever see T).
   */
  readonly versions: readonly [z.ZodType<T>, ...z.ZodType<T>[]];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The stamped version of a parsed record (1 when unstamped), and the fields without the stamp. */
function versionOf(value: unknown): { version: unknown; fields: unknown } {
  if (!isObject(value) || !Object.hasOwn(value, VERSION_KEY)) return { version: 1, fields: value };
  const { [VERSION_KEY]: version, ...fields } = value;
  return { version, fields };
}

function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'does not match its schema';
  const path = issue.path.length > 0 ? issue.path.join('.') : '(top level)';
  return `${path}: ${issue.message}`;
}

/** Checks an already parsed record (e.g. a JSON value inside a custom resource's status). */
export function decodeRecord<T>(value: unknown, format: RecordFormat<T>): RecordRead<T> {
  if (value === undefined || value === null) return { status: 'absent' };
  const { version, fields } = versionOf(value);
  const newest = format.versions.length;
  if (typeof version !== 'number' || !Number.isInteger(version) || version < 1) {
    return {
      status: 'unreadable',
      reason: `${format.what}: ${VERSION_KEY} ${JSON.stringify(version)} is not a version`,
    };
  }
  const schema = format.versions[version - 1];
  if (!schema) {
    return {
      status: 'unreadable',
      reason: `${format.what}: written in format version ${version}; this drainbridge reads up to ${newest}`,
    };
  }
  const parsed = schema.safeParse(fields);
  if (!parsed.success) return { status: 'unreadable', reason: `${format.what}: ${firstIssue(parsed.error)}` };
  return { status: 'ok', value: parsed.data, version };
}

/** Reads a record from its JSON text (an annotation's value); '' and undefined are absent. */
export function readJsonRecord<T>(text: string | undefined, format: RecordFormat<T>): RecordRead<T> {
  if (text === undefined || text === '') return { status: 'absent' };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { status: 'unreadable', reason: `${format.what}: not JSON (${(error as Error).message})` };
  }
  if (value === null) return { status: 'unreadable', reason: `${format.what}: null` };
  return decodeRecord(value, format);
}

/** The JSON text of a record in this build's newest format (version 1 is written unstamped). */
export function writeJsonRecord<T>(value: T, format: RecordFormat<T>): string {
  const newest = format.versions.length;
  if (newest === 1 || !isObject(value)) return JSON.stringify(value);
  return JSON.stringify({ [VERSION_KEY]: newest, ...value });
}
