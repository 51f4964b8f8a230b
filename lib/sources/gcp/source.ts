/**
 * The node agent's GCE sources: `maintenance-event` read with hanging requests (each returns when the
 * value changes, `last_etag` carrying the version last seen), and `upcoming-maintenance` polled.
 */
import type { LoopContext, SourceLoop } from '../loop.ts';
import { type Notice, type ParsedDocument, parseJsonText } from '../notice.ts';
import { GceMetadataClient } from './client.ts';
import { parseGceMaintenanceEvent, parseGceUpcomingMaintenance } from './parse.ts';

class MaintenanceEventSource implements SourceLoop {
  readonly source = 'gcp-maintenance-event';
  /** The read itself waits for a change. */
  readonly intervalMs = 0;
  readonly #client: GceMetadataClient;
  readonly #waitSeconds: number;
  #lastEtag: string | undefined;

  constructor(client: GceMetadataClient, waitSeconds: number) {
    this.#client = client;
    this.#waitSeconds = waitSeconds;
  }

  async read(signal: AbortSignal): Promise<ParsedDocument> {
    // The first read answers at once (the current state); the next ones wait for a change.
    const wait = this.#lastEtag ? { lastEtag: this.#lastEtag, waitSeconds: this.#waitSeconds } : {};
    const { value, etag } = await this.#client.maintenanceEvent(wait, signal);
    const document = parseGceMaintenanceEvent(value, etag);
    this.#lastEtag = etag;
    return document;
  }

  async mine(notices: readonly Notice[]): Promise<Notice[]> {
    return [...notices];
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

/** The GCE sources the configuration enables. */
export function gcpSources(context: LoopContext, client?: GceMetadataClient): SourceLoop[] {
  const { gcp, timeoutMs } = context.config;
  const shared = client ?? new GceMetadataClient({ baseUrl: gcp.baseUrl, timeoutMs });
  const loops: SourceLoop[] = [new MaintenanceEventSource(shared, gcp.waitSeconds)];
  if (gcp.upcoming) loops.push(new UpcomingMaintenanceSource(shared, gcp.upcomingPollSeconds * 1000));
  return loops;
}
