/**
 * A fake GCE metadata server for maintenance notices: `Metadata-Flavor: Google` required on requests
 * (403 without it) and sent on answers, an `ETag` that changes with the value — by default a hash of the
 * value alone, as the real server's appears to be (so the same value again has the same ETag again);
 * `etag: 'version'` makes it a hash of the change count instead — `wait_for_change=true`
 * hanging until the value changes (at once when `last_etag` is given and differs; at `timeout_sec` with
 * the value unchanged), and `upcoming-maintenance?alt=json` (404 where the VM has none). `preempted`
 * (Spot and preemptible VMs: `FALSE`, then `TRUE` from the preemption notice — "Create and use preemptible
 * VMs", https://cloud.google.com/compute/docs/instances/create-use-preemptible) is served the same way
 * as maintenance-event, with its own value and ETag.
 */
import { createHash } from 'node:crypto';
import { FakeHttpServer, type FakeReply, type RecordedRequest } from './http.ts';

export const MAINTENANCE_EVENT_PATH = '/computeMetadata/v1/instance/maintenance-event';
export const UPCOMING_PATH = '/computeMetadata/v1/instance/upcoming-maintenance';
export const PREEMPTED_PATH = '/computeMetadata/v1/instance/preempted';

/** The longest a hanging request waits without `timeout_sec`. */
const DEFAULT_WAIT_SECONDS = 300;

export interface FakeGceOptions {
  readonly port?: number;
  /** What the ETag hashes: the value (default: a repeat of a value repeats its ETag) or every change. */
  readonly etag?: 'value' | 'version';
}

export class FakeGceMetadata {
  readonly server: FakeHttpServer;
  #value = 'NONE';
  #version = 0;
  #preempted = 'FALSE';
  /** A document, `undefined` for 404, or raw text. */
  #upcoming: { kind: 'json'; value: unknown } | { kind: 'raw'; text: string } | undefined = {
    kind: 'json',
    value: {},
  };
  #waiters = new Set<() => void>();
  readonly #etagOf: 'value' | 'version';

  private constructor(server: FakeHttpServer, etagOf: 'value' | 'version') {
    this.server = server;
    this.#etagOf = etagOf;
  }

  static async start(options: FakeGceOptions = {}): Promise<FakeGceMetadata> {
    let fake: FakeGceMetadata | undefined;
    const server = await FakeHttpServer.start(
      (request, signal) => (fake as FakeGceMetadata).handle(request, signal),
      options.port,
    );
    fake = new FakeGceMetadata(server, options.etag ?? 'value');
    return fake;
  }

  get url(): string {
    return this.server.url;
  }

  get maintenanceEvent(): string {
    return this.#value;
  }

  /** The current ETag: a hash of the value (default) or of the change count and value. */
  get etag(): string {
    const hashed = this.#etagOf === 'value' ? this.#value : `${this.#version}:${this.#value}`;
    return createHash('sha256').update(hashed).digest('hex').slice(0, 16);
  }

  /** Requests waiting for a change right now. */
  get waiting(): number {
    return this.#waiters.size;
  }

  /** Sets the maintenance-event value (any text, to test malformed values) and wakes waiting requests. */
  setMaintenanceEvent(value: string): void {
    if (value === this.#value) return;
    this.#value = value;
    this.#version += 1;
    for (const wake of [...this.#waiters]) wake();
  }

  /** Sets the preempted value (`TRUE` at the preemption notice; any text, to test malformed values) and wakes waiting requests. */
  setPreempted(value: string): void {
    if (value === this.#preempted) return;
    this.#preempted = value;
    for (const wake of [...this.#waiters]) wake();
  }

  /** The preempted value's ETag: a hash of the value, as maintenance-event's by default. */
  get preemptedEtag(): string {
    return createHash('sha256').update(`preempted:${this.#preempted}`).digest('hex').slice(0, 16);
  }

  /** The upcoming-maintenance document (`{}` for nothing scheduled); `undefined`: 404. */
  setUpcomingMaintenance(document: unknown): void {
    this.#upcoming = document === undefined ? undefined : { kind: 'json', value: structuredClone(document) };
  }

  serveRawUpcoming(text: string): void {
    this.#upcoming = { kind: 'raw', text };
  }

  private reply(status: number, body: string, etag = this.etag): FakeReply {
    return { status, headers: { 'Metadata-Flavor': 'Google', ETag: etag, 'Content-Type': 'text/plain' }, body };
  }

  private async handle(request: RecordedRequest, stopping: AbortSignal): Promise<FakeReply> {
    if (request.headers['metadata-flavor'] !== 'Google') {
      return { status: 403, body: 'Missing Metadata-Flavor:Google header.' };
    }
    if (request.path === UPCOMING_PATH) {
      if (!this.#upcoming) return this.reply(404, 'Not Found');
      return this.reply(
        200,
        this.#upcoming.kind === 'raw' ? this.#upcoming.text : JSON.stringify(this.#upcoming.value),
      );
    }
    if (request.path === PREEMPTED_PATH) {
      if (request.query.wait_for_change === 'true')
        await this.waitForChange(request, stopping, () => this.preemptedEtag);
      return this.reply(200, this.#preempted, this.preemptedEtag);
    }
    if (request.path !== MAINTENANCE_EVENT_PATH) return this.reply(404, 'Not Found');
    if (request.query.wait_for_change === 'true') await this.waitForChange(request, stopping, () => this.etag);
    return this.reply(200, this.#value);
  }

  /** Waits until the value whose ETag `etagNow` reads changes (a change of the other value does not end it). */
  private async waitForChange(request: RecordedRequest, stopping: AbortSignal, etagNow: () => string): Promise<void> {
    const started = etagNow();
    const last = request.query.last_etag;
    if (last !== undefined && last !== started) return;
    const seconds = Number(request.query.timeout_sec ?? DEFAULT_WAIT_SECONDS);
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#waiters.delete(wake);
        stopping.removeEventListener('abort', done);
        resolve();
      };
      const wake = () => {
        if (etagNow() !== started) done();
      };
      const timer = setTimeout(done, Math.max(0, seconds) * 1000);
      this.#waiters.add(wake);
      stopping.addEventListener('abort', done, { once: true });
    });
  }
}
