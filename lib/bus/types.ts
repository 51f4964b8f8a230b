/**
 * The one bus-adapter contract: how the rest of drainbridge puts validated events on a bus. One module
 * per bus implements it — EventBridge (eventbridge-publisher.ts; `drainbridge run`'s bus endpoint is
 * EventBridge's API too, bus-endpoint-client.ts), the in-process bus (in-process-publisher.ts), and
 * no bus at all (printing-publisher.ts). Workflow tasks and the node agent publish one event at a time
 * (`publish`); the forwarder's queue sends batches (`fits`, `send`) and retries what failed itself.
 */
import type { DetailByType, DetailType } from './contracts/contracts.ts';

/** One event for the bus: its contract's detail-type and a detail that must satisfy it. */
export interface BusEvent<T extends DetailType = DetailType> {
  readonly detailType: T;
  readonly detail: DetailByType[T];
}

/** One event's outcome: on the bus, or an error (`TransientError` when it may pass, to retry). */
export type SendOutcome = { readonly ok: true } | { readonly ok: false; readonly error: Error };

export interface BusAdapter {
  /** Which bus, for logs: `eventbridge`, `in-process`, `printing`. */
  readonly name: string;
  /** The bus's name, set on every entry. */
  readonly busName: string;
  /** Most events one `send` takes (and `fits` says whether a batch is within the size limit). */
  readonly maxBatch: number;
  /** Validates `detail` against its contract and puts it on the bus. Resolves when the bus accepted it. */
  publish<T extends DetailType>(detailType: T, detail: DetailByType[T]): Promise<void>;
  /** Whether these events, once validated, fit one `send`. */
  fits(events: readonly BusEvent[]): boolean;
  /**
   * Sends a batch without retrying: one outcome per event, in order; an event that breaks its contract
   * is refused alone, never sent. `signal` cancels the send (a stopping forwarder): the events count as failed.
   */
  send(events: readonly BusEvent[], signal?: AbortSignal): Promise<SendOutcome[]>;
}

/** What a caller that publishes one event at a time needs of a bus adapter (workflow tasks, the node agent). */
export type EventPublisher = Pick<BusAdapter, 'publish'>;
