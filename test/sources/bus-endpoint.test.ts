/**
 * The bus endpoint `drainbridge run` serves to node agents (lib/bus/bus-endpoint.ts), over TLS with a
 * certificate made as docs/notices.md says, called by the real AWS SDK EventBridge client as the agent
 * builds it (lib/bus/bus-endpoint-client.ts, trusting that certificate): a signed call with the shared key
 * puts the agent's events on the in-process bus; plain HTTP, a wrong key, no signature, an altered body,
 * an old signature, the same signed call twice, a follower replica, or an event the agents do not publish
 * put nothing — each with an error that says why, and no log line holding the key or the TLS key.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { startBusEndpoint } from '../../lib/bus/bus-endpoint.ts';
import { createBusEndpointClient } from '../../lib/bus/bus-endpoint-client.ts';
import {
  type BusServerSettings,
  busSigningKey,
  loadBusClientSettings,
  loadBusServerSettings,
} from '../../lib/bus/bus-key.ts';
import { readServerTls } from '../../lib/bus/bus-tls.ts';
import type { MaintenanceEndedEvent, MaintenanceRequestedEvent } from '../../lib/bus/contracts/index.ts';
import { toPublishEntry } from '../../lib/bus/entry.ts';
import { InProcessBus } from '../../lib/bus/in-process-bus.ts';
import type { PutEventsServer } from '../../lib/bus/put-events-server.ts';
import { verifySigV4 } from '../../lib/bus/sigv4.ts';
import type { ConfigError } from '../../lib/errors/index.ts';
import { runCli } from '../cli/run-cli.ts';
import { makeTestCertificate, type TestCertificate } from '../support/tls-cert.ts';
import { waitUntil } from '../support/wait.ts';

const KEY = 'k3y-for-tests-0123456789abcdef0123456789abcdef';
const OTHER_KEY = 'another-key-0123456789abcdef0123456789abcdef';

const REQUESTED: MaintenanceRequestedEvent = {
  version: '1',
  requestId: 'azure:node-2:se:5DD55B64-45AD-49D3-BBC9-F57D4EA97BD7',
  requester: 'drainbridge-node-agent/node-2',
  origin: 'azure',
  target: { nodeName: 'node-2' },
  reason: 'Host server is undergoing maintenance.',
};
const ENDED: MaintenanceEndedEvent = {
  version: '1',
  requestId: REQUESTED.requestId,
  requester: REQUESTED.requester,
  origin: 'azure',
  target: { nodeName: 'node-2' },
};

class Log {
  readonly lines: { message: string; extra: Record<string, unknown> }[] = [];
  warn(message: string, extra: Record<string, unknown>): void {
    this.lines.push({ message, extra });
  }
  text(): string {
    return JSON.stringify(this.lines);
  }
}

const CERT: TestCertificate = makeTestCertificate();

async function send(key: string, entries: ReturnType<typeof toPublishEntry>[], url: string, caFile = CERT.certFile) {
  const client = await createBusEndpointClient({ endpoint: url, key: busSigningKey(key), caFile });
  try {
    return await client.send(new PutEventsCommand({ Entries: entries }));
  } finally {
    client.destroy();
  }
}

/** The SDK's signed request, caught instead of sent (to replay it, changed or not). */
async function signedRequest(
  key: string,
  entry = REQUESTED,
): Promise<{ headers: Record<string, string>; body: string }> {
  let caught: { headers: Record<string, string>; body: string } | undefined;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      caught = { headers: req.headers as Record<string, string>, body: Buffer.concat(chunks).toString('utf8') };
      res.writeHead(200, { 'content-type': 'application/x-amz-json-1.1' });
      res.end('{"FailedEntryCount":0,"Entries":[{"EventId":"x"}]}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    await send(
      key,
      [toPublishEntry('Maintenance Requested', entry, 'drainbridge')],
      `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    );
  } finally {
    server.close();
  }
  assert.ok(caught);
  return caught;
}

/** POSTs as a raw client would (headers as given, the Host included), over TLS trusting CERT or plain. */
function post(
  url: string,
  headers: Record<string, string>,
  body: string,
): Promise<{ status: number; json: { __type?: string; message?: string }; connection?: string }> {
  const { 'content-length': _length, ...rest } = headers;
  const request = url.startsWith('https:') ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: rest, ca: readFileSync(CERT.certFile) }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          json: JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}'),
          ...(res.headers.connection ? { connection: res.headers.connection } : {}),
        }),
      );
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe("drainbridge run's bus endpoint: signed PutEvents from node agents over TLS", () => {
  let bus: InProcessBus;
  let endpoint: PutEventsServer;
  let settings: BusServerSettings;
  const log = new Log();
  let leading = true;

  before(async () => {
    bus = new InProcessBus({ rules: [], busName: 'drainbridge', start: async () => undefined });
    settings = loadBusServerSettings({
      DRAINBRIDGE_BUS_ADDRESS: '127.0.0.1:0',
      DRAINBRIDGE_BUS_KEY: KEY,
      DRAINBRIDGE_BUS_TLS_CERT: CERT.certFile,
      DRAINBRIDGE_BUS_TLS_KEY: CERT.keyFile,
    }) as BusServerSettings;
    endpoint = await startBusEndpoint({
      settings,
      bus,
      available: () => (leading ? undefined : 'this replica does not lead'),
      logger: log,
    });
  });
  after(() => endpoint.close());

  it('takes a signed call with the shared key over TLS: both events on the bus', async () => {
    assert.match(endpoint.url, /^https:\/\/127\.0\.0\.1:\d+$/);
    const output = await send(
      KEY,
      [
        toPublishEntry('Maintenance Requested', REQUESTED, 'drainbridge'),
        toPublishEntry('Maintenance Ended', ENDED, 'drainbridge'),
      ],
      endpoint.url,
    );
    assert.equal(output.FailedEntryCount, 0);
    assert.deepEqual(
      bus.accepted.map((e) => [e['detail-type'], e.source, e.detail.requestId]),
      [
        ['Maintenance Requested', 'drainbridge.requests', REQUESTED.requestId],
        ['Maintenance Ended', 'drainbridge.requests', REQUESTED.requestId],
      ],
    );
  });

  it('refuses another key (UnrecognizedClientException), puts nothing, and never logs either key', async () => {
    const before = bus.accepted.length;
    await assert.rejects(
      send(OTHER_KEY, [toPublishEntry('Maintenance Requested', REQUESTED, 'drainbridge')], endpoint.url),
      (error: Error) => {
        assert.equal(error.name, 'UnrecognizedClientException');
        assert.match(error.message, /different DRAINBRIDGE_BUS_KEY/);
        return true;
      },
    );
    assert.equal(bus.accepted.length, before);
    assert.ok(
      log.lines.some((l) => l.extra.type === 'UnrecognizedClientException'),
      log.text(),
    );
    // The agent tries again at every read: the same refusal is logged once a minute, not every time.
    await send(OTHER_KEY, [toPublishEntry('Maintenance Requested', REQUESTED, 'drainbridge')], endpoint.url).catch(
      () => undefined,
    );
    assert.ok(endpoint.calls.filter((c) => c.error === 'UnrecognizedClientException').length >= 2);
    assert.equal(log.lines.filter((l) => l.extra.type === 'UnrecognizedClientException').length, 1);
    assert.ok(!log.text().includes(KEY) && !log.text().includes(OTHER_KEY), 'no key in the log');
  });

  it('refuses an unsigned call, an altered body and a replay after five minutes', async () => {
    const before = bus.accepted.length;
    const unsigned = await post(
      endpoint.url,
      { 'x-amz-target': 'AWSEvents.PutEvents', 'content-type': 'application/x-amz-json-1.1' },
      JSON.stringify({ Entries: [toPublishEntry('Maintenance Requested', REQUESTED, 'drainbridge')] }),
    );
    assert.equal(unsigned.status, 403);
    assert.equal(unsigned.json.__type, 'MissingAuthenticationTokenException');

    const signed = await signedRequest(KEY);
    const { host: _host, 'content-length': _length, ...headers } = signed.headers;
    // The same signed request, its target node changed on the way.
    const altered = await post(endpoint.url, headers, signed.body.replace(/node-2/g, 'node-1'));
    assert.equal(altered.status, 400);
    assert.match(altered.json.message ?? '', /does not match the body/);
    // … and with the body's declared hash changed to fit, the signature no longer matches.
    const body = signed.body.replace(/node-2/g, 'node-1');
    const rehashed = await post(
      endpoint.url,
      { ...headers, 'x-amz-content-sha256': createHash('sha256').update(body).digest('hex') },
      body,
    );
    assert.equal(rehashed.status, 400);
    assert.match(rehashed.json.message ?? '', /signature does not match/);

    // The unchanged request is good now, and refused once its signature is older than five minutes.
    const request = {
      method: 'POST',
      path: '/',
      query: '',
      headers: { ...signed.headers },
      body: Buffer.from(signed.body),
    };
    assert.deepEqual(verifySigV4(request, [settings.key], { service: 'events', now: Date.now() }).ok, true);
    const late = verifySigV4(request, [settings.key], { service: 'events', now: Date.now() + 6 * 60_000 });
    assert.ok(!late.ok && late.code === 'InvalidSignatureException' && /Signature expired/.test(late.message));
    assert.equal(bus.accepted.length, before, 'nothing was put');
  });

  it('takes a signed call once: the same call again (a replay) is refused and puts nothing', async () => {
    const replayed = { ...REQUESTED, requestId: 'azure:node-2:se:REPLAYED' };
    const signed = await signedRequest(KEY, replayed);
    assert.match(
      signed.headers.authorization ?? '',
      /SignedHeaders=[^,]*amz-sdk-request/,
      'each attempt is signed anew',
    );
    const before = bus.accepted.length;
    const first = await post(endpoint.url, signed.headers, signed.body);
    assert.equal(first.status, 200, JSON.stringify(first.json));
    const again = await post(endpoint.url, signed.headers, signed.body);
    assert.equal(again.status, 400);
    assert.equal(again.json.__type, 'InvalidSignatureException');
    assert.match(again.json.message ?? '', /already taken: a replay/);
    assert.deepEqual(
      bus.accepted.slice(before).map((e) => e.detail.requestId),
      [replayed.requestId],
      'put once',
    );
  });

  it('refuses a signature dated more than five minutes from its clock, either way', async () => {
    const signed = await signedRequest(KEY, { ...REQUESTED, requestId: 'azure:node-2:se:LATE' });
    for (const offset of [6 * 60_000, -6 * 60_000]) {
      const skewed = await startBusEndpoint({
        settings,
        bus,
        available: () => undefined,
        logger: log,
        now: () => Date.now() + offset,
      });
      try {
        const before = bus.accepted.length;
        const late = await post(skewed.url, signed.headers, signed.body);
        assert.equal(late.status, 400);
        assert.match(late.json.message ?? '', /Signature expired/);
        assert.equal(bus.accepted.length, before);
      } finally {
        await skewed.close();
      }
    }
  });

  it('refuses plain HTTP on its port (nothing put, one log line), and an agent trusting another certificate', async () => {
    const before = bus.accepted.length;
    const signed = await signedRequest(KEY, { ...REQUESTED, requestId: 'azure:node-2:se:PLAIN' });
    await assert.rejects(post(endpoint.url.replace('https:', 'http:'), signed.headers, signed.body));
    await waitUntil('the refused plain-HTTP connection is logged', () =>
      log.lines.some((l) => l.message.startsWith('bus endpoint: connection refused, no TLS')),
    );
    const other = makeTestCertificate();
    await assert.rejects(
      send(KEY, [toPublishEntry('Maintenance Requested', REQUESTED, 'drainbridge')], endpoint.url, other.certFile),
      /self[- ]signed|certificate/i,
    );
    assert.equal(bus.accepted.length, before);
    const text = log.text();
    for (const secret of [KEY, CERT.keyPem.split('\n')[1] ?? CERT.keyPem]) assert.ok(!text.includes(secret), text);
  });

  it("puts only the agents' events: another detail-type, a bad detail, a non-cloud origin fail alone", async () => {
    const before = bus.accepted.length;
    const cordoned = {
      ...toPublishEntry('Maintenance Requested', REQUESTED, 'drainbridge'),
      DetailType: 'Node Cordoned',
      Source: 'drainbridge.cluster',
    };
    const badDetail = {
      ...toPublishEntry('Maintenance Requested', REQUESTED, 'drainbridge'),
      Detail: JSON.stringify({ ...REQUESTED, target: {} }),
    };
    const manual = toPublishEntry('Maintenance Requested', { ...REQUESTED, origin: 'manual' }, 'drainbridge');
    const good = toPublishEntry(
      'Maintenance Requested',
      { ...REQUESTED, requestId: 'azure:node-2:se:OTHER' },
      'drainbridge',
    );
    const output = await send(KEY, [cordoned, badDetail, manual, good], endpoint.url);
    assert.equal(output.FailedEntryCount, 3);
    const codes = output.Entries?.map((e) => e.ErrorCode ?? 'ok');
    assert.deepEqual(codes, ['AccessDeniedException', 'InvalidArgument', 'AccessDeniedException', 'ok']);
    assert.match(output.Entries?.[1]?.ErrorMessage ?? '', /detail\.target/);
    assert.deepEqual(
      bus.accepted.slice(before).map((e) => e.detail.requestId),
      ['azure:node-2:se:OTHER'],
    );
  });

  it('answers 503 while another replica leads (retryable), and puts nothing', async () => {
    leading = false;
    const before = bus.accepted.length;
    try {
      await assert.rejects(
        send(KEY, [toPublishEntry('Maintenance Requested', REQUESTED, 'drainbridge')], endpoint.url),
        (error: Error & { $metadata?: { httpStatusCode?: number } }) => {
          assert.equal(error.$metadata?.httpStatusCode, 503);
          return true;
        },
      );
      // The connection closes with the refusal: the retry opens a new one, which the Service in front
      // may send to the replica that leads (kept alive, every retry came back to this one).
      const signed = await signedRequest(KEY, { ...REQUESTED, requestId: 'azure:node-2:se:FOLLOWER' });
      const refused = await post(endpoint.url, signed.headers, signed.body);
      assert.equal(refused.status, 503);
      assert.equal(refused.connection, 'close');
    } finally {
      leading = true;
    }
    assert.equal(bus.accepted.length, before);
  });

  it('refuses to serve or send plain HTTP unless DRAINBRIDGE_BUS_PLAINTEXT=allow; bad TLS files named, never shown', () => {
    assert.throws(
      () => loadBusServerSettings({ DRAINBRIDGE_BUS_ADDRESS: '0.0.0.0:8471', DRAINBRIDGE_BUS_KEY: KEY }),
      /DRAINBRIDGE_BUS_TLS_CERT: and DRAINBRIDGE_BUS_TLS_KEY are required with DRAINBRIDGE_BUS_ADDRESS/,
    );
    assert.throws(
      () =>
        loadBusServerSettings({
          DRAINBRIDGE_BUS_ADDRESS: '0.0.0.0:8471',
          DRAINBRIDGE_BUS_KEY: KEY,
          DRAINBRIDGE_BUS_TLS_CERT: CERT.certFile,
        }),
      /DRAINBRIDGE_BUS_TLS_KEY: is required with the other TLS file/,
    );
    assert.equal(
      loadBusServerSettings({
        DRAINBRIDGE_BUS_ADDRESS: '0.0.0.0:8471',
        DRAINBRIDGE_BUS_KEY: KEY,
        DRAINBRIDGE_BUS_PLAINTEXT: 'allow',
      })?.tls,
      'plaintext',
    );
    assert.throws(
      () =>
        loadBusClientSettings({
          DRAINBRIDGE_BUS_ENDPOINT: 'http://drainbridge-run-bus:8471',
          DRAINBRIDGE_BUS_KEY: KEY,
        }),
      /DRAINBRIDGE_BUS_ENDPOINT: must be https: \(plain http only with DRAINBRIDGE_BUS_PLAINTEXT=allow\)/,
    );
    assert.equal(
      loadBusClientSettings({
        DRAINBRIDGE_BUS_ENDPOINT: 'http://127.0.0.1:8471',
        DRAINBRIDGE_BUS_KEY: KEY,
        DRAINBRIDGE_BUS_PLAINTEXT: 'allow',
      })?.endpoint,
      'http://127.0.0.1:8471',
    );
    // The certificate where the key should be: named by variable and path, with no line of either file.
    assert.throws(
      () => readServerTls({ certFile: CERT.certFile, keyFile: CERT.certFile }),
      (error: ConfigError) => {
        assert.match(
          error.message,
          /DRAINBRIDGE_BUS_TLS_KEY: .*tls\.crt and .*tls\.crt are not a certificate and its private key/,
        );
        assert.ok(!error.message.includes('MII'), error.message);
        return true;
      },
    );
    assert.throws(
      () => readServerTls({ certFile: '/nonexistent/tls.crt', keyFile: CERT.keyFile }),
      /DRAINBRIDGE_BUS_TLS_CERT: cannot read \/nonexistent\/tls\.crt \(ENOENT\)/,
    );
  });

  it('the real commands refuse plain HTTP by default before contacting anything: run without TLS files, an agent with http:', async () => {
    const kubeconfig = join(CERT.dir, 'no-kubeconfig');
    const [run, agent] = await Promise.all([
      runCli(['run', '--bus-address', '127.0.0.1:0', '--metrics-address', '127.0.0.1:0', '--kubeconfig', kubeconfig], {
        DRAINBRIDGE_BUS_KEY: KEY,
      }),
      runCli(
        [
          'forwarder',
          '--node-agent',
          '--node',
          'node-2',
          '--provider',
          'azure',
          '--bus-endpoint',
          'http://127.0.0.1:8471',
          '--metrics-address',
          '127.0.0.1:0',
          '--kubeconfig',
          kubeconfig,
        ],
        { DRAINBRIDGE_BUS_KEY: KEY },
      ),
    ]);
    assert.equal(run.code, 2, run.stderr);
    assert.match(
      run.stderr,
      /DRAINBRIDGE_BUS_TLS_CERT: and DRAINBRIDGE_BUS_TLS_KEY are required with DRAINBRIDGE_BUS_ADDRESS/,
    );
    assert.equal(agent.code, 2, agent.stderr);
    assert.match(agent.stderr, /DRAINBRIDGE_BUS_ENDPOINT: must be https:/);
    for (const text of [run.stdout, run.stderr, agent.stdout, agent.stderr]) assert.ok(!text.includes(KEY), text);
  });

  it('refuses bad settings naming the variable, without the key', () => {
    assert.throws(
      () => loadBusServerSettings({ DRAINBRIDGE_BUS_ADDRESS: '0.0.0.0:8471', DRAINBRIDGE_BUS_KEY: 'short-secret' }),
      (error: ConfigError) =>
        error.message.includes('DRAINBRIDGE_BUS_KEY: must be at least 32') && !error.message.includes('short-secret'),
    );
    assert.throws(
      () => loadBusServerSettings({ DRAINBRIDGE_BUS_ADDRESS: '0.0.0.0:8471' }),
      /DRAINBRIDGE_BUS_KEY: is required/,
    );
    assert.throws(
      () => loadBusClientSettings({ DRAINBRIDGE_BUS_ENDPOINT: 'drainbridge-run-bus:8471', DRAINBRIDGE_BUS_KEY: KEY }),
      /DRAINBRIDGE_BUS_ENDPOINT: must be an https URL/,
    );
    assert.equal(loadBusServerSettings({}), undefined, 'no address: no endpoint');
    assert.notEqual(busSigningKey(KEY).accessKeyId, busSigningKey(OTHER_KEY).accessKeyId);
    assert.ok(!busSigningKey(KEY).accessKeyId.includes(KEY.slice(0, 8)), 'the key id is a fingerprint, not the key');
  });
});
