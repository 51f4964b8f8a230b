/**
 * PutEvents' request limits, so a publisher can batch: at most 10 entries per call, and at most
 * 256 KiB for all entries together, an entry counting its Source, DetailType, Detail, each Resource and
 * 14 bytes for a Time (the EventBridge user guide's "Calculating PutEvents event entry size"). Pure.
 */
import type { PublishEntry } from './entry.ts';

export const MAX_ENTRIES_PER_PUT = 10;
export const MAX_PUT_BYTES = 256 * 1024;

/** The size EventBridge counts for one entry. */
export function entrySize(entry: PublishEntry & { Resources?: readonly string[]; Time?: unknown }): number {
  let size = Buffer.byteLength(entry.Source) + Buffer.byteLength(entry.DetailType) + Buffer.byteLength(entry.Detail);
  for (const resource of entry.Resources ?? []) size += Buffer.byteLength(resource);
  if (entry.Time !== undefined) size += 14;
  return size;
}

/** Whether these entries fit one PutEvents call. */
export function fitsOnePut(entries: readonly PublishEntry[]): boolean {
  if (entries.length > MAX_ENTRIES_PER_PUT) return false;
  return entries.reduce((sum, entry) => sum + entrySize(entry), 0) <= MAX_PUT_BYTES;
}

/** Splits entries, in order, into the fewest consecutive batches that each fit one call. */
export function chunkEntries<T extends PublishEntry>(entries: readonly T[]): T[][] {
  const batches: T[][] = [];
  let current: T[] = [];
  for (const entry of entries) {
    if (current.length > 0 && !fitsOnePut([...current, entry])) {
      batches.push(current);
      current = [];
    }
    current.push(entry);
  }
  if (current.length > 0) batches.push(current);
  return batches;
}
