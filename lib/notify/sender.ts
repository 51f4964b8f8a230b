/**
 * Posts notifications to the webhook, never in the workflow's way: `send` returns at once, each POST
 * runs on its own with a timeout and is retried with exponential backoff (a 5xx, a 429, a timeout or a
 * refused connection; a 4xx other than 429 is the receiver saying no, and is not retried). A notification
 * that is not delivered is logged — without the URL — and counted in `drainbridge_notifications_total`;
 * nothing else happens. NTH posts once and logs a failure; a chat channel that is down for a minute
 * should still hear that a node failed, hence the retries.
 */
import { Counter, type Registry } from 'prom-client';
import type { Logger } from '../log/logger.ts';
import { registerSecret } from '../log/redact.ts';
import type { Notification } from './message.ts';
import { renderTemplate, type WebhookTemplate } from './template.ts';

export interface SenderOptions {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly template: WebhookTemplate;
  readonly logger: Logger;
  readonly registry?: Registry;
  /** Attempts per notification, the first included. */
  readonly attempts?: number;
  /** The first retry's wait; each next one doubles it. */
  readonly backoffMs?: number;
  readonly timeoutMs?: number;
}

const DEFAULTS = { attempts: 5, backoffMs: 1000, timeoutMs: 5000 };
/** Parts of a URL shorter than this are not registered as secrets (they would cut common words out of logs). */
const MIN_PART = 8;

/** Why one attempt failed, and whether another may succeed. */
interface AttemptFailure {
  readonly why: string;
  readonly retry: boolean;
}

/** The URL, and the parts of it that may carry a token, are cut out of every log line. */
function registerUrl(url: string, headers: Readonly<Record<string, string>>): void {
  registerSecret(url);
  for (const value of Object.values(headers)) registerSecret(value);
  try {
    const parsed = new URL(url);
    const tail = `${parsed.pathname}${parsed.search}`;
    if (tail.length >= MIN_PART) registerSecret(tail);
    if (parsed.password) registerSecret(parsed.password);
    if (parsed.search.length >= MIN_PART) registerSecret(parsed.search);
  } catch {
    // Not parsable: the whole URL is registered already.
  }
}

export class WebhookSender {
  readonly #options: SenderOptions & typeof DEFAULTS;
  readonly #pending = new Set<Promise<void>>();
  readonly #outcomes: Counter<'event' | 'outcome'>;

  constructor(options: SenderOptions) {
    this.#options = { ...DEFAULTS, ...options };
    registerUrl(options.url, options.headers);
    this.#outcomes = new Counter({
      name: 'drainbridge_notifications_total',
      help: 'Webhook notifications by event and outcome (sent, failed: not delivered after every retry)',
      labelNames: ['event', 'outcome'],
      registers: options.registry ? [options.registry] : [],
    });
  }

  /** Queues one notification; returns at once. */
  send(notification: Notification): void {
    const delivery = this.#deliver(notification).finally(() => this.#pending.delete(delivery));
    this.#pending.add(delivery);
  }

  /** Resolves when every queued notification is delivered or given up (shutdown, tests). */
  async idle(): Promise<void> {
    while (this.#pending.size > 0) await Promise.allSettled([...this.#pending]);
  }

  async #deliver(notification: Notification): Promise<void> {
    const body = renderTemplate(this.#options.template, notification);
    let failure: AttemptFailure = { why: 'not tried', retry: false };
    for (let attempt = 1; attempt <= this.#options.attempts; attempt++) {
      if (attempt > 1) await sleep(this.#options.backoffMs * 2 ** (attempt - 2));
      failure = (await this.#attempt(body)) ?? { why: '', retry: false };
      if (failure.why === '') {
        this.#outcomes.inc({ event: notification.event, outcome: 'sent' });
        this.#options.logger.debug('notification sent', {
          event: notification.event,
          node: notification.node,
          attempt,
        });
        return;
      }
      if (!failure.retry) break;
    }
    this.#outcomes.inc({ event: notification.event, outcome: 'failed' });
    this.#options.logger.warn('notification not delivered', {
      event: notification.event,
      node: notification.node,
      why: failure.why,
    });
  }

  /** One POST; undefined when the receiver took it. */
  async #attempt(body: string): Promise<AttemptFailure | undefined> {
    try {
      const response = await fetch(this.#options.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...this.#options.headers },
        body,
        signal: AbortSignal.timeout(this.#options.timeoutMs),
      });
      await response.arrayBuffer().catch(() => undefined);
      if (response.ok) return undefined;
      const retry = response.status >= 500 || response.status === 429 || response.status === 408;
      return { why: `the receiver answered HTTP ${response.status}`, retry };
    } catch (error) {
      // The error's cause names the host and port at most; the logger cuts registered secrets anyway.
      const cause = (error as { cause?: { code?: string } }).cause?.code;
      const name = error instanceof Error ? error.name : 'Error';
      return { why: cause ? `${name} (${cause})` : name, retry: true };
    }
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
