/**
 * A fake EC2 instance metadata service with IMDSv2 required (`HttpTokens: required`): a session token
 * from `PUT /latest/api/token` with `X-aws-ec2-metadata-token-ttl-seconds` (1–21600; 400 otherwise; 403
 * when the PUT carries `X-Forwarded-For`, as IMDS refuses proxied token requests), and every GET without
 * a valid, unexpired `X-aws-ec2-metadata-token` refused with 401. Serves the scheduled events, the spot
 * `instance-action` and the rebalance recommendation (404 while there is none).
 */
import { randomBytes } from 'node:crypto';
import { formatEc2ImdsDate } from '../../lib/sources/clouds/dates.ts';
import { FakeHttpServer, type FakeReply, type RecordedRequest } from './http.ts';

export const TOKEN_PATH = '/latest/api/token';
export const SCHEDULED_PATH = '/latest/meta-data/events/maintenance/scheduled';
export const SPOT_PATH = '/latest/meta-data/spot/instance-action';
export const REBALANCE_PATH = '/latest/meta-data/events/recommendations/rebalance';
export const INSTANCE_ID_PATH = '/latest/meta-data/instance-id';

export interface Ec2ScheduledEvent {
  NotBefore: string;
  Code: string;
  Description: string;
  EventId: string;
  NotAfter?: string;
  State: string;
}

export interface FakeEc2Options {
  readonly instanceId?: string;
  readonly port?: number;
  readonly now?: () => number;
}

export class FakeEc2Metadata {
  readonly server: FakeHttpServer;
  instanceId: string;
  /** Tokens issued, and GETs refused for a missing or bad token. */
  tokensIssued = 0;
  refused = 0;
  #tokens = new Map<string, number>();
  #scheduled: Ec2ScheduledEvent[] = [];
  #spot: unknown;
  #rebalance: unknown;
  /** Per path: text served instead of the document (malformed-document tests). */
  readonly #raw = new Map<string, string>();
  readonly #now: () => number;

  private constructor(server: FakeHttpServer, options: FakeEc2Options) {
    this.server = server;
    this.instanceId = options.instanceId ?? 'i-0123456789abcdef0';
    this.#now = options.now ?? Date.now;
  }

  static async start(options: FakeEc2Options = {}): Promise<FakeEc2Metadata> {
    let fake: FakeEc2Metadata | undefined;
    const server = await FakeHttpServer.start((request) => (fake as FakeEc2Metadata).handle(request), options.port);
    fake = new FakeEc2Metadata(server, options);
    return fake;
  }

  get url(): string {
    return this.server.url;
  }

  setScheduledEvents(events: readonly Ec2ScheduledEvent[]): void {
    this.#scheduled = structuredClone([...events]);
  }

  /**
   * ModifyInstanceEventStartTime as EC2 documents it ("Reschedule a scheduled event for an EC2 instance",
   * https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/reschedule-event.html): the same EventId gets a new
   * NotBefore. Refused (thrown) as EC2 refuses it: an event that has started or starts within 5 minutes,
   * a new start less than 60 minutes from now, or one past the event's deadline (NotBeforeDeadline, which
   * the IMDS document does not show; given here when the test wants it checked). The window keeps its
   * length: NotAfter moves with NotBefore.
   */
  rescheduleEvent(eventId: string, notBefore: Date, deadline?: Date): void {
    const event = this.#scheduled.find((e) => e.EventId === eventId);
    if (!event) throw new Error(`no scheduled event ${eventId}`);
    const now = this.#now();
    const start = Date.parse(event.NotBefore);
    if (event.State !== 'active' || start - now < 5 * 60_000) {
      throw new Error(`event ${eventId} has started or starts within 5 minutes: it cannot be rescheduled`);
    }
    if (notBefore.getTime() - now < 60 * 60_000) throw new Error('the new start must be at least 60 minutes from now');
    if (deadline && notBefore.getTime() > deadline.getTime())
      throw new Error('the new start is past NotBeforeDeadline');
    const shift = notBefore.getTime() - start;
    event.NotBefore = formatEc2ImdsDate(notBefore);
    if (event.NotAfter) event.NotAfter = formatEc2ImdsDate(new Date(Date.parse(event.NotAfter) + shift));
  }

  /** `{ action, time }`, or undefined for none (404). */
  setSpotInstanceAction(action: { action: string; time: string } | undefined): void {
    this.#spot = action;
  }

  /** `{ noticeTime }`, or undefined for none (404). */
  setRebalance(recommendation: { noticeTime: string } | undefined): void {
    this.#rebalance = recommendation;
  }

  /** Serves `text` at `path` instead of its document (undefined: the document again). */
  serveRaw(path: string, text: string | undefined): void {
    if (text === undefined) this.#raw.delete(path);
    else this.#raw.set(path, text);
  }

  /** Invalidates every token issued (as when IMDS restarts): the next GET with one is refused. */
  revokeTokens(): void {
    this.#tokens.clear();
  }

  private handle(request: RecordedRequest): FakeReply {
    if (request.path === TOKEN_PATH) return this.issueToken(request);
    if (request.method !== 'GET') return { status: 405 };
    const token = request.headers['x-aws-ec2-metadata-token'];
    const expires = token ? this.#tokens.get(token) : undefined;
    if (expires === undefined || expires <= this.#now()) {
      this.refused += 1;
      return { status: 401, headers: { 'Content-Type': 'text/plain' } };
    }
    const raw = this.#raw.get(request.path);
    if (raw !== undefined) return { status: 200, body: raw };
    return this.document(request.path);
  }

  private document(path: string): FakeReply {
    const found = (value: unknown): FakeReply =>
      value === undefined ? { status: 404, body: 'Not Found' } : { status: 200, body: JSON.stringify(value) };
    if (path === SCHEDULED_PATH) return found(this.#scheduled);
    if (path === SPOT_PATH) return found(this.#spot);
    if (path === REBALANCE_PATH) return found(this.#rebalance);
    if (path === INSTANCE_ID_PATH) return { status: 200, body: this.instanceId };
    return { status: 404, body: 'Not Found' };
  }

  private issueToken(request: RecordedRequest): FakeReply {
    if (request.method !== 'PUT') return { status: 405 };
    if (request.headers['x-forwarded-for'] !== undefined) return { status: 403 };
    const ttl = Number(request.headers['x-aws-ec2-metadata-token-ttl-seconds']);
    if (!Number.isInteger(ttl) || ttl < 1 || ttl > 21_600) return { status: 400 };
    const token = randomBytes(24).toString('base64url');
    this.#tokens.set(token, this.#now() + ttl * 1000);
    this.tokensIssued += 1;
    return {
      status: 200,
      headers: { 'Content-Type': 'text/plain', 'X-aws-ec2-metadata-token-ttl-seconds': String(ttl) },
      body: token,
    };
  }
}
