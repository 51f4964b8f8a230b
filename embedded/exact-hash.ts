/**
 * `States.Hash($$.Execution.Id, 'SHA-256')` computed exactly, for the embedded executor. The interpreter it
 * runs (aws-local-stepfunctions 3.0.0) reads each 64-byte block of a message at the wrong offset in its
 * MD5, SHA-1 and SHA-256 (block k from byte 16·k instead of 64·k), so a message of 56 bytes or more is
 * digested from its first bytes only: every `drainbridge run` execution id
 * (`arn:aws:states:local:000000000000:execution:drainbridge-evacuate:run.<identity>.<uuid>`) hashed alike
 * once the identity is 8 characters or longer. Continue-as-new names the next execution with that hash, so
 * in one process only the first continuation started; every later one found its name taken (a repeated
 * start, answered with the first) and its request was left holding its node with no execution running it
 * (bench:scale: 8 of 10 held nodes stuck in NodeDraining). The executor therefore gives the interpreter
 * the hash computed here as a context field, and refuses a definition that hashes anything else.
 */
import { createHash } from 'node:crypto';

/** The one use of `States.Hash` the definitions make (the continuation's execution name). */
const EXECUTION_ID_SHA256 = /^States\.Hash\(\s*\$\$\.Execution\.Id\s*,\s*'SHA-256'\s*\)$/;

/** The context field that holds it (`$$.Execution.IdSha256`), set by the executor for each execution. */
export const EXECUTION_ID_SHA256_FIELD = 'IdSha256';

/** SHA-256 of an execution id, in lowercase hex, as Step Functions' `States.Hash` returns it. */
export function executionIdSha256(executionId: string): string {
  return createHash('sha256').update(executionId, 'utf8').digest('hex');
}

/** One value of a definition with the execution id's hash read from the context; throws on any other hash. */
function rewrite(value: unknown, key: string, where: string): unknown {
  if (typeof value === 'string') {
    if (!key.endsWith('.$') || !value.includes('States.Hash(')) return value;
    if (EXECUTION_ID_SHA256.test(value.trim())) return `$$.Execution.${EXECUTION_ID_SHA256_FIELD}`;
    throw new Error(
      `${where}: ${key} hashes with ${value}; the embedded interpreter's States.Hash is wrong for inputs of 56 bytes or more, so only States.Hash($$.Execution.Id, 'SHA-256') is supported (computed by the executor)`,
    );
  }
  if (Array.isArray(value)) return value.map((item) => rewrite(item, key, where));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, rewrite(v, k, where)]));
}

/**
 * The definition as the interpreter gets it: every `States.Hash($$.Execution.Id, 'SHA-256')` (a `.$` field)
 * read from `$$.Execution.IdSha256` instead. Throws, naming the field, on any other `States.Hash`.
 */
export function withExactHashes<T>(definition: T, where: string): T {
  return rewrite(definition, '', where) as T;
}
