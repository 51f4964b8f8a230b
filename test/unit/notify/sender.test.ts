/**
 * The webhook sender against a real HTTP receiver on loopback: the template's body arrives with the
 * headers; a receiver answering 500 is retried with growing waits while `send` never waits; one that
 * never recovers is given up, logged without the URL and counted; bad settings are refused naming the
 * variable.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { ConfigError } from '../../../lib/errors/index.ts';
import { createLogger } from '../../../lib/log/logger.ts';
import { redactString } from '../../../lib/log/redact.ts';
import { loadWebhookSettings, type Notification, WebhookSender } from '../../../lib/notify/index.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver.ts';

const BLOCKED: Notification = {
  event: 'EvacuationBlocked',
  node: 'node-2',
  requestId: 'cordon.node-2.abc',
  executionId: 'run.a.1',
  blockers: ['pod shop/web-1: PodDisruptionBudget "web" allows no disruption'],
  reason: '',
  time: '2026-11-28T10:00:00.000Z',
};

const receivers: WebhookReceiver[] = [];
after(async () => {
  for (const receiver of receivers) await receiver.close();
});

async function receiver(statuses: readonly number[] = []): Promise<WebhookReceiver> {
  const started = await startWebhookReceiver(statuses);
  receivers.push(started);
  return started;
}

describe('WebhookSender', () => {
  it('posts the Slack body with the configured headers', async () => {
    const hook = await receiver();
    const settings = loadWebhookSettings({
      DRAINBRIDGE_WEBHOOK_URL: `${hook.url}/services/T000/B000/slack-token-1`,
      DRAINBRIDGE_WEBHOOK_HEADERS: '{"X-Team":"ops"}',
    });
    assert.ok(settings);
    const sender = new WebhookSender({ ...settings, logger: createLogger('test') });
    sender.send(BLOCKED);
    await sender.idle();
    assert.equal(hook.posts.length, 1);
    assert.equal(hook.posts[0]?.path, '/services/T000/B000/slack-token-1');
    assert.equal(hook.posts[0]?.headers['x-team'], 'ops');
    assert.equal(hook.posts[0]?.headers['content-type'], 'application/json');
    assert.equal(
      hook.posts[0]?.body.text,
      'drainbridge: evacuation blocked on node-2 (request cordon.node-2.abc): pod shop/web-1: PodDisruptionBudget "web" allows no disruption',
    );
  });

  it('retries 500s with growing waits, and send() never waits for the receiver', async () => {
    const hook = await receiver([500, 500]);
    const registry = new Registry();
    const sender = new WebhookSender({
      url: `${hook.url}/hook`,
      headers: {},
      template: { name: 'json', text: '{"event":"{{event}}","node":"{{node}}","blockers":"{{blockers}}"}' },
      logger: createLogger('test'),
      registry,
      backoffMs: 200,
    });
    const before = performance.now();
    sender.send(BLOCKED);
    assert.ok(performance.now() - before < 50, 'send returns before any POST is answered');
    assert.equal(hook.posts.length, 0, 'nothing was posted synchronously');
    await sender.idle();
    assert.deepEqual(
      hook.posts.map((p) => p.status),
      [500, 500, 200],
    );
    const [first, second, third] = hook.posts.map((p) => p.at);
    assert.ok(first !== undefined && second !== undefined && third !== undefined);
    assert.ok(second - first >= 190, `first retry after the backoff (${second - first} ms)`);
    assert.ok(third - second >= 390, `second retry waits twice as long (${third - second} ms)`);
    assert.equal(hook.posts[2]?.body.node, 'node-2');
    assert.match(
      await registry.metrics(),
      /drainbridge_notifications_total\{event="EvacuationBlocked",outcome="sent"\} 1/,
    );
  });

  it('gives up on a receiver that stays down: counted as failed, and the URL is redacted', async () => {
    const hook = await receiver([503, 503, 503]);
    const registry = new Registry();
    const url = `${hook.url}/hooks/secret-token-4242?sig=abcdefgh`;
    const sender = new WebhookSender({
      url,
      headers: {},
      template: { name: 'slack', text: '{"text":"{{summary}}"}' },
      logger: createLogger('test'),
      registry,
      attempts: 3,
      backoffMs: 10,
    });
    sender.send({ ...BLOCKED, event: 'EvacuationFailed' });
    await sender.idle();
    assert.equal(hook.posts.length, 3);
    assert.match(
      await registry.metrics(),
      /drainbridge_notifications_total\{event="EvacuationFailed",outcome="failed"\} 1/,
    );
    assert.doesNotMatch(redactString(`POST ${url} failed`), /secret-token-4242/);
    assert.doesNotMatch(redactString('GET /hooks/secret-token-4242?sig=abcdefgh'), /secret-token-4242/);
  });

  it('a 4xx other than 429 is not retried', async () => {
    const hook = await receiver([404]);
    const sender = new WebhookSender({
      url: `${hook.url}/gone`,
      headers: {},
      template: { name: 'slack', text: '{"text":"{{summary}}"}' },
      logger: createLogger('test'),
      backoffMs: 10,
    });
    sender.send(BLOCKED);
    await sender.idle();
    assert.equal(hook.posts.length, 1);
  });
});

describe('loadWebhookSettings', () => {
  function problems(env: Record<string, string>): string {
    try {
      loadWebhookSettings(env);
    } catch (error) {
      assert.ok(error instanceof ConfigError);
      return error.message;
    }
    assert.fail('the settings were accepted');
  }

  it('no URL: no notifications', () => {
    assert.equal(loadWebhookSettings({}), undefined);
  });

  it('refuses bad values, naming the variable and never echoing the URL', () => {
    const message = problems({ DRAINBRIDGE_WEBHOOK_URL: 'ftp://hooks.example/secret-token-77' });
    assert.match(message, /DRAINBRIDGE_WEBHOOK_URL: must be an http\(s\) URL/);
    assert.doesNotMatch(message, /secret-token-77/);
    assert.match(
      problems({
        DRAINBRIDGE_WEBHOOK_URL: 'https://h.example/x',
        DRAINBRIDGE_WEBHOOK_TEMPLATE: '{"text":{{summary}}}',
      }),
      /DRAINBRIDGE_WEBHOOK_TEMPLATE: does not render to JSON/,
    );
    assert.match(
      problems({ DRAINBRIDGE_WEBHOOK_URL: 'https://h.example/x', DRAINBRIDGE_WEBHOOK_TEMPLATE: '{"t":"{{nodes}}"}' }),
      /DRAINBRIDGE_WEBHOOK_TEMPLATE: unknown placeholder \{\{nodes\}\}/,
    );
    assert.match(
      problems({ DRAINBRIDGE_WEBHOOK_URL: 'https://h.example/x', DRAINBRIDGE_WEBHOOK_BLOCKED_AFTER: '0' }),
      /DRAINBRIDGE_WEBHOOK_BLOCKED_AFTER: must be at least 1/,
    );
    assert.match(
      problems({ DRAINBRIDGE_WEBHOOK_URL: 'https://h.example/x', DRAINBRIDGE_WEBHOOK_HEADERS: '["a"]' }),
      /DRAINBRIDGE_WEBHOOK_HEADERS: must be a JSON object/,
    );
    assert.match(
      problems({ DRAINBRIDGE_WEBHOOK_URL_FILE: '/nonexistent/webhook-url' }),
      /DRAINBRIDGE_WEBHOOK_URL_FILE: \/nonexistent\/webhook-url could not be read \(ENOENT\)/,
    );
  });
});
