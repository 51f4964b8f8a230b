/**
 * A fake Alibaba Cloud ECS instance metadata service: `GET /latest/maintenance/active-system-events`, the
 * instance's active system events as a JSON list of the fields ECS documents for a system event (`eventId`,
 * `eventType`, `eventStatus`, `notBefore`, `publishTime`, `instanceId`; lib/sources/clouds/alibaba/README.md
 * names the pages). The documented cases: an event is published (Scheduled), rescheduled (same `eventId`, a
 * new `notBefore`), changes status (Executing, Executed, Avoided, Canceled, …), leaves the list when it is
 * no longer active; no active events is `[]`, or a 404 where the item is not served (`gone()`).
 */
import { FakeHttpServer, type FakeReply, type RecordedRequest } from './http.ts';

export const ACTIVE_SYSTEM_EVENTS_PATH = '/latest/maintenance/active-system-events';

export interface EcsSystemEvent {
  eventId: string;
  eventType: string;
  eventStatus: string;
  notBefore: string;
  publishTime?: string;
  instanceId?: string;
}

export interface FakeEcsOptions {
  readonly instanceId?: string;
  readonly port?: number;
}

export class FakeEcsMetadata {
  readonly server: FakeHttpServer;
  readonly instanceId: string;
  #events: EcsSystemEvent[] = [];
  /** 404 for the item instead of a list (the item not served: no active events). */
  #gone = false;
  /** Text served instead of the list (malformed answers). */
  #raw: string | undefined;

  private constructor(server: FakeHttpServer, options: FakeEcsOptions) {
    this.server = server;
    this.instanceId = options.instanceId ?? 'i-bp1ecr0000005go2go';
  }

  static async start(options: FakeEcsOptions = {}): Promise<FakeEcsMetadata> {
    let fake: FakeEcsMetadata | undefined;
    const server = await FakeHttpServer.start((request) => (fake as FakeEcsMetadata).handle(request), options.port);
    fake = new FakeEcsMetadata(server, options);
    return fake;
  }

  get url(): string {
    return this.server.url;
  }

  /** Publishes an event (Scheduled unless said), for this instance. */
  putEvent(event: Omit<EcsSystemEvent, 'eventStatus' | 'instanceId'> & Partial<EcsSystemEvent>): void {
    const full: EcsSystemEvent = { eventStatus: 'Scheduled', instanceId: this.instanceId, ...event };
    this.#events = [...this.#events.filter((e) => e.eventId !== full.eventId), full];
    this.#gone = false;
  }

  /** The owner (or ECS) moves the event: same id, a new start. */
  reschedule(eventId: string, notBefore: string): void {
    this.#update(eventId, { notBefore });
  }

  /** The event's lifecycle status changes (Executing, Executed, Avoided, Canceled, Failed, Inquiring). */
  setStatus(eventId: string, eventStatus: string): void {
    this.#update(eventId, { eventStatus });
  }

  /** The event is no longer active: it leaves the list (`[]` when it was the last). */
  removeEvent(eventId: string): void {
    this.#events = this.#events.filter((e) => e.eventId !== eventId);
  }

  /** No item at all: the path answers 404. */
  gone(): void {
    this.#events = [];
    this.#gone = true;
  }

  serveRaw(text: string | undefined): void {
    this.#raw = text;
  }

  get events(): readonly EcsSystemEvent[] {
    return this.#events;
  }

  #update(eventId: string, change: Partial<EcsSystemEvent>): void {
    const found = this.#events.some((e) => e.eventId === eventId);
    if (!found) throw new Error(`no event ${eventId}`);
    this.#events = this.#events.map((e) => (e.eventId === eventId ? { ...e, ...change } : e));
  }

  private handle(request: RecordedRequest): FakeReply {
    if (request.method !== 'GET' || request.path !== ACTIVE_SYSTEM_EVENTS_PATH)
      return { status: 404, body: 'Not Found' };
    if (this.#raw !== undefined) return { status: 200, body: this.#raw };
    if (this.#gone) return { status: 404, body: 'Not Found' };
    return { status: 200, body: JSON.stringify(this.#events) };
  }
}
