/**
 * The bus adapter (types.ts) for EventBridge: PutEvents to drainbridge's bus on AWS, or, with the client
 * of bus-endpoint-client.ts, to `drainbridge run`'s bus endpoint, which speaks the same API.
 *
 * Three layers of failure handling, because PutEvents fails in three ways:
 *  - the HTTP call (timeouts, 5xx, throttling): the SDK's own retries, bounded by a per-call timeout;
 *  - a partial failure (HTTP 200 with `FailedEntryCount` > 0): the SDK does not retry it, so a
 *    throttled or internal entry failure becomes a `TransientError` retried here with `withRetry`;
 *  - anything else (bus missing, access denied, malformed): not retried, a `DrainbridgeError` naming it.
 */
import type { EventBridgeClient, EventBridgeClientConfig } from '@aws-sdk/client-eventbridge';
import { DrainbridgeError, TransientError } from '../errors/index.ts';
import { namedExports } from '../util/named-exports.ts';
import { DEFAULT_RETRY, type RetryOptions, withRetry } from '../util/retry.ts';
import { fitsOnePut, MAX_ENTRIES_PER_PUT, MAX_PUT_BYTES } from './batch.ts';
import type { DetailByType, DetailType } from './contracts/index.ts';
import { type PublishEntry, type PutEventsResultEntry, TRANSIENT_ENTRY_CODES, toPublishEntry } from './entry.ts';
import { fitsOneSend, sendValid } from './send-batch.ts';
import type { BusAdapter, BusEvent, SendOutcome } from './types.ts';

export interface EventBridgePublisherOptions {
  /** Upper bound for one PutEvents call including the SDK's retries. Default 10 s. */
  readonly timeoutMs?: number;
  /** Retries of entry-level transient failures (the SDK does not retry those). */
  readonly retry?: Partial<Omit<RetryOptions, 'isRetryable'>>;
}

/** Client settings for drainbridge: a request timeout and the SDK's standard retries. */
export const EVENTBRIDGE_CLIENT_DEFAULTS = {
  maxAttempts: 3,
  retryMode: 'standard',
  // Without throwOnRequestTimeout the SDK only logs a warning when requestTimeout passes.
  requestHandler: { connectionTimeout: 3_000, requestTimeout: 5_000, throwOnRequestTimeout: true },
} as const satisfies EventBridgeClientConfig;

const DEFAULT_TIMEOUT_MS = 10_000;

/**
 * The SDK's EventBridge module, loaded on first use rather than at import: it is a large part of a
 * Lambda function's cold import, and a function that publishes nothing never needs it.
 */
async function eventBridgeModule(): Promise<typeof import('@aws-sdk/client-eventbridge')> {
  return namedExports(await import('@aws-sdk/client-eventbridge'), 'PutEventsCommand');
}

/** An EventBridge client with drainbridge's settings (EVENTBRIDGE_CLIENT_DEFAULTS), its SDK module loaded now. */
export async function createEventBridgeClient(): Promise<EventBridgeClient> {
  const { EventBridgeClient } = await eventBridgeModule();
  return new EventBridgeClient({ ...EVENTBRIDGE_CLIENT_DEFAULTS });
}

interface SdkErrorShape {
  readonly name?: unknown;
  readonly message?: unknown;
  readonly $retryable?: unknown;
  readonly $metadata?: { readonly httpStatusCode?: unknown };
  readonly code?: unknown;
}

const TRANSIENT_ERROR_NAMES = new Set([
  'TimeoutError',
  'AbortError',
  'ThrottlingException',
  'InternalException',
  'InternalFailure',
  'ServiceUnavailable',
  'RequestTimeout',
  'RequestTimeoutException',
]);
const TRANSIENT_NETWORK_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'ETIMEDOUT', 'EPIPE', 'EAI_AGAIN', 'ENOTFOUND']);

/** Whether an error from `client.send` may pass on its own. */
export function isTransientSdkError(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const shape = error as SdkErrorShape;
  const status = shape.$metadata?.httpStatusCode;
  if (typeof status === 'number' && (status >= 500 || status === 429)) return true;
  if (shape.$retryable !== undefined) return true;
  if (typeof shape.name === 'string' && TRANSIENT_ERROR_NAMES.has(shape.name)) return true;
  return typeof shape.code === 'string' && TRANSIENT_NETWORK_CODES.has(shape.code);
}

function describe(error: unknown): string {
  const shape = (typeof error === 'object' && error !== null ? error : {}) as SdkErrorShape;
  return `${String(shape.name ?? 'Error')}: ${String(shape.message ?? error)}`;
}

function entryFailure(entry: PublishEntry, result: PutEventsResultEntry | undefined): Error {
  const code = result?.ErrorCode ?? 'Unknown';
  const message = `EventBridge refused "${entry.DetailType}" on bus "${entry.EventBusName}": ${code}: ${result?.ErrorMessage ?? 'no message'}`;
  return TRANSIENT_ENTRY_CODES.has(code) ? new TransientError(message) : new DrainbridgeError(message);
}

/** Publishes events with PutEvents: one at a time with retries (`publish`), or a batch without (`send`). */
export class EventBridgePublisher implements BusAdapter {
  readonly name = 'eventbridge';
  readonly maxBatch = MAX_ENTRIES_PER_PUT;
  readonly #client: EventBridgeClient;
  readonly #eventBusName: string;
  readonly #timeoutMs: number;
  readonly #retry: RetryOptions;

  constructor(client: EventBridgeClient, eventBusName: string, options: EventBridgePublisherOptions = {}) {
    this.#client = client;
    this.#eventBusName = eventBusName;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#retry = { ...DEFAULT_RETRY, ...options.retry, isRetryable: (error) => error instanceof TransientError };
  }

  async publish<T extends DetailType>(detailType: T, detail: DetailByType[T]): Promise<void> {
    // Validation first: a bad event is refused before anything leaves the process.
    const entry = toPublishEntry(detailType, detail, this.#eventBusName);
    await withRetry(() => this.#putOnce(entry), this.#retry);
  }

  async #putOnce(entry: PublishEntry): Promise<void> {
    let output: { FailedEntryCount?: number; Entries?: PutEventsResultEntry[] };
    const { PutEventsCommand } = await eventBridgeModule();
    try {
      output = await this.#client.send(new PutEventsCommand({ Entries: [entry] }), {
        abortSignal: AbortSignal.timeout(this.#timeoutMs),
      });
    } catch (error) {
      const message = `PutEvents "${entry.DetailType}" to bus "${entry.EventBusName}" failed: ${describe(error)}`;
      throw isTransientSdkError(error)
        ? new TransientError(message, { cause: error })
        : new DrainbridgeError(message, { cause: error });
    }
    if ((output.FailedEntryCount ?? 0) > 0 || output.Entries?.[0]?.ErrorCode) {
      throw entryFailure(entry, output.Entries?.[0]);
    }
  }

  fits(events: readonly BusEvent[]): boolean {
    return fitsOneSend(events, this.#eventBusName);
  }

  send(events: readonly BusEvent[], signal?: AbortSignal): Promise<SendOutcome[]> {
    return sendValid(events, this.#eventBusName, (entries) => this.#putBatch(entries, signal));
  }

  /**
   * One PutEvents call for up to 10 already-validated entries that fit 256 KiB together (lib/bus/batch.ts
   * makes such batches). Resolves with one outcome per entry, in order: `ok`, or the error — a
   * `TransientError` for a failure that may pass (the whole call's, or an entry's throttling/internal
   * code), a `DrainbridgeError` for a refusal. Retrying is the caller's (the forwarder's queue); the SDK's
   * own HTTP retries and the per-call timeout still apply. `signal` cancels the call (a stopping forwarder).
   */
  async #putBatch(entries: readonly PublishEntry[], signal?: AbortSignal): Promise<SendOutcome[]> {
    if (entries.length === 0) return [];
    if (!fitsOnePut(entries)) {
      throw new DrainbridgeError(
        `a PutEvents batch takes at most ${MAX_ENTRIES_PER_PUT} entries and ${MAX_PUT_BYTES} bytes; split it with chunkEntries`,
      );
    }
    let output: { FailedEntryCount?: number; Entries?: PutEventsResultEntry[] };
    const { PutEventsCommand } = await eventBridgeModule();
    try {
      const timeout = AbortSignal.timeout(this.#timeoutMs);
      output = await this.#client.send(new PutEventsCommand({ Entries: [...entries] }), {
        abortSignal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      });
    } catch (error) {
      const message = `PutEvents of ${entries.length} entries to bus "${this.#eventBusName}" failed: ${describe(error)}`;
      const failure = isTransientSdkError(error)
        ? new TransientError(message, { cause: error })
        : new DrainbridgeError(message, { cause: error });
      return entries.map(() => ({ ok: false, error: failure }));
    }
    return entries.map((entry, index) => {
      const result = output.Entries?.[index];
      if (result?.ErrorCode || (result === undefined && (output.FailedEntryCount ?? 0) > 0)) {
        return { ok: false, error: entryFailure(entry, result) };
      }
      return { ok: true };
    });
  }

  /** The bus this publisher puts events on. */
  get busName(): string {
    return this.#eventBusName;
  }
}
