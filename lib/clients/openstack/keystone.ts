/**
 * Keystone v3: authenticate (password or application credential, project/domain scoped by name or
 * id), keep the token until shortly before it expires, find endpoints in its catalog, and make
 * authenticated calls for the service clients — re-authenticating once when a service answers 401
 * (token revoked or expired early), retrying transient faults with backoff.
 */
import type { AxiosInstance, AxiosResponse } from 'axios';
import { ConfigError } from '../../errors/index.ts';
import type { Logger } from '../../log/logger.ts';
import { registerSecret } from '../../log/redact.ts';
import { type RetryOptions, withRetry } from '../../util/retry.ts';
import type { OpenStackCredentials } from './credentials.ts';
import { createHttp, fromResponse, fromTransportError, OPENSTACK_RETRY, OpenStackHttpError } from './http.ts';

export type LogSink = Pick<Logger, 'debug' | 'info' | 'warn'>;

interface CatalogEndpoint {
  readonly interface: string;
  readonly region?: string;
  readonly region_id?: string;
  readonly url: string;
}
interface CatalogService {
  readonly type: string;
  readonly endpoints: readonly CatalogEndpoint[];
}

interface Token {
  readonly value: string;
  readonly expiresAt: number;
  readonly catalog: readonly CatalogService[];
}

export interface KeystoneSessionOptions {
  readonly credentials: OpenStackCredentials;
  /** Defaults to createHttp() with the credentials' CA bundle / insecure setting. */
  readonly http?: AxiosInstance;
  readonly logger?: LogSink;
  readonly retry?: RetryOptions;
  /** Re-authenticate when the token expires within this many ms (default 5 minutes). */
  readonly refreshBeforeExpiryMs?: number;
  readonly now?: () => number;
}

/** One authenticated call to an OpenStack service. */
export interface ServiceRequest {
  /** Catalog service type (`compute`, `placement`), or an absolute base URL in `baseUrl`. */
  readonly service: string;
  readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Path below the endpoint, starting with `/`; the empty string means the endpoint itself. */
  readonly path: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: unknown;
  /**
   * Whether repeating the call is harmless. Non-idempotent calls (actions) are retried only when the
   * service certainly did not act (503, connection refused), never after a timeout or a 500.
   */
  readonly idempotent?: boolean;
}

export interface ServiceResponse<T> {
  readonly status: number;
  readonly data: T;
  readonly headers: Readonly<Record<string, string | undefined>>;
}

function authIdentity(c: OpenStackCredentials): Record<string, unknown> {
  if (c.method === 'application_credential') {
    const credential = c.applicationCredentialId
      ? { id: c.applicationCredentialId, secret: c.applicationCredentialSecret }
      : {
          name: c.applicationCredentialName,
          secret: c.applicationCredentialSecret,
          user: userRef(c),
        };
    return { methods: ['application_credential'], application_credential: credential };
  }
  return { methods: ['password'], password: { user: { ...userRef(c), password: c.password } } };
}

function userRef(c: OpenStackCredentials): Record<string, unknown> {
  if (c.userId) return { id: c.userId };
  return { name: c.username, domain: c.userDomainId ? { id: c.userDomainId } : { name: c.userDomainName } };
}

function authScope(c: OpenStackCredentials): Record<string, unknown> | undefined {
  // An application credential carries its own project scope; Keystone rejects an explicit one.
  if (c.method === 'application_credential') return undefined;
  if (c.projectId) return { project: { id: c.projectId } };
  if (!c.projectName) return { domain: c.domainId ? { id: c.domainId } : { name: c.domainName } };
  const domain = c.projectDomainId ? { id: c.projectDomainId } : { name: c.projectDomainName };
  return { project: { name: c.projectName, domain } };
}

/** Picks the endpoint URL of a service type by interface and (optionally) region. */
export function findEndpoint(
  catalog: readonly CatalogService[],
  serviceType: string,
  selector: { interface: string; region?: string | undefined },
): string | undefined {
  const service = catalog.find((s) => s.type === serviceType);
  const endpoint = service?.endpoints.find(
    (e) =>
      e.interface === selector.interface &&
      (selector.region === undefined || e.region_id === selector.region || e.region === selector.region),
  );
  return endpoint?.url.replace(/\/+$/, '');
}

const isDeliveredOrRefused = (error: unknown): boolean =>
  error instanceof OpenStackHttpError && (error.status === 503 || error.code === 'ECONNREFUSED');

/** An authenticated Keystone v3 session shared by the Nova and Placement clients. */
export class KeystoneSession {
  readonly #credentials: OpenStackCredentials;
  readonly #http: AxiosInstance;
  readonly #logger: LogSink | undefined;
  readonly #retry: RetryOptions;
  readonly #refreshBeforeExpiryMs: number;
  readonly #now: () => number;
  #token: Token | undefined;
  #authenticating: Promise<Token> | undefined;
  /** How many times this session obtained a token (tests and metrics). */
  authCount = 0;

  constructor(options: KeystoneSessionOptions) {
    this.#credentials = options.credentials;
    // Registered here too, for credentials that did not come through loadOpenStackCredentials.
    registerSecret(options.credentials.password);
    registerSecret(options.credentials.applicationCredentialSecret);
    this.#http =
      options.http ??
      createHttp({
        ...(options.credentials.caBundlePath ? { caBundlePath: options.credentials.caBundlePath } : {}),
        insecure: options.credentials.insecure,
      });
    this.#logger = options.logger;
    this.#retry = options.retry ?? OPENSTACK_RETRY;
    this.#refreshBeforeExpiryMs = options.refreshBeforeExpiryMs ?? 5 * 60_000;
    this.#now = options.now ?? Date.now;
  }

  /** A valid token, authenticating when there is none or it is about to expire. */
  async token(): Promise<string> {
    return (await this.#validToken()).value;
  }

  /** Forgets the cached token (after a 401) so the next call authenticates again. */
  invalidate(tokenValue?: string): void {
    if (tokenValue === undefined || this.#token?.value === tokenValue) this.#token = undefined;
  }

  /** The catalog URL of a service type for the configured interface and region. */
  async endpoint(serviceType: string): Promise<string> {
    const token = await this.#validToken();
    const selector = { interface: this.#credentials.interface, region: this.#credentials.regionName };
    const url = findEndpoint(token.catalog, serviceType, selector);
    if (!url) {
      // Not an HTTP failure and not transient: the catalog will not change between retries.
      const where = selector.region ? ` in region ${selector.region}` : '';
      throw new ConfigError([
        {
          path: 'OS_INTERFACE/OS_REGION_NAME',
          message: `no ${selector.interface} endpoint for service type "${serviceType}"${where} in the Keystone catalog`,
        },
      ]);
    }
    return url;
  }

  /**
   * Calls a service with the session's token. Non-2xx answers throw OpenStackHttpError; one 401 is
   * answered by re-authenticating and repeating the call.
   */
  async request<T>(call: ServiceRequest): Promise<ServiceResponse<T>> {
    const retry: RetryOptions =
      call.idempotent === false ? { ...this.#retry, isRetryable: isDeliveredOrRefused } : this.#retry;
    const attempt = async (): Promise<ServiceResponse<T> & { url: string }> => {
      const first = await this.#send<T>(call);
      if (first.status !== 401) return first;
      // `openstackService`: Powertools Logger drops a key named service (its own).
      this.#logger?.info('OpenStack answered 401: authenticating again', {
        openstackService: call.service,
        path: call.path,
      });
      this.invalidate();
      return this.#send<T>(call);
    };
    const response = await withRetry(
      async () => {
        const answer = await attempt();
        if (answer.status >= 400) throw fromResponse(call.method, answer.url, answer.status, answer.data);
        return answer;
      },
      {
        ...retry,
        onRetry: (error, n, delayMs) =>
          this.#logger?.warn('OpenStack call failed, retrying', { error: String(error), attempt: n, delayMs }),
      },
    );
    return { status: response.status, data: response.data, headers: response.headers };
  }

  async #send<T>(call: ServiceRequest): Promise<ServiceResponse<T> & { url: string }> {
    const token = await this.#validToken();
    const base = call.service.startsWith('http') ? call.service : await this.endpoint(call.service);
    const url = `${base}${call.path}`;
    try {
      const response = await this.#http.request({
        method: call.method,
        url,
        headers: {
          ...call.headers,
          'X-Auth-Token': token.value,
          ...(call.body !== undefined ? { 'Content-Type': 'application/json' } : {}),
        },
        data: call.body,
      });
      if (response.status === 401) this.invalidate(token.value);
      const headers: Record<string, string | undefined> = {};
      for (const [key, value] of Object.entries(response.headers))
        headers[key.toLowerCase()] = value === undefined ? undefined : String(value);
      return { status: response.status, data: response.data as T, headers, url };
    } catch (error) {
      throw fromTransportError(error, call.method, url);
    }
  }

  async #validToken(): Promise<Token> {
    const token = this.#token;
    if (token && token.expiresAt - this.#now() > this.#refreshBeforeExpiryMs) return token;
    this.#authenticating ??= this.#authenticate().finally(() => {
      this.#authenticating = undefined;
    });
    return this.#authenticating;
  }

  async #authenticate(): Promise<Token> {
    const url = `${this.#credentials.authUrl}/auth/tokens`;
    const scope = authScope(this.#credentials);
    const body = { auth: { identity: authIdentity(this.#credentials), ...(scope ? { scope } : {}) } };
    const token = await withRetry(async () => {
      let response: AxiosResponse<unknown>;
      try {
        response = await this.#http.post(url, body, { headers: { 'Content-Type': 'application/json' } });
      } catch (error) {
        throw fromTransportError(error, 'POST', url);
      }
      if (response.status !== 201) throw fromResponse('POST', url, response.status, response.data);
      return this.#tokenFrom(response.headers['x-subject-token'], response.data);
    }, this.#retry);
    this.#token = token;
    this.authCount++;
    this.#logger?.debug('authenticated with Keystone', { tokenExpiresAt: new Date(token.expiresAt).toISOString() });
    return token;
  }

  #tokenFrom(header: unknown, data: unknown): Token {
    const body = (data as { token?: { expires_at?: unknown; catalog?: unknown } } | undefined)?.token;
    if (typeof header !== 'string' || header === '' || typeof body?.expires_at !== 'string') {
      throw new OpenStackHttpError({
        method: 'POST',
        url: `${this.#credentials.authUrl}/auth/tokens`,
        fault: 'Keystone answered 201 without a token',
      });
    }
    registerSecret(header);
    const catalog = Array.isArray(body.catalog) ? (body.catalog as CatalogService[]) : [];
    return { value: header, expiresAt: Date.parse(body.expires_at), catalog };
  }
}
