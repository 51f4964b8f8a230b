/**
 * Where the forwarder's publishing path puts events: EventBridge (`PutEvents`, batched) when deployed
 * against AWS, or the in-process bus in `drainbridge run`. Both validate each event against its contract
 * first: an invalid event is refused alone, never sent.
 */

import { fitsOnePut, MAX_ENTRIES_PER_PUT } from '../../bus/batch.ts';
import { type PublishEntry, TRANSIENT_ENTRY_CODES, toPublishEntry } from '../../bus/entry.ts';
import type { EventBridgePublisher } from '../../bus/eventbridge-publisher.ts';
import type { InProcessBus } from '../../bus/in-process-bus.ts';
import { DrainbridgeError, TransientError } from '../../errors/index.ts';
import type { ForwardedEvent } from '../types.ts';

/** One event's outcome: on the bus, or an error (`TransientError` is retried by the queue). */
export type SendOutcome = { readonly ok: true } | { readonly ok: false; readonly error: Error };

export interface BusSink {
  readonly name: string;
  /** Most events one `send` takes (and `fits` says whether a batch is within the size limit). */
  readonly maxBatch: number;
  fits(events: readonly ForwardedEvent[]): boolean;
  /** `signal` cancels the send (a stopping forwarder): the events count as failed. */
  send(events: readonly ForwardedEvent[], signal?: AbortSignal): Promise<SendOutcome[]>;
}

type Prepared = { readonly entry: PublishEntry } | { readonly error: Error };

function prepare(event: ForwardedEvent, busName: string): Prepared {
  try {
    return { entry: toPublishEntry(event.detailType, event.detail, busName) };
  } catch (error) {
    return { error: error instanceof Error ? error : new Error(String(error)) };
  }
}

/** Sends the valid entries with `put` and merges its outcomes with the refusals, in order. */
async function sendPrepared(
  events: readonly ForwardedEvent[],
  busName: string,
  put: (entries: PublishEntry[]) => Promise<SendOutcome[]>,
): Promise<SendOutcome[]> {
  const prepared = events.map((event) => prepare(event, busName));
  const entries = prepared.flatMap((p) => ('entry' in p ? [p.entry] : []));
  const sent = entries.length > 0 ? await put(entries) : [];
  let next = 0;
  return prepared.map((p) =>
    'entry' in p ? (sent[next++] ?? { ok: false, error: new Error('no outcome') }) : { ok: false, error: p.error },
  );
}

function entriesOf(events: readonly ForwardedEvent[], busName: string): PublishEntry[] {
  return events.flatMap((event) => {
    const prepared = prepare(event, busName);
    return 'entry' in prepared ? [prepared.entry] : [];
  });
}

/** PutEvents to an EventBridge bus, up to 10 entries and 256 KiB per call. */
export class EventBridgeSink implements BusSink {
  readonly name = 'eventbridge';
  readonly maxBatch = MAX_ENTRIES_PER_PUT;
  readonly #publisher: EventBridgePublisher;

  constructor(publisher: EventBridgePublisher) {
    this.#publisher = publisher;
  }

  fits(events: readonly ForwardedEvent[]): boolean {
    return fitsOnePut(entriesOf(events, this.#publisher.eventBusName));
  }

  send(events: readonly ForwardedEvent[], signal?: AbortSignal): Promise<SendOutcome[]> {
    return sendPrepared(events, this.#publisher.eventBusName, (entries) => this.#publisher.putBatch(entries, signal));
  }
}

/** The in-process bus of `drainbridge run`: its rules start the embedded state machines. */
export class InProcessSink implements BusSink {
  readonly name = 'in-process';
  readonly maxBatch = MAX_ENTRIES_PER_PUT;
  readonly #bus: InProcessBus;

  constructor(bus: InProcessBus) {
    this.#bus = bus;
  }

  fits(events: readonly ForwardedEvent[]): boolean {
    return fitsOnePut(entriesOf(events, this.#bus.busName));
  }

  send(events: readonly ForwardedEvent[]): Promise<SendOutcome[]> {
    return sendPrepared(events, this.#bus.busName, async (entries) => {
      const output = await this.#bus.putEvents(entries);
      return output.Entries.map((result): SendOutcome => {
        if (!result.ErrorCode) return { ok: true };
        const message = `in-process bus refused an entry: ${result.ErrorCode}: ${result.ErrorMessage ?? ''}`;
        return {
          ok: false,
          error: TRANSIENT_ENTRY_CODES.has(result.ErrorCode)
            ? new TransientError(message)
            : new DrainbridgeError(message),
        };
      });
    });
  }
}
