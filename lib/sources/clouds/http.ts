/**
 * The one HTTP layer for instance metadata services: an axios instance that talks to the link-local
 * endpoint directly (no proxy: Azure requires bypassing proxies, and a proxy could answer for another
 * machine), a timeout on every request, and failures turned into drainbridge's errors — `TransientError`
 * for what may pass (no answer, 5xx, 429), retried with backoff by `callWithRetry`, `DrainbridgeError`
 * otherwise. Bodies are kept as text: the parsers decide what a document means, not axios.
 *
 * Errors never carry the request's headers (the IMDSv2 token is one), only method, URL and status.
 */
import axios, { type AxiosInstance, isAxiosError } from 'axios';
import { DrainbridgeError, TransientError } from '../../errors/index.ts';
import { DEFAULT_RETRY, type RetryOptions, withRetry } from '../../util/retry.ts';

export interface MetadataRequest {
  readonly method: 'GET' | 'PUT' | 'POST';
  readonly url: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly params?: Readonly<Record<string, string>>;
  readonly body?: string;
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
}

export interface MetadataResponse {
  readonly status: number;
  readonly body: string;
  /** Lower-case header names. */
  readonly headers: Readonly<Record<string, string>>;
}

/** The axios instance the metadata clients share. Every status is returned; `send` classifies failures. */
export function createMetadataHttp(): AxiosInstance {
  return axios.create({
    proxy: false,
    validateStatus: () => true,
    responseType: 'text',
    transformResponse: [(data: unknown) => data],
    maxRedirects: 0,
  });
}

function describe(request: MetadataRequest): string {
  return `${request.method} ${request.url}`;
}

function headersOf(raw: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (typeof raw !== 'object' || raw === null) return out;
  for (const [key, value] of Object.entries(raw as Record<string, unknown>)) {
    if (typeof value === 'string' || typeof value === 'number') out[key.toLowerCase()] = String(value);
  }
  return out;
}

/** Sends one request. No answer (refused, reset, timeout) is a TransientError; an aborted signal rethrows its reason. */
export async function send(http: AxiosInstance, request: MetadataRequest): Promise<MetadataResponse> {
  try {
    const response = await http.request<string>({
      method: request.method,
      url: request.url,
      headers: { ...request.headers },
      params: request.params,
      data: request.body,
      timeout: request.timeoutMs,
      signal: request.signal,
    });
    const body = typeof response.data === 'string' ? response.data : '';
    return { status: response.status, body, headers: headersOf(response.headers) };
  } catch (error) {
    if (request.signal?.aborted) throw request.signal.reason;
    const code = isAxiosError(error) ? (error.code ?? 'no response') : String(error);
    // The axios error holds the request configuration (headers): it is not kept as the cause.
    throw new TransientError(`${describe(request)}: no answer (${code})`);
  }
}

/** Whether a status may pass on its own (the metadata service is restarting, throttling, under maintenance). */
export function isTransientStatus(status: number): boolean {
  return status >= 500 || status === 429;
}

/** The error for an unexpected status: transient for 5xx/429, final otherwise. Names method, URL, status. */
export function statusError(request: MetadataRequest, response: MetadataResponse): DrainbridgeError {
  const snippet = response.body.slice(0, 200).replace(/\s+/g, ' ').trim();
  const message = `${describe(request)}: HTTP ${response.status}${snippet ? `: ${snippet}` : ''}`;
  return isTransientStatus(response.status) ? new TransientError(message) : new DrainbridgeError(message);
}

export type MetadataRetry = Partial<Omit<RetryOptions, 'isRetryable'>>;

/** Runs `call`, retrying TransientErrors with backoff (never past an aborted signal). */
export function callWithRetry<T>(call: () => Promise<T>, retry: MetadataRetry = {}, signal?: AbortSignal): Promise<T> {
  return withRetry(call, {
    ...DEFAULT_RETRY,
    ...retry,
    isRetryable: (error) => error instanceof TransientError && !signal?.aborted,
  });
}
