/**
 * From a validated outcome event to a PutEvents entry: the source comes from the contract, never
 * from the caller, so an event cannot be published under another producer's name.
 */

import { InvalidInput } from '../errors/index.ts';
import { CONTRACTS, type DetailByType, type DetailType, parseDetail } from './contracts/index.ts';

/** EventBridge's limit on one PutEvents entry (256 KiB, counted over source, detail-type, detail, resources). */
export const MAX_ENTRY_BYTES = 256 * 1024;

/** The PutEvents entry fields drainbridge sets (SDK spelling). */
export interface PublishEntry {
  readonly Source: string;
  readonly DetailType: string;
  readonly Detail: string;
  readonly EventBusName: string;
}

/** Validates `detail` against its contract and builds the entry; `InvalidInput` names any bad field. */
export function toPublishEntry<T extends DetailType>(
  detailType: T,
  detail: DetailByType[T],
  eventBusName: string,
): PublishEntry {
  const valid = parseDetail(detailType, detail, 'detail');
  const entry = {
    Source: CONTRACTS[detailType].source,
    DetailType: detailType,
    Detail: JSON.stringify(valid),
    EventBusName: eventBusName,
  };
  const size = Buffer.byteLength(entry.Source) + Buffer.byteLength(entry.DetailType) + Buffer.byteLength(entry.Detail);
  if (size > MAX_ENTRY_BYTES) {
    throw new InvalidInput(`"${detailType}" event too large`, [
      {
        path: 'detail',
        message: `is ${size} bytes with its source and detail-type; EventBridge takes at most ${MAX_ENTRY_BYTES}`,
      },
    ]);
  }
  return entry;
}

/** A PutEvents result entry (SDK spelling). */
export interface PutEventsResultEntry {
  readonly EventId?: string;
  readonly ErrorCode?: string;
  readonly ErrorMessage?: string;
}

/** Entry error codes that may pass on their own; anything else is a rejection of the event. */
export const TRANSIENT_ENTRY_CODES: ReadonlySet<string> = new Set([
  'ThrottlingException',
  'InternalException',
  'InternalFailure',
  'ServiceUnavailable',
]);
