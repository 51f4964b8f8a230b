import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import type { EvacuationSucceededEvent } from '../../../lib/bus/contracts/index.ts';
import { EVENTBRIDGE_CLIENT_DEFAULTS, EventBridgePublisher } from '../../../lib/bus/eventbridge-publisher.ts';
import { DrainbridgeError, InvalidInput, TransientError } from '../../../lib/errors/index.ts';

/** What the fake EventBridge answers to one request: status and JSON body, or silence. */
type Reply = { status: number; body: unknown } | 'hang';

interface Received {
  readonly target: string | undefined;
  readonly contentType: string | undefined;
  readonly authorization: string | undefined;
  readonly body: { Entries: { Source: string; DetailType: string; Detail: string; EventBusName: string }[] };
}

/**
 * A tiny EventBridge: speaks the AWS JSON 1.1 protocol PutEvents uses (POST /, X-Amz-Target
 * AWSEvents.PutEvents), records each request and answers from a queue of replies.
 */
class FakeEventBridge {
  readonly received: Received[] = [];
  replies: Reply[] = [];
  readonly server: Server = createServer((req, res) => void this.#handle(req, res));

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    this.received.push({
      target: req.headers['x-amz-target'] as string | undefined,
      contentType: req.headers['content-type'],
      authorization: req.headers.authorization,
      body,
    });
    const reply = this.replies.shift() ?? success(body.Entries.length);
    if (reply === 'hang') return;
    res.writeHead(reply.status, { 'content-type': 'application/x-amz-json-1.1' });
    res.end(JSON.stringify(reply.body));
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }
}

const success = (count = 1): Reply => ({
  status: 200,
  body: { FailedEntryCount: 0, Entries: Array.from({ length: count }, (_, i) => ({ EventId: `event-${i}` })) },
});
const entryFailure = (ErrorCode: string, ErrorMessage: string): Reply => ({
  status: 200,
  body: { FailedEntryCount: 1, Entries: [{ ErrorCode, ErrorMessage }] },
});
const serviceError = (status: number, type: string, message: string): Reply => ({
  status,
  body: { __type: type, message },
});

const DETAIL: EvacuationSucceededEvent = {
  version: '1',
  requestId: 'req-1',
  requester: 'operator',
  target: { nodeName: 'node-1' },
  nodeName: 'node-1',
  progress: { pods: { total: 3, moved: 3, inFlight: 0, skipped: 1 } },
  durationSeconds: 42,
};

const fake = new FakeEventBridge();

function publisher(
  options: { sdkAttempts?: number; timeoutMs?: number; attempts?: number; requestTimeoutMs?: number } = {},
) {
  const client = new EventBridgeClient({
    ...EVENTBRIDGE_CLIENT_DEFAULTS,
    maxAttempts: options.sdkAttempts ?? 1,
    requestHandler: {
      ...EVENTBRIDGE_CLIENT_DEFAULTS.requestHandler,
      requestTimeout: options.requestTimeoutMs ?? 5_000,
    },
    region: 'eu-west-1',
    endpoint: fake.url,
    credentials: { accessKeyId: 'AKIDFAKE', secretAccessKey: 'fake-secret' },
  });
  return new EventBridgePublisher(client, 'drainbridge', {
    timeoutMs: options.timeoutMs ?? 5_000,
    retry: { attempts: options.attempts ?? 3, baseDelayMs: 1, maxDelayMs: 2 },
  });
}

describe('EventBridgePublisher against a local EventBridge', () => {
  before(async () => {
    fake.server.listen(0, '127.0.0.1');
    await once(fake.server, 'listening');
  });
  after(() => {
    fake.server.closeAllConnections();
    fake.server.close();
  });
  beforeEach(() => {
    fake.received.length = 0;
    fake.replies = [];
  });

  it('sends one signed PutEvents with the contract source, the configured bus and the detail', async () => {
    await publisher().publish('Evacuation Succeeded', DETAIL);
    assert.equal(fake.received.length, 1);
    const [request] = fake.received;
    assert.equal(request?.target, 'AWSEvents.PutEvents');
    assert.equal(request?.contentType, 'application/x-amz-json-1.1');
    assert.match(
      request?.authorization ?? '',
      /^AWS4-HMAC-SHA256 Credential=AKIDFAKE\/\d{8}\/eu-west-1\/events\/aws4_request/,
    );
    const [entry] = request?.body.Entries ?? [];
    assert.equal(entry?.Source, 'drainbridge.workflow');
    assert.equal(entry?.DetailType, 'Evacuation Succeeded');
    assert.equal(entry?.EventBusName, 'drainbridge');
    assert.deepEqual(JSON.parse(entry?.Detail ?? ''), DETAIL);
  });

  it('refuses an invalid detail naming the field, and sends nothing', async () => {
    const bad = { ...DETAIL, durationSeconds: -1, extra: 1 } as unknown as EvacuationSucceededEvent;
    await assert.rejects(publisher().publish('Evacuation Succeeded', bad), (error: unknown) => {
      assert.ok(error instanceof InvalidInput);
      assert.deepEqual(error.problems.map((p) => p.path).sort(), ['detail.durationSeconds', 'detail.extra']);
      assert.match(error.message, /detail\.durationSeconds/);
      assert.match(error.message, /detail\.extra: unknown field/);
      return true;
    });
    assert.equal(fake.received.length, 0);
  });

  it('retries a throttled entry (a partial failure the SDK does not retry) and succeeds', async () => {
    fake.replies = [entryFailure('ThrottlingException', 'Rate exceeded'), success()];
    await publisher().publish('Evacuation Succeeded', DETAIL);
    assert.equal(fake.received.length, 2);
  });

  it('throws a TransientError naming the ErrorCode and ErrorMessage when internal failures persist', async () => {
    fake.replies = Array.from({ length: 3 }, () => entryFailure('InternalFailure', 'try again'));
    await assert.rejects(publisher({ attempts: 3 }).publish('Evacuation Succeeded', DETAIL), (error: unknown) => {
      assert.ok(error instanceof TransientError);
      assert.match(error.message, /InternalFailure: try again/);
      assert.match(error.message, /"Evacuation Succeeded" on bus "drainbridge"/);
      return true;
    });
    assert.equal(fake.received.length, 3);
  });

  it('does not retry an entry EventBridge rejects for good', async () => {
    fake.replies = [entryFailure('MalformedDetail', 'Detail is malformed.')];
    await assert.rejects(publisher().publish('Evacuation Succeeded', DETAIL), (error: unknown) => {
      assert.ok(error instanceof DrainbridgeError);
      assert.ok(!(error instanceof TransientError));
      assert.match(error.message, /MalformedDetail: Detail is malformed\./);
      return true;
    });
    assert.equal(fake.received.length, 1);
  });

  it('lets the SDK retry a 500 and reports a TransientError when it persists', async () => {
    fake.replies = Array.from({ length: 4 }, () => serviceError(500, 'InternalException', 'boom'));
    await assert.rejects(
      publisher({ sdkAttempts: 2, attempts: 2 }).publish('Evacuation Succeeded', DETAIL),
      (error: unknown) => {
        assert.ok(error instanceof TransientError);
        assert.match(error.message, /InternalException: boom/);
        return true;
      },
    );
    assert.equal(fake.received.length, 4, 'two SDK attempts for each of two publisher attempts');
  });

  it('recovers when the SDK retry of a 500 succeeds', async () => {
    fake.replies = [serviceError(500, 'InternalException', 'boom'), success()];
    await publisher({ sdkAttempts: 2, attempts: 1 }).publish('Evacuation Succeeded', DETAIL);
    assert.equal(fake.received.length, 2);
  });

  it('does not retry a missing bus', async () => {
    fake.replies = [serviceError(400, 'ResourceNotFoundException', 'Event bus drainbridge does not exist.')];
    await assert.rejects(publisher({ sdkAttempts: 3 }).publish('Evacuation Succeeded', DETAIL), (error: unknown) => {
      assert.ok(error instanceof DrainbridgeError && !(error instanceof TransientError));
      assert.match(error.message, /ResourceNotFoundException: Event bus drainbridge does not exist\./);
      return true;
    });
    assert.equal(fake.received.length, 1);
  });

  it('the client defaults turn the SDK request timeout into an error (it only warns otherwise)', async () => {
    fake.replies = ['hang'];
    const started = Date.now();
    await assert.rejects(
      publisher({ requestTimeoutMs: 100, timeoutMs: 10_000, attempts: 1 }).publish('Evacuation Succeeded', DETAIL),
      (error: unknown) => {
        assert.ok(error instanceof TransientError);
        assert.match(error.message, /TimeoutError/);
        return true;
      },
    );
    assert.ok(Date.now() - started < 2_000);
  });

  it('gives up on a silent endpoint after the timeout with a TransientError', async () => {
    fake.replies = ['hang', 'hang'];
    const started = Date.now();
    await assert.rejects(
      publisher({ timeoutMs: 150, attempts: 2 }).publish('Evacuation Succeeded', DETAIL),
      TransientError,
    );
    assert.equal(fake.received.length, 2);
    assert.ok(Date.now() - started < 2_000, 'bounded by the per-call timeout');
  });
});
