/**
 * `EventPublisher` embedded: validated outcome events go onto the in-process bus, exactly as the
 * EventBridge publisher puts them on AWS (same entry, same source, same bus name).
 */

import { DrainbridgeError } from '../errors/index.ts';
import type { DetailByType, DetailType } from './contracts/index.ts';
import { toPublishEntry } from './entry.ts';
import type { InProcessBus } from './in-process-bus.ts';
import type { EventPublisher } from './types.ts';

/** Publishes outcome events onto an `InProcessBus`; a refused entry is a `DrainbridgeError` naming its code. */
export class InProcessPublisher implements EventPublisher {
  readonly #bus: InProcessBus;

  constructor(bus: InProcessBus) {
    this.#bus = bus;
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
}
