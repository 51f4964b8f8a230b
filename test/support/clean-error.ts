/**
 * "A clear error naming the problem, no stack trace": what a person (or a log reader) sees when drainbridge
 * refuses something. Used by the bad-input suite for handlers and the CLI alike.
 */
import assert from 'node:assert/strict';

/** Signs of an error that was not handled: stack frames, source paths, raw errno codes, object dumps. */
const UNHANDLED = [
  { pattern: /^\s+at .+[(:]\d+/m, what: 'a stack frame' },
  { pattern: /file:\/\/\/|node:internal|node_modules\//, what: 'a source path' },
  { pattern: /\bE(CONNREFUSED|NOTFOUND|AI_AGAIN|CONNRESET|TIMEDOUT|HOSTUNREACH)\b/, what: 'a raw errno code' },
  { pattern: /\[object Object\]/, what: '[object Object]' },
  { pattern: /\bundefined\b(?! (is|was) not)/, what: '"undefined"' },
  { pattern: /ZodError|"code":\s*"invalid_|"expected":/, what: 'a raw validation dump' },
  // A page, not a short excerpt of one (a parser may quote the first characters of what it got).
  { pattern: /<(!DOCTYPE|html|body|head)\b[\s\S]*<\/\w+>/i, what: 'an HTTP body dump' },
  { pattern: /TypeError|ReferenceError|SyntaxError: Unexpected/, what: 'a JavaScript error name' },
];

function isLogRecord(line: string): boolean {
  if (!line.startsWith('{')) return false;
  try {
    const record = JSON.parse(line) as { level?: unknown; _aws?: unknown };
    return typeof record.level === 'string' || record._aws !== undefined;
  } catch {
    return false;
  }
}

/**
 * The lines addressed to a person: structured log records (JSON lines with a `level`, EMF metric lines)
 * are for log pipelines and may carry the underlying cause's code; they are checked separately (no stack).
 */
export function personFacing(text: string): string {
  return text
    .split('\n')
    .filter((line) => !isLogRecord(line))
    .join('\n');
}

/** Problems with `text` as an error a person reads; [] when it is clean. */
export function uncleanParts(text: string): string[] {
  const forPeople = personFacing(text);
  const problems = UNHANDLED.filter((sign) => sign.pattern.test(forPeople)).map((sign) => sign.what);
  const logs = text.split('\n').filter(isLogRecord);
  if (logs.some((line) => /"stack"\s*:|\\n\s+at /.test(line))) problems.push('a stack trace in a log record');
  return problems;
}

/**
 * Asserts `text` is a clean error: not empty, no stack trace or dump, and it mentions each of `names`
 * (the field, flag or value at fault).
 */
export function assertCleanError(text: string, names: readonly (string | RegExp)[], what = 'the error'): void {
  const forPeople = personFacing(text);
  assert.ok(forPeople.trim().length > 0, `${what} is empty`);
  assert.deepEqual(uncleanParts(text), [], `${what} is not clean:\n${text}`);
  for (const name of names) {
    const found = typeof name === 'string' ? forPeople.includes(name) : name.test(forPeople);
    assert.ok(found, `${what} does not name ${String(name)}:\n${text}`);
  }
}
