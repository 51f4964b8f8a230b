/**
 * EC2's instance metadata service with IMDSv2: a session token from `PUT /latest/api/token` (TTL in
 * `X-aws-ec2-metadata-token-ttl-seconds`), sent as `X-aws-ec2-metadata-token` on every read. The token
 * is renewed before it expires and at once when IMDS answers 401 (expired, or the service restarted).
 * IMDSv1 is never used: instances that require IMDSv2 refuse it, and it is the weaker of the two.
 *
 * Pods reach IMDSv2 only when the instance's metadata hop limit is at least 2 (the token response is
 * sent with that many hops; a pod behind the node's network namespace is one more) — see README.
 */
import type { AxiosInstance } from 'axios';
import { DrainbridgeError } from '../../../errors/index.ts';
import { registerSecret } from '../../../log/redact.ts';
import {
  callWithRetry,
  createMetadataHttp,
  type MetadataRequest,
  type MetadataResponse,
  type MetadataRetry,
  send,
  statusError,
} from '../http.ts';

export const TOKEN_PATH = '/latest/api/token';
export const TOKEN_TTL_HEADER = 'X-aws-ec2-metadata-token-ttl-seconds';
export const TOKEN_HEADER = 'X-aws-ec2-metadata-token';
export const SCHEDULED_EVENTS_PATH = '/latest/meta-data/events/maintenance/scheduled';
export const SPOT_INSTANCE_ACTION_PATH = '/latest/meta-data/spot/instance-action';
export const REBALANCE_PATH = '/latest/meta-data/events/recommendations/rebalance';

/** Renew this long before the token's end, so no read goes out with a token about to lapse. */
const RENEW_MARGIN_MS = 60_000;

export interface Ec2ClientOptions {
  /** `http://169.254.169.254` on EC2; a fake server in tests. */
  readonly baseUrl: string;
  /** Token lifetime in seconds (1–21600). */
  readonly tokenTtlSeconds: number;
  readonly timeoutMs: number;
  readonly retry?: MetadataRetry;
  readonly http?: AxiosInstance;
  readonly now?: () => number;
}

export class Ec2MetadataClient {
  readonly #options: Ec2ClientOptions;
  readonly #http: AxiosInstance;
  readonly #now: () => number;
  #token: { value: string; renewAt: number } | undefined;

  constructor(options: Ec2ClientOptions) {
    this.#options = options;
    this.#http = options.http ?? createMetadataHttp();
    this.#now = options.now ?? Date.now;
  }

  async #newToken(signal?: AbortSignal): Promise<string> {
    const request: MetadataRequest = {
      method: 'PUT',
      url: `${this.#options.baseUrl}${TOKEN_PATH}`,
      headers: { [TOKEN_TTL_HEADER]: String(this.#options.tokenTtlSeconds) },
      timeoutMs: this.#options.timeoutMs,
      ...(signal ? { signal } : {}),
    };
    const response = await send(this.#http, request);
    if (response.status !== 200) throw statusError(request, response);
    const value = response.body.trim();
    if (!value) throw new DrainbridgeError(`PUT ${request.url}: empty token`);
    registerSecret(value);
    const lifetimeMs = this.#options.tokenTtlSeconds * 1000;
    this.#token = { value, renewAt: this.#now() + Math.max(lifetimeMs - RENEW_MARGIN_MS, lifetimeMs / 2) };
    return value;
  }

  async #validToken(signal?: AbortSignal): Promise<string> {
    if (this.#token && this.#now() < this.#token.renewAt) return this.#token.value;
    return this.#newToken(signal);
  }

  /** One GET with the token; a 401 renews the token and tries once more. */
  async #getOnce(
    path: string,
    signal?: AbortSignal,
  ): Promise<{ request: MetadataRequest; response: MetadataResponse }> {
    const url = `${this.#options.baseUrl}${path}`;
    const attempt = async (token: string) => {
      const request: MetadataRequest = {
        method: 'GET',
        url,
        headers: { [TOKEN_HEADER]: token },
        timeoutMs: this.#options.timeoutMs,
        ...(signal ? { signal } : {}),
      };
      return { request, response: await send(this.#http, request) };
    };
    const first = await attempt(await this.#validToken(signal));
    if (first.response.status !== 401) return first;
    this.#token = undefined;
    return attempt(await this.#newToken(signal));
  }

  /** The body of `path`, or undefined when IMDS answers 404 (no such notice now). */
  async get(path: string, signal?: AbortSignal): Promise<string | undefined> {
    return callWithRetry(
      async () => {
        const { request, response } = await this.#getOnce(path, signal);
        if (response.status === 404) return undefined;
        if (response.status !== 200) throw statusError(request, response);
        return response.body;
      },
      this.#options.retry,
      signal,
    );
  }
}
