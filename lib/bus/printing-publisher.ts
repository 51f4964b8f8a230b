/**
 * The bus adapter (types.ts) where there is no bus: a Lambda handler run outside AWS and outside the
 * embedded runtime (`serverless invoke local` in embedded mode). The entry is validated and built exactly
 * as PutEvents would get it, then printed as one JSON line instead of sent, so an outcome step can be
 * tried without an AWS account and what it would publish is seen.
 */
import { MAX_ENTRIES_PER_PUT } from './batch.ts';
import type { DetailByType, DetailType } from './contracts/index.ts';
import { type PublishEntry, toPublishEntry } from './entry.ts';
import { fitsOneSend, sendValid } from './send-batch.ts';
import type { BusAdapter, BusEvent, SendOutcome } from './types.ts';

export class PrintingPublisher implements BusAdapter {
  readonly name = 'printing';
  readonly maxBatch = MAX_ENTRIES_PER_PUT;
  readonly busName: string;
  readonly #write: (line: string) => void;

  constructor(busName: string, write: (line: string) => void = (line) => void process.stdout.write(`${line}\n`)) {
    this.busName = busName;
    this.#write = write;
  }

  async publish<T extends DetailType>(detailType: T, detail: DetailByType[T]): Promise<void> {
    this.#print(toPublishEntry(detailType, detail, this.busName));
  }

  fits(events: readonly BusEvent[]): boolean {
    return fitsOneSend(events, this.busName);
  }

  send(events: readonly BusEvent[]): Promise<SendOutcome[]> {
    return sendValid(events, this.busName, async (entries) =>
      entries.map((entry): SendOutcome => {
        this.#print(entry);
        return { ok: true };
      }),
    );
  }

  #print(entry: PublishEntry): void {
    this.#write(JSON.stringify({ notSent: 'no event bus in this process (embedded mode)', putEventsEntry: entry }));
  }
}
