/**
 * The batch half of every bus adapter (types.ts): validate each event into its PutEvents entry, refuse
 * the invalid ones alone, send the rest in one call, and merge the outcomes back in order. Pure but for
 * the `put` it is given.
 */
import { fitsOnePut } from './batch.ts';
import { type PublishEntry, toPublishEntry } from './entry.ts';
import type { BusEvent, SendOutcome } from './types.ts';

type Prepared = { readonly entry: PublishEntry } | { readonly error: Error };

function prepare(event: BusEvent, busName: string): Prepared {
  try {
    return { entry: toPublishEntry(event.detailType, event.detail, busName) };
  } catch (error) {
    return { error: error instanceof Error ? error : new Error(String(error)) };
  }
}

/** Whether the valid ones among `events` fit one PutEvents call. */
export function fitsOneSend(events: readonly BusEvent[], busName: string): boolean {
  return fitsOnePut(
    events.flatMap((event) => {
      const prepared = prepare(event, busName);
      return 'entry' in prepared ? [prepared.entry] : [];
    }),
  );
}

/** Sends the valid entries with `put` and merges its outcomes with the refusals, in order. */
export async function sendValid(
  events: readonly BusEvent[],
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
