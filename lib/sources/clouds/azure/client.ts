/**
 * Azure's instance metadata service for Scheduled Events: read the document, approve events
 * (`POST {"StartRequests":[{"EventId":…}]}`), and read the VM's own name. Every request carries
 * `Metadata: true` (IMDS answers 400 without it), has a timeout and is retried on transient failures.
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

/**
 * Scheduled Events is enabled for a VM by its first request for the document, and Microsoft documents
 * that this first answer may take up to two minutes ("Enabling and disabling Scheduled Events",
 * learn.microsoft.com/azure/virtual-machines/linux/scheduled-events). The document reads wait that long
 * until one has been answered; later reads use the agent's timeout.
 */
export const AZURE_FIRST_READ_TIMEOUT_MS = 120_000;

export interface AzureClientOptions {
  /** `http://169.254.169.254` on Azure; a fake server in tests. */
  readonly baseUrl: string;
  /** The Scheduled Events api-version (2020-07-01: every field the parser reads). */
  readonly apiVersion: string;
  readonly timeoutMs: number;
  /** The timeout of document reads until one was answered (at least `timeoutMs`). */
  readonly firstReadTimeoutMs?: number;
  readonly retry?: MetadataRetry;
  readonly http?: AxiosInstance;
}

/** The instance-metadata api-version used to read the VM's name. */
const COMPUTE_API_VERSION = '2021-02-01';

export class AzureScheduledEventsClient {
  readonly #options: AzureClientOptions;
  readonly #http: AxiosInstance;
  /** Whether IMDS answered a document read: Scheduled Events is enabled, the first-read wait is over. */
  #answered = false;

  constructor(options: AzureClientOptions) {
    this.#options = options;
    this.#http = options.http ?? createMetadataHttp();
  }

  get #url(): string {
    return `${this.#options.baseUrl}/metadata/scheduledevents`;
  }

  async #call(request: Omit<MetadataRequest, 'timeoutMs'>, signal?: AbortSignal, timeoutMs?: number): Promise<string> {
    const full: MetadataRequest = {
      ...request,
      headers: { Metadata: 'true', ...request.headers },
      timeoutMs: timeoutMs ?? this.#options.timeoutMs,
      ...(signal ? { signal } : {}),
    };
    return callWithRetry(
      async () => {
        const response = await send(this.#http, full);
        if (response.status !== 200) throw statusError(full, response);
        return response.body;
      },
      this.#options.retry,
      signal,
    );
  }

  /** The Scheduled Events document, as text. */
  async fetchDocument(signal?: AbortSignal): Promise<string> {
    const { timeoutMs, firstReadTimeoutMs = timeoutMs } = this.#options;
    const request = { method: 'GET' as const, url: this.#url, params: { 'api-version': this.#options.apiVersion } };
    const text = await this.#call(
      request,
      signal,
      this.#answered ? timeoutMs : Math.max(timeoutMs, firstReadTimeoutMs),
    );
    this.#answered = true;
    return text;
  }

  /** Approves events: Azure may start them before their NotBefore. */
  async approve(eventIds: readonly string[], signal?: AbortSignal): Promise<void> {
    if (eventIds.length === 0) throw new DrainbridgeError('approve: no event ids');
    const body = JSON.stringify({ StartRequests: eventIds.map((EventId) => ({ EventId })) });
    await this.#call(
      {
        method: 'POST',
        url: this.#url,
        params: { 'api-version': this.#options.apiVersion },
        headers: { 'Content-Type': 'application/json' },
        body,
      },
      signal,
    );
  }

  /** The VM's name as Scheduled Events lists it (`compute/name`: `vmss_3` for a Uniform scale-set instance). */
  async vmName(signal?: AbortSignal): Promise<string> {
    const text = await this.#call(
      {
        method: 'GET',
        url: `${this.#options.baseUrl}/metadata/instance/compute/name`,
        params: { 'api-version': COMPUTE_API_VERSION, format: 'text' },
      },
      signal,
    );
    return text.trim();
  }
}
