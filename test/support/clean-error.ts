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
  { pattern: /<!DOCTYPE|<html/i, what: 'an HTTP body dump' },
  { pattern: /TypeError|ReferenceError|SyntaxError: Unexpected/, what: 'a JavaScript error name' },
];

/** Problems with `text` as an error a person reads; [] when it is clean. */
export function uncleanParts(text: string): string[] {
  return UNHANDLED.filter((sign) => sign.pattern.test(text)).map((sign) => sign.what);
}

/**
 * Asserts `text` is a clean error: not empty, no stack trace or dump, and it mentions each of `names`
 * (the field, flag or value at fault).
 */
export function assertCleanError(text: string, names: readonly (string | RegExp)[], what = 'the error'): void {
  assert.ok(text.trim().length > 0, `${what} is empty`);
  assert.deepEqual(uncleanParts(text), [], `${what} is not clean:\n${text}`);
  for (const name of names) {
    const found = typeof name === 'string' ? text.includes(name) : name.test(text);
    assert.ok(found, `${what} does not name ${String(name)}:\n${text}`);
  }
}
