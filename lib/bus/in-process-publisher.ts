/**
 * The bus adapter (types.ts) embedded: validated events go onto the in-process bus, exactly as the
 * EventBridge adapter puts them on AWS (same entry, same source, same bus name); its rules start the
 * embedded state machines.
 */

import { DrainbridgeError, TransientError } from '../errors/index.ts';
import { MAX_ENTRIES_PER_PUT } from './batch.ts';
import type { DetailByType, DetailType } from './contracts/index.ts';
import { TRANSIENT_ENTRY_CODES, toPublishEntry } from './entry.ts';
import type { InProcessBus } from './in-process-bus.ts';
import { fitsOneSend, sendValid } from './send-batch.ts';
import type { BusAdapter, BusEvent, SendOutcome } from './types.ts';

/** Puts events on an `InProcessBus`; a refused entry is a `DrainbridgeError` naming its code. */
export class InProcessPublisher implements BusAdapter {
  readonly name = 'in-process';
  readonly maxBatch = MAX_ENTRIES_PER_PUT;
  readonly #bus: InProcessBus;

  constructor(bus: InProcessBus) {
    this.#bus = bus;
  }

  get busName(): string {
    return this.#bus.busName;
  }

  async publish<T extends DetailType>(detailType: T, detail: DetailByType[T]): Promise<void> {
    const entry = toPublishEntry(detailType, detail, this.#bus.busName);
    const output = await this.#bus.putEvents([entry]);
    const result = output.Entries[0];
    if (output.FailedEntryCount > 0 || result?.ErrorCode) {
      throw new DrainbridgeError(
        `in-process bus refused "${detailType}": ${result?.ErrorCode ?? 'Unknown'}: ${result?.ErrorMessage ?? ''}`,
      );
    }
  }

  fits(events: readonly BusEvent[]): boolean {
    return fitsOneSend(events, this.#bus.busName);
  }

  /** A refused entry is a `TransientError` when its code may pass (the forwarder's queue retries it). */
  send(events: readonly BusEvent[]): Promise<SendOutcome[]> {
    return sendValid(events, this.#bus.busName, async (entries) => {
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
