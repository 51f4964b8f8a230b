/**
 * A fake Azure instance metadata service for Scheduled Events, behaving as documented: the document at
 * `GET /metadata/scheduledevents?api-version=…`, `DocumentIncarnation` raised whenever the events
 * change, `POST` with `{"StartRequests":[{"EventId":…}]}` to approve (recorded here), `Metadata: true`
 * required (400 without it), and the VM's name at `/metadata/instance/compute/name?format=text`.
 * A test makes a notice appear, change, be approved and disappear through the methods below.
 */
import { FakeHttpServer, type FakeReply, type RecordedRequest } from './http.ts';

export interface AzureScheduledEvent {
  EventId: string;
  EventType: string;
  ResourceType: string;
  Resources: string[];
  EventStatus: string;
  NotBefore: string;
  Description?: string;
  EventSource?: string;
  DurationInSeconds?: number;
}

/** The api-versions IMDS documents for Scheduled Events. */
export const AZURE_API_VERSIONS = ['2017-08-01', '2017-11-01', '2019-01-01', '2019-04-01', '2019-08-01', '2020-07-01'];
export const SCHEDULED_EVENTS_PATH = '/metadata/scheduledevents';
export const COMPUTE_NAME_PATH = '/metadata/instance/compute/name';

export interface FakeAzureOptions {
  /** The VM's name as IMDS reports it (`compute/name`). */
  readonly vmName?: string;
  /** What an approval does: `record` it only (default), or also `start` the event as Azure would. */
  readonly onApproval?: 'record' | 'start';
  readonly port?: number;
}

const json = (status: number, body: unknown): FakeReply => ({ status, body: JSON.stringify(body) });

export class FakeAzureMetadata {
  readonly server: FakeHttpServer;
  /** Approvals received, in order: one entry per EventId of each POST. */
  readonly startRequests: { eventId: string; at: Date }[] = [];
  vmName: string;
  onApproval: 'record' | 'start';
  #incarnation = 1;
  #events: AzureScheduledEvent[] = [];
  /** When set, served instead of the document (malformed-document tests). */
  #raw: string | undefined;

  private constructor(server: FakeHttpServer, options: FakeAzureOptions) {
    this.server = server;
    this.vmName = options.vmName ?? 'vm-0';
    this.onApproval = options.onApproval ?? 'record';
  }

  static async start(options: FakeAzureOptions = {}): Promise<FakeAzureMetadata> {
    let fake: FakeAzureMetadata | undefined;
    const server = await FakeHttpServer.start((request) => (fake as FakeAzureMetadata).handle(request), options.port);
    fake = new FakeAzureMetadata(server, options);
    return fake;
  }

  get url(): string {
    return this.server.url;
  }

  get incarnation(): number {
    return this.#incarnation;
  }

  /** The document as served now. */
  document(): { DocumentIncarnation: number; Events: AzureScheduledEvent[] } {
    return { DocumentIncarnation: this.#incarnation, Events: structuredClone(this.#events) };
  }

  /** Replaces the events; the incarnation goes up when they changed. */
  setEvents(events: readonly AzureScheduledEvent[]): void {
    if (JSON.stringify(events) === JSON.stringify(this.#events)) return;
    this.#events = structuredClone([...events]);
    this.#incarnation += 1;
  }

  /** Serves a whole document as given (a fixture): its incarnation and its events. */
  setDocument(document: { DocumentIncarnation: number; Events: readonly AzureScheduledEvent[] }): void {
    this.#incarnation = document.DocumentIncarnation;
    this.#events = structuredClone([...document.Events]);
  }

  /**
   * Replaces the events without raising the incarnation — what Azure never does; tests use it to show
   * that an agent reading the same incarnation does not look at the events again.
   */
  setEventsKeepingIncarnation(events: readonly AzureScheduledEvent[]): void {
    this.#events = structuredClone([...events]);
  }

  /** Adds or replaces one event (by EventId). */
  putEvent(event: AzureScheduledEvent): void {
    const others = this.#events.filter((e) => e.EventId.toLowerCase() !== event.EventId.toLowerCase());
    this.setEvents([...others, event]);
  }

  /** Removes an event: what Azure does when it is over or cancelled. */
  removeEvent(eventId: string): void {
    this.setEvents(this.#events.filter((e) => e.EventId.toLowerCase() !== eventId.toLowerCase()));
  }

  /** Serves `text` instead of the document (undefined: the document again). */
  serveRaw(text: string | undefined): void {
    this.#raw = text;
  }

  approved(eventId: string): boolean {
    return this.startRequests.some((r) => r.eventId.toLowerCase() === eventId.toLowerCase());
  }

  private handle(request: RecordedRequest): FakeReply {
    if (request.headers.metadata !== 'true') {
      return json(400, { error: 'Bad request. Required metadata header not specified' });
    }
    const version = request.query['api-version'];
    if (!version || !AZURE_API_VERSIONS.includes(version)) {
      if (request.path !== COMPUTE_NAME_PATH) {
        return json(400, { error: 'Bad request. api-version is invalid or was not specified in the request.' });
      }
    }
    if (request.path === COMPUTE_NAME_PATH && request.method === 'GET') {
      return request.query.format === 'text' ? { status: 200, body: this.vmName } : json(200, this.vmName);
    }
    if (request.path !== SCHEDULED_EVENTS_PATH) return json(404, { error: 'Not found' });
    if (request.method === 'GET')
      return this.#raw !== undefined ? { status: 200, body: this.#raw } : json(200, this.document());
    if (request.method === 'POST') return this.approve(request.body);
    return json(405, { error: 'Method not allowed' });
  }

  private approve(body: string): FakeReply {
    let ids: string[];
    try {
      const parsed = JSON.parse(body) as { StartRequests?: { EventId?: unknown }[] };
      if (!Array.isArray(parsed.StartRequests) || parsed.StartRequests.length === 0)
        throw new Error('no StartRequests');
      ids = parsed.StartRequests.map((r) => {
        if (typeof r?.EventId !== 'string') throw new Error('EventId missing');
        return r.EventId;
      });
    } catch {
      return json(400, { error: 'Bad request. The request payload is malformed.' });
    }
    const known = (id: string) => this.#events.some((e) => e.EventId.toLowerCase() === id.toLowerCase());
    if (!ids.every(known)) return json(400, { error: 'Bad request. Unknown EventId.' });
    for (const eventId of ids) {
      this.startRequests.push({ eventId, at: new Date() });
      if (this.onApproval === 'start') this.#startEvent(eventId);
    }
    return { status: 200 };
  }

  #startEvent(eventId: string): void {
    this.setEvents(
      this.#events.map((e) =>
        e.EventId.toLowerCase() === eventId.toLowerCase() ? { ...e, EventStatus: 'Started', NotBefore: '' } : e,
      ),
    );
  }
}
