/** The bus: one adapter contract for publishing (EventBridge, in-process, printing), event-pattern matching, target input, schedules. */

export { chunkEntries, entrySize, fitsOnePut, MAX_ENTRIES_PER_PUT, MAX_PUT_BYTES } from './batch.ts';
export * from './event-pattern.ts';
export {
  EVENTBRIDGE_CLIENT_DEFAULTS,
  EventBridgePublisher,
  type EventBridgePublisherOptions,
} from './eventbridge-publisher.ts';
export * from './in-process-bus.ts';
export { InProcessPublisher } from './in-process-publisher.ts';
export { compileTargetInput, type DeliveryContext, type TargetInputConfig } from './input.ts';
export { type BusClock, SYSTEM_CLOCK } from './scheduler.ts';
export type { BusAdapter, BusEvent, EventPublisher, SendOutcome } from './types.ts';
