/**
 * The node agent's GCE sources: `maintenance-event` read with hanging requests (each returns when the
 * value changes, `last_etag` carrying the version last seen), and `upcoming-maintenance` polled.
 *
 * The maintenance-event value carries no id, and its ETag need not either: GCE documents the ETag only
 * as changing when the value changes, so the next migration — the same value again, days later — may
 * well carry the same ETag. Each occurrence therefore gets a number after the ETag
 * (`maintenance-event-<ETag>-<n>`): the request still active for that ETag keeps its number (also after
 * an agent restart: it is taken over from the ledger or its waiting Evacuation record), and a new
 * occurrence takes the lowest number the cluster does not remember for this node (holds, tombstones,
 * Evacuation records) nor this agent used — so it is never dropped as the duplicate of an earlier one,
 * and a restart while its request is on its way to the bus finds the same number again.
 */
import { readNodeHistory } from '../history.ts';
import type { LoopContext, SourceLoop } from '../loop.ts';
import { type Notice, type ParsedDocument, parseJsonText } from '../notice.ts';
import type { NoticeTracker } from '../tracker.ts';
import { GceMetadataClient, type MaintenanceEventRead } from './client.ts';
import { parseGceMaintenanceEvent, parseGcePreempted, parseGceUpcomingMaintenance } from './parse.ts';

/** Numbers looked through for the active request (new ones take the lowest free number, so they stay small). */
const MAX_OCCURRENCES = 1000;

/** A GCE value read with hanging requests: how it is fetched with a wait, and how its answer parses. */
interface HangingValue {
  readonly source: 'gcp-maintenance-event' | 'gcp-preempted';
  fetch(wait: HangingWait, signal: AbortSignal): Promise<MaintenanceEventRead>;
  parse(read: MaintenanceEventRead): ParsedDocument;
}

type HangingWait = { lastEtag?: string; waitSeconds?: number };

/**
 * The one hanging-read loop of GCE's values (maintenance-event, preempted): the first read answers at
 * once (the current state), the next ones wait for a change from the ETag last seen.
 */
class HangingSource implements SourceLoop {
  readonly source: HangingValue['source'];
  /** The read itself waits for a change. */
  readonly intervalMs = 0;
  readonly #value: HangingValue;
  readonly #waitSeconds: number;
  #lastEtag: string | undefined;

  constructor(value: HangingValue, waitSeconds: number) {
    this.source = value.source;
    this.#value = value;
    this.#waitSeconds = waitSeconds;
  }

  async read(signal: AbortSignal): Promise<ParsedDocument> {
    const wait = this.#lastEtag ? { lastEtag: this.#lastEtag, waitSeconds: this.#waitSeconds } : {};
    const answer = await this.#value.fetch(wait, signal);
    const document = this.#value.parse(answer);
    this.#lastEtag = answer.etag;
    return document;
  }

  /** The next read answers at once instead of waiting for the next change. */
  protected readAgainAtOnce(): void {
    this.#lastEtag = undefined;
  }

  async mine(notices: readonly Notice[], _signal: AbortSignal, _tracker: NoticeTracker): Promise<Notice[]> {
    return [...notices];
  }
}

class MaintenanceEventSource extends HangingSource {
  readonly #context: LoopContext;
  /** Event ids this run gave to occurrences (the cluster may not show a request published a moment ago). */
  readonly #used = new Set<string>();

  constructor(client: GceMetadataClient, waitSeconds: number, context: LoopContext) {
    super(
      {
        source: 'gcp-maintenance-event',
        fetch: (wait, signal) => client.maintenanceEvent(wait, signal),
        parse: ({ value, etag }) => parseGceMaintenanceEvent(value, etag),
      },
      waitSeconds,
    );
    this.#context = context;
  }

  override async mine(notices: readonly Notice[], _signal: AbortSignal, tracker: NoticeTracker): Promise<Notice[]> {
    try {
      const mine: Notice[] = [];
      for (const notice of notices) mine.push(await this.#occurrence(notice, tracker));
      return mine;
    } catch (error) {
      // Read the value again at once (not after the next change) once the cluster answers.
      this.readAgainAtOnce();
      throw error;
    }
  }

  /** The notice with its occurrence number: the active request's, or the lowest one nobody remembers. */
  async #occurrence(notice: Notice, tracker: NoticeTracker): Promise<Notice> {
    const numbered = (n: number): Notice => ({ ...notice, eventId: `${notice.eventId}-${n}` });
    const active = new Set(tracker.active());
    for (let n = 1; active.size > 0 && n <= MAX_OCCURRENCES; n++) {
      if (active.has(tracker.requestIdOf(numbered(n)))) return numbered(n);
    }
    const history = await readNodeHistory(this.#context.kube, this.#context.config.nodeName);
    const taken = new Set([...history.known, ...active, ...this.#used]);
    let n = 1;
    while (taken.has(tracker.requestIdOf(numbered(n)))) n++;
    const occurrence = numbered(n);
    this.#used.add(tracker.requestIdOf(occurrence));
    return occurrence;
  }
}

class UpcomingMaintenanceSource implements SourceLoop {
  readonly source = 'gcp-upcoming-maintenance';
  readonly intervalMs: number;
  readonly #client: GceMetadataClient;

  constructor(client: GceMetadataClient, intervalMs: number) {
    this.#client = client;
    this.intervalMs = intervalMs;
  }

  async read(signal: AbortSignal): Promise<ParsedDocument> {
    const text = await this.#client.upcomingMaintenance(signal);
    return parseGceUpcomingMaintenance(text === undefined ? undefined : parseJsonText(this.source, text));
  }

  async mine(notices: readonly Notice[]): Promise<Notice[]> {
    return [...notices];
  }
}

/**
 * `preempted` (opt-in): read hanging as maintenance-event is. The value carries no id and no time, so the
 * notice counts from when this agent first read `TRUE` (kept while it stays `TRUE`): its id, and its
 * deadline 30 s later — the request starts at once and the drain cuts grace periods to fit
 * (lib/branches/pods/grace-fit.ts). Back to `FALSE` (a Spot VM started again), the request ends.
 */
function preemptedValue(client: GceMetadataClient, context: LoopContext): HangingValue {
  let noticedAt: Date | undefined;
  return {
    source: 'gcp-preempted',
    fetch: (wait, signal) => client.preempted(wait, signal),
    parse: ({ value }) => {
      noticedAt = value.trim() === 'TRUE' ? (noticedAt ?? context.now()) : undefined;
      return parseGcePreempted(value, noticedAt ?? context.now());
    },
  };
}

/** The GCE sources the configuration enables. */
export function gcpSources(context: LoopContext, client?: GceMetadataClient): SourceLoop[] {
  const { gcp, timeoutMs } = context.config;
  const shared = client ?? new GceMetadataClient({ baseUrl: gcp.baseUrl, timeoutMs });
  const loops: SourceLoop[] = [new MaintenanceEventSource(shared, gcp.waitSeconds, context)];
  if (gcp.upcoming) loops.push(new UpcomingMaintenanceSource(shared, gcp.upcomingPollSeconds * 1000));
  if (gcp.preempted) loops.push(new HangingSource(preemptedValue(shared, context), gcp.waitSeconds));
  return loops;
}
