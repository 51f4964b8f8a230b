/**
 * The one HTTP layer for OpenStack APIs (Keystone, Nova, Placement): an axios instance with a timeout
 * and TLS verification, and the conversion of every failure into `OpenStackHttpError`.
 *
 * Why a conversion: an axios error carries the request configuration — headers with `X-Auth-Token`, a
 * body with the Keystone password — and any logger that serialises it leaks them. Our error keeps
 * only method, URL (credentials and query secrets stripped), status and the service's fault message
 * with registered secrets cut out; the axios error is not kept as `cause`.
 */
import { readFileSync } from 'node:fs';
import { Agent } from 'node:https';
import { rootCertificates } from 'node:tls';
import axios, { type AxiosInstance, isAxiosError } from 'axios';
import { DrainbridgeError } from '../../errors/index.ts';
import { redactString } from '../../log/redact.ts';
import { DEFAULT_RETRY, type RetryOptions } from '../../util/retry.ts';

export interface HttpOptions {
  /** Per-request timeout in ms (connect + response). */
  readonly timeoutMs?: number;
  /** PEM CA bundle path (`OS_CACERT`, clouds.yaml `cacert`). Added to Node's default trust store. */
  readonly caBundlePath?: string;
  /** Skip TLS verification. Off by default; only `insecure: true` in clouds.yaml turns it on. */
  readonly insecure?: boolean;
}

export const DEFAULT_TIMEOUT_MS = 30_000;

/** Words for the network codes of a call that got no answer (the code itself stays in `code`). */
const NO_ANSWER: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'no answer (connection refused)',
  ECONNRESET: 'no answer (connection reset)',
  ECONNABORTED: 'no answer (timed out)',
  ETIMEDOUT: 'no answer (timed out)',
  ENOTFOUND: 'no answer (unknown host)',
  EAI_AGAIN: 'no answer (host name lookup failed)',
  EHOSTUNREACH: 'no answer (host unreachable)',
};

/** An OpenStack API call that failed; safe to log whole. */
export class OpenStackHttpError extends DrainbridgeError {
  readonly method: string;
  readonly url: string;
  /** HTTP status, or undefined when no answer came (timeout, connection refused/reset). */
  readonly status: number | undefined;
  /** The service's own fault message (Nova `badRequest.message`, Keystone `error.message`), redacted. */
  readonly fault: string | undefined;
  /** Network error code (ECONNRESET, ECONNABORTED, …) when there was no answer. */
  readonly code: string | undefined;
  constructor(fields: { method: string; url: string; status?: number; fault?: string; code?: string }) {
    const noAnswer = NO_ANSWER[fields.code ?? ''] ?? `no answer (${fields.code ?? 'no response'})`;
    const what = fields.status === undefined ? noAnswer : `HTTP ${fields.status}`;
    super(redactString(`${fields.method} ${fields.url}: ${what}${fields.fault ? `: ${fields.fault}` : ''}`));
    this.name = 'OpenStackHttpError';
    this.method = fields.method;
    this.url = fields.url;
    this.status = fields.status;
    this.fault = fields.fault === undefined ? undefined : redactString(fields.fault);
    this.code = fields.code;
  }
}

/** Creates the axios instance every OpenStack client uses. Responses of any status are returned, not thrown. */
export function createHttp(options: HttpOptions = {}): AxiosInstance {
  const ca = options.caBundlePath ? readFileSync(options.caBundlePath, 'utf8') : undefined;
  // Node's `ca` replaces the default trust store: keep the public roots and add the bundle.
  const httpsAgent = new Agent({
    rejectUnauthorized: options.insecure !== true,
    ...(ca ? { ca: [...rootCertificates, ca] } : {}),
  });
  return axios.create({
    timeout: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    httpsAgent,
    // Honour no proxy settings implicitly: OpenStack endpoints are addressed directly.
    proxy: false,
    validateStatus: () => true,
    headers: { Accept: 'application/json' },
  });
}

/** A URL without user info, and with query parameters that could carry secrets masked. */
export function safeUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    for (const key of [...parsed.searchParams.keys()]) {
      if (/token|secret|pass|key|signature/i.test(key)) parsed.searchParams.set(key, 'REDACTED');
    }
    return redactString(parsed.toString());
  } catch {
    return redactString(url.replace(/\/\/[^/@]*@/, '//'));
  }
}

/**
 * The human part of an OpenStack fault body: Nova `{"badRequest":{"message":…}}` (any single key),
 * Keystone `{"error":{"message":…}}`, Placement `{"errors":[{"detail":…}]}`, or a short text.
 */
export function faultMessage(body: unknown): string | undefined {
  if (typeof body === 'string') return body.trim().slice(0, 300) || undefined;
  if (body === null || typeof body !== 'object') return undefined;
  const errors = (body as { errors?: unknown }).errors;
  if (Array.isArray(errors)) {
    const details = errors.map((e) => (e as { detail?: unknown; title?: unknown }).detail ?? '').filter(Boolean);
    if (details.length > 0) return details.join('; ');
  }
  for (const value of Object.values(body)) {
    if (value && typeof value === 'object' && typeof (value as { message?: unknown }).message === 'string') {
      return (value as { message: string }).message;
    }
  }
  return undefined;
}

/** Converts anything an axios call threw into an OpenStackHttpError (the raw error is dropped on purpose). */
export function fromTransportError(error: unknown, method: string, url: string): OpenStackHttpError {
  if (error instanceof OpenStackHttpError) return error;
  const code = isAxiosError(error) ? error.code : error instanceof Error ? error.name : undefined;
  return new OpenStackHttpError({ method, url: safeUrl(url), code: code ?? 'request failed' });
}

/** An error for a response with a non-success status. */
export function fromResponse(method: string, url: string, status: number, body: unknown): OpenStackHttpError {
  const fault = faultMessage(body);
  return new OpenStackHttpError({ method, url: safeUrl(url), status, ...(fault ? { fault } : {}) });
}

/** 5xx (except 501), 408, 429 and answers that never came are worth another try. */
export function isRetryableHttp(error: unknown): boolean {
  if (!(error instanceof OpenStackHttpError)) return false;
  if (error.status === undefined) return true;
  return error.status === 408 || error.status === 429 || (error.status >= 500 && error.status !== 501);
}

/** Default retry policy for OpenStack calls. */
export const OPENSTACK_RETRY: RetryOptions = { ...DEFAULT_RETRY, isRetryable: isRetryableHttp };
