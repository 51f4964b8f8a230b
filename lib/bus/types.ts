/**
 * The bus as the rest of drainbridge sees it: publish validated outcome events. On AWS an
 * EventBridge PutEvents call; embedded, the in-process bus (which also starts state machines from
 * its rules). Implementations live beside this file.
 */
import type { DetailByType, DetailType } from './contracts/contracts.ts';

export interface EventPublisher {
  /** Validates `detail` against its contract and puts it on the bus. Resolves when the bus accepted it. */
  publish<T extends DetailType>(detailType: T, detail: DetailByType[T]): Promise<void>;
}
