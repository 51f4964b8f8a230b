/**
 * `EventPublisher` where there is no bus: a Lambda handler run outside AWS and outside the embedded
 * runtime (`serverless invoke local` in embedded mode). The entry is validated and built exactly as
 * PutEvents would get it, then printed as one JSON line instead of sent, so an outcome step can be tried
 * without an AWS account and what it would publish is seen.
 */
import type { DetailByType, DetailType } from './contracts/index.ts';
import { toPublishEntry } from './entry.ts';
import type { EventPublisher } from './types.ts';

export class PrintingPublisher implements EventPublisher {
  readonly #busName: string;
  readonly #write: (line: string) => void;

  constructor(busName: string, write: (line: string) => void = (line) => void process.stdout.write(`${line}\n`)) {
    this.#busName = busName;
    this.#write = write;
  }

  async publish<T extends DetailType>(detailType: T, detail: DetailByType[T]): Promise<void> {
    const entry = toPublishEntry(detailType, detail, this.#busName);
    this.#write(JSON.stringify({ notSent: 'no event bus in this process (embedded mode)', putEventsEntry: entry }));
  }
}
