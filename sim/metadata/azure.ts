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
  /**
   * Scheduled Events is enabled by the first request for the document, and Microsoft documents that
   * this first answer can take up to two minutes. With this set, document GETs are answered no sooner
   * than `enablingMs` after the first one arrived (0, the default: at once, as on a VM that already
   * asked).
   */
  readonly enablingMs?: number;
  readonly port?: number;
}

const json = (status: number, body: unknown): FakeReply => ({ status, body: JSON.stringify(body) });

/** Resolves at `time` (epoch ms), or at once when the server stops. */
function waitUntil(time: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, Math.max(0, time - Date.now()));
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

export class FakeAzureMetadata {
  readonly server: FakeHttpServer;
  /** Approvals received, in order: one entry per EventId of each POST. */
  readonly startRequests: { eventId: string; at: Date }[] = [];
  vmName: string;
  onApproval: 'record' | 'start';
  readonly #enablingMs: number;
  /** Document GETs that arrived while the service was being enabled (the first one included). */
  requestsWhileEnabling = 0;
  /** When the service is enabled (set by the first document GET when `enablingMs` is given). */
  #enabledAt: number | undefined;
  #incarnation = 1;
  #events: AzureScheduledEvent[] = [];
  /** When set, served instead of the document (malformed-document tests). */
  #raw: string | undefined;

  private constructor(server: FakeHttpServer, options: FakeAzureOptions) {
    this.server = server;
    this.vmName = options.vmName ?? 'vm-0';
    this.onApproval = options.onApproval ?? 'record';
    this.#enablingMs = options.enablingMs ?? 0;
  }

  static async start(options: FakeAzureOptions = {}): Promise<FakeAzureMetadata> {
    let fake: FakeAzureMetadata | undefined;
    const server = await FakeHttpServer.start(
      (request, signal) => (fake as FakeAzureMetadata).answer(request, signal),
      options.port,
    );
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

  /** Waits while Scheduled Events is being enabled (document GETs only), then answers. */
  private async answer(request: RecordedRequest, signal: AbortSignal): Promise<FakeReply> {
    const enabling = request.path === SCHEDULED_EVENTS_PATH && request.method === 'GET' && this.#enablingMs > 0;
    if (enabling) {
      this.#enabledAt ??= Date.now() + this.#enablingMs;
      if (Date.now() < this.#enabledAt) this.requestsWhileEnabling += 1;
      await waitUntil(this.#enabledAt, signal);
    }
    return this.handle(request);
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
