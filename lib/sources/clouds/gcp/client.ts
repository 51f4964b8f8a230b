/**
 * The GCE metadata server: `Metadata-Flavor: Google` on every request (it refuses requests without it),
 * and checked on every answer (an answer without it did not come from the metadata server). The
 * maintenance-event read is a hanging GET (`wait_for_change=true`): it returns when the value changes
 * or after `timeout_sec`; `last_etag` makes it return at once when the value already differs from the
 * one last seen, so nothing is missed between two reads. 503 (the server during maintenance) is retried.
 */
import type { AxiosInstance } from 'axios';
import { DrainbridgeError } from '../../../errors/index.ts';
import {
  callWithRetry,
  createMetadataHttp,
  type MetadataRequest,
  type MetadataRetry,
  send,
  statusError,
} from '../http.ts';

export const MAINTENANCE_EVENT_PATH = '/computeMetadata/v1/instance/maintenance-event';
export const UPCOMING_MAINTENANCE_PATH = '/computeMetadata/v1/instance/upcoming-maintenance';
export const PREEMPTED_PATH = '/computeMetadata/v1/instance/preempted';

export interface GceClientOptions {
  /** `http://metadata.google.internal` on GCE; a fake server in tests. */
  readonly baseUrl: string;
  readonly timeoutMs: number;
  readonly retry?: MetadataRetry;
  readonly http?: AxiosInstance;
}

export interface MaintenanceEventRead {
  readonly value: string;
  readonly etag: string | undefined;
}

export class GceMetadataClient {
  readonly #options: GceClientOptions;
  readonly #http: AxiosInstance;

  constructor(options: GceClientOptions) {
    this.#options = options;
    this.#http = options.http ?? createMetadataHttp();
  }

  async #get(request: MetadataRequest, signal?: AbortSignal): Promise<{ body: string; etag?: string } | undefined> {
    return callWithRetry(
      async () => {
        const response = await send(this.#http, request);
        if (response.status === 404) return undefined;
        if (response.status !== 200) throw statusError(request, response);
        if (response.headers['metadata-flavor'] !== 'Google') {
          throw new DrainbridgeError(`GET ${request.url}: the answer lacks Metadata-Flavor: Google`);
        }
        const etag = response.headers.etag;
        return { body: response.body, ...(etag ? { etag } : {}) };
      },
      this.#options.retry,
      signal,
    );
  }

  /**
   * The maintenance-event value. With `waitSeconds`, a hanging read that returns when the value differs
   * from `lastEtag` (at once if it already does) or after that many seconds.
   */
  async maintenanceEvent(
    wait: { lastEtag?: string; waitSeconds?: number } = {},
    signal?: AbortSignal,
  ): Promise<MaintenanceEventRead> {
    return this.#hanging(MAINTENANCE_EVENT_PATH, wait, signal);
  }

  /** The preempted value (`TRUE`/`FALSE`, Spot and preemptible VMs), read as maintenanceEvent is. */
  async preempted(
    wait: { lastEtag?: string; waitSeconds?: number } = {},
    signal?: AbortSignal,
  ): Promise<MaintenanceEventRead> {
    return this.#hanging(PREEMPTED_PATH, wait, signal);
  }

  async #hanging(
    path: string,
    wait: { lastEtag?: string; waitSeconds?: number },
    signal?: AbortSignal,
  ): Promise<MaintenanceEventRead> {
    const params: Record<string, string> = {};
    if (wait.waitSeconds !== undefined) {
      params.wait_for_change = 'true';
      params.timeout_sec = String(wait.waitSeconds);
      if (wait.lastEtag) params.last_etag = wait.lastEtag;
    }
    const request: MetadataRequest = {
      method: 'GET',
      url: `${this.#options.baseUrl}${path}`,
      headers: { 'Metadata-Flavor': 'Google' },
      params,
      // A hanging read is answered after up to waitSeconds: the timeout comes on top of that.
      timeoutMs: this.#options.timeoutMs + (wait.waitSeconds ?? 0) * 1000,
      ...(signal ? { signal } : {}),
    };
    const read = await this.#get(request, signal);
    if (!read) throw new DrainbridgeError(`GET ${request.url}: HTTP 404 (no such metadata key)`);
    return { value: read.body, etag: read.etag };
  }

  /** The upcoming-maintenance document as text, or undefined when this VM has none (404). */
  async upcomingMaintenance(signal?: AbortSignal): Promise<string | undefined> {
    const request: MetadataRequest = {
      method: 'GET',
      url: `${this.#options.baseUrl}${UPCOMING_MAINTENANCE_PATH}`,
      headers: { 'Metadata-Flavor': 'Google' },
      params: { alt: 'json' },
      timeoutMs: this.#options.timeoutMs,
      ...(signal ? { signal } : {}),
    };
    return (await this.#get(request, signal))?.body;
  }
}
