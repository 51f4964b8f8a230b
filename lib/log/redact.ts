/**
 * Keeps credentials out of every log line. Two mechanisms, because either alone leaks:
 *  - keys that name secrets (password, token, secret, authorization, …) are replaced wholesale;
 *  - values registered as secrets (a Keystone password, a bearer token) are cut out of any string,
 *    wherever they ended up — an HTTP client error's serialised request body, a URL, a message.
 */

export const REDACTED = '[REDACTED]';

const SECRET_KEY = /pass(word)?|secret|token|authorization|credential|cookie|private[-_]?key|api[-_]?key/i;
/** Keys that match SECRET_KEY but carry no secret (counts, ids of tokens are still secret). */
const NOT_SECRET_KEYS = new Set(['tokenExpiresAt', 'passes', 'passCount', 'bypass']);
const MIN_SECRET_LENGTH = 4;

const secrets = new Set<string>();

/** Remembers a secret value so that `redact` cuts it out of any string. Empty and very short values are ignored. */
export function registerSecret(value: string | undefined): void {
  if (value && value.length >= MIN_SECRET_LENGTH) secrets.add(value);
}

/** Forgets every registered secret (tests). */
export function clearSecrets(): void {
  secrets.clear();
}

export function isSecretKey(key: string): boolean {
  return SECRET_KEY.test(key) && !NOT_SECRET_KEYS.has(key);
}

/** Replaces every registered secret inside a string. */
export function redactString(text: string): string {
  let out = text;
  for (const secret of secrets) {
    if (out.includes(secret)) out = out.split(secret).join(REDACTED);
  }
  return out;
}

/**
 * A deep copy of `value` with secret keys and registered secret values replaced. Errors become plain
 * objects (name, message, code, cause) so that an HTTP client's error, which holds its request
 * configuration and headers, is never serialised whole.
 */
export function redact(value: unknown, depth = 0): unknown {
  if (depth > 8) return '[…]';
  if (typeof value === 'string') return redactString(value);
  if (value === null || typeof value !== 'object') return value;
  if (value instanceof Error) return redactError(value, depth);
  if (Array.isArray(value)) return value.map((entry) => redact(entry, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, entry] of Object.entries(value)) {
    out[key] = isSecretKey(key) && entry !== undefined && entry !== null ? REDACTED : redact(entry, depth + 1);
  }
  return out;
}

function redactError(error: Error, depth: number): Record<string, unknown> {
  const out: Record<string, unknown> = { name: error.name, message: redactString(error.message) };
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' || typeof code === 'number') out.code = code;
  if (error.cause !== undefined) out.cause = redact(error.cause, depth + 1);
  return out;
}
