/**
 * The Keystone session against a tiny local HTTP server standing in for Keystone and one service
 * (the session is the thing under test, the server is only a peer that can be made to answer 401
 * and 500 on demand). Includes the no-secret-in-any-log-line check.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import type { OpenStackCredentials } from '../../../lib/clients/openstack/credentials.ts';
import { OpenStackHttpError } from '../../../lib/clients/openstack/http.ts';
import { findEndpoint, KeystoneSession } from '../../../lib/clients/openstack/keystone.ts';
import { createLogger } from '../../../lib/log/logger.ts';
import { clearSecrets } from '../../../lib/log/redact.ts';
import { configureLogging } from '../../../lib/log/sink.ts';
import type { RetryOptions } from '../../../lib/util/retry.ts';

const PASSWORD = 'pw-S3cret-horse-battery';
let server: Server;
let base: string;
let tokenSerial = 0;
let authBodies: unknown[] = [];
/** Queue of statuses the service answers next (then 200). */
let serviceAnswers: number[] = [];
let expiresInMs = 3_600_000;
let seenTokens: string[] = [];

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let data = '';
    req.on('data', (chunk) => {
      data += chunk;
    });
    req.on('end', () => resolve(data));
  });
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const body = await readBody(req);
  if (req.url === '/v3/auth/tokens' && req.method === 'POST') {
    const parsed = JSON.parse(body) as { auth: { identity: { password?: { user: { password: string } } } } };
    authBodies.push(parsed);
    if (parsed.auth.identity.password && parsed.auth.identity.password.user.password !== PASSWORD) {
      return send(res, 401, {
        error: { code: 401, title: 'Unauthorized', message: 'The request you have made requires authentication.' },
      });
    }
    const token = `gAAAAA-token-${++tokenSerial}-${'x'.repeat(20)}`;
    const catalog = [
      {
        type: 'compute',
        endpoints: [
          { interface: 'internal', region_id: 'RegionOne', url: `${base}/internal-compute` },
          { interface: 'public', region_id: 'RegionTwo', url: `${base}/other-region` },
          { interface: 'public', region_id: 'RegionOne', url: `${base}/compute/` },
        ],
      },
    ];
    const expires = new Date(Date.now() + expiresInMs).toISOString();
    return send(res, 201, { token: { expires_at: expires, catalog } }, { 'X-Subject-Token': token });
  }
  if (req.url?.startsWith('/compute')) {
    seenTokens.push(String(req.headers['x-auth-token']));
    const status = serviceAnswers.shift() ?? 200;
    if (status === 500) return send(res, 500, { computeFault: { code: 500, message: `boom while handling ${body}` } });
    if (status === 401) return send(res, 401, { error: { message: 'token revoked' } });
    return send(res, 200, { ok: true, path: req.url });
  }
  send(res, 404, { itemNotFound: { message: 'no such thing' } });
}

const credentials = (): OpenStackCredentials => ({
  authUrl: `${base}/v3`,
  method: 'password',
  username: 'drainbridge',
  password: PASSWORD,
  userDomainName: 'Default',
  projectName: 'admin',
  projectDomainName: 'Default',
  regionName: 'RegionOne',
  interface: 'public',
  insecure: false,
});

const fastRetry: RetryOptions = {
  attempts: 3,
  baseDelayMs: 1,
  maxDelayMs: 2,
  isRetryable: (e) => e instanceof OpenStackHttpError && (e.status === undefined || e.status >= 500),
};

before(async () => {
  server = createServer((req, res) => {
    handle(req, res).catch(() => send(res, 500, {}));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

beforeEach(() => {
  authBodies = [];
  serviceAnswers = [];
  seenTokens = [];
  expiresInMs = 3_600_000;
});

afterEach(() => clearSecrets());

describe('KeystoneSession', () => {
  test('password auth scoped to a project by name and domain name', async () => {
    const session = new KeystoneSession({ credentials: credentials(), retry: fastRetry });
    await session.token();
    assert.deepEqual(authBodies[0], {
      auth: {
        identity: {
          methods: ['password'],
          password: { user: { name: 'drainbridge', domain: { name: 'Default' }, password: PASSWORD } },
        },
        scope: { project: { name: 'admin', domain: { name: 'Default' } } },
      },
    });
  });

  test('project by id, or a domain scope when no project is given', async () => {
    const { projectName: _p, projectDomainName: _d, ...unscoped } = credentials();
    await new KeystoneSession({ credentials: { ...unscoped, projectId: 'p-1' }, retry: fastRetry }).token();
    await new KeystoneSession({ credentials: { ...unscoped, domainName: 'Ops' }, retry: fastRetry }).token();
    const scopes = authBodies.map((b) => (b as { auth: { scope: unknown } }).auth.scope);
    assert.deepEqual(scopes, [{ project: { id: 'p-1' } }, { domain: { name: 'Ops' } }]);
  });

  test('application credential auth sends no scope', async () => {
    const session = new KeystoneSession({
      credentials: {
        ...credentials(),
        method: 'application_credential',
        applicationCredentialId: 'ac-1',
        applicationCredentialSecret: 'ac-secret-1',
      },
      retry: fastRetry,
    });
    await session.token();
    assert.deepEqual(authBodies[0], {
      auth: {
        identity: {
          methods: ['application_credential'],
          application_credential: { id: 'ac-1', secret: 'ac-secret-1' },
        },
      },
    });
  });

  test('catalog lookup honours interface and region; the token is cached', async () => {
    const session = new KeystoneSession({ credentials: credentials(), retry: fastRetry });
    assert.equal(await session.endpoint('compute'), `${base}/compute`);
    const internal = new KeystoneSession({
      credentials: { ...credentials(), interface: 'internal' },
      retry: fastRetry,
    });
    assert.equal(await internal.endpoint('compute'), `${base}/internal-compute`);
    await session.request({ service: 'compute', method: 'GET', path: '/a' });
    await session.request({ service: 'compute', method: 'GET', path: '/b' });
    assert.equal(session.authCount, 1);
    await assert.rejects(
      session.endpoint('volumev3'),
      /no public endpoint for service type "volumev3" in region RegionOne/,
    );
  });

  test('findEndpoint without a region takes the first endpoint of the interface', () => {
    const catalog = [{ type: 'placement', endpoints: [{ interface: 'public', region_id: 'R1', url: 'http://p/' }] }];
    assert.equal(findEndpoint(catalog, 'placement', { interface: 'public' }), 'http://p');
    assert.equal(findEndpoint(catalog, 'placement', { interface: 'admin' }), undefined);
  });

  test('a 401 from a service re-authenticates once and repeats the call', async () => {
    const session = new KeystoneSession({ credentials: credentials(), retry: fastRetry });
    await session.request({ service: 'compute', method: 'GET', path: '/x' });
    serviceAnswers = [401];
    const response = await session.request<{ ok: boolean }>({ service: 'compute', method: 'GET', path: '/y' });
    assert.equal(response.data.ok, true);
    assert.equal(session.authCount, 2);
    assert.notEqual(seenTokens.at(-1), seenTokens.at(-2), 'the repeat carries the new token');
  });

  test('a token close to expiry is replaced before use', async () => {
    expiresInMs = 60_000;
    const session = new KeystoneSession({
      credentials: credentials(),
      retry: fastRetry,
      refreshBeforeExpiryMs: 120_000,
    });
    await session.token();
    await session.token();
    assert.equal(session.authCount, 2);
  });

  test('transient 500s are retried; a persistent one becomes an OpenStackHttpError with the fault', async () => {
    const session = new KeystoneSession({ credentials: credentials(), retry: fastRetry });
    serviceAnswers = [500];
    const ok = await session.request<{ ok: boolean }>({ service: 'compute', method: 'GET', path: '/z' });
    assert.equal(ok.data.ok, true);
    serviceAnswers = [500, 500, 500];
    await assert.rejects(session.request({ service: 'compute', method: 'GET', path: '/z' }), (error: unknown) => {
      assert.ok(error instanceof OpenStackHttpError);
      assert.equal(error.status, 500);
      assert.match(error.message, /^GET http:\/\/127\.0\.0\.1:\d+\/compute\/z: HTTP 500: boom/);
      return true;
    });
  });

  test('non-idempotent calls are not repeated after a 500', async () => {
    const session = new KeystoneSession({ credentials: credentials(), retry: fastRetry });
    await session.token();
    serviceAnswers = [500, 200];
    const before = seenTokens.length;
    await assert.rejects(
      session.request({ service: 'compute', method: 'POST', path: '/action', body: {}, idempotent: false }),
    );
    assert.equal(seenTokens.length - before, 1);
  });

  test('no password or token appears in any log line, for 401 and 500 answers', async () => {
    const captured: string[] = [];
    const originalOut = process.stdout.write.bind(process.stdout);
    const originalErr = process.stderr.write.bind(process.stderr);
    // Only our logger's lines are captured; the test reporter's own output passes through.
    const capture =
      (original: typeof process.stdout.write) =>
      (chunk: unknown, ...rest: unknown[]): boolean => {
        const text = String(chunk);
        if (text.includes('"service":"keystone-test"')) {
          captured.push(text);
          return true;
        }
        return (original as (c: unknown, ...r: unknown[]) => boolean)(chunk, ...rest);
      };
    // Outside Lambda log lines go to the sink, off by default: let them through to stderr, captured here.
    configureLogging({ level: 'debug', format: 'json' });
    const logger = createLogger('keystone-test');
    logger.setLogLevel('DEBUG');
    process.stdout.write = capture(originalOut) as typeof process.stdout.write;
    process.stderr.write = capture(originalErr) as typeof process.stderr.write;
    let token = '';
    try {
      const good = new KeystoneSession({ credentials: credentials(), retry: fastRetry, logger });
      token = await good.token();
      serviceAnswers = [500, 500, 500];
      const serviceError = await good
        .request({ service: 'compute', method: 'POST', path: '/echo', body: { password: PASSWORD, token } })
        .catch((e: unknown) => e);
      logger.error('service call failed', { error: serviceError as Error });
      logger.error('raw', serviceError as Error);
      serviceAnswers = [401, 401];
      const revoked = await good
        .request({ service: 'compute', method: 'GET', path: '/again' })
        .catch((e: unknown) => e);
      logger.error('service call failed', { error: revoked as Error, where: `token ${token}` });
      const bad = new KeystoneSession({
        credentials: { ...credentials(), password: `${PASSWORD}-wrong` },
        retry: fastRetry,
        logger,
      });
      const authError = await bad.token().catch((e: unknown) => e);
      logger.error('auth failed', { error: authError as Error });
      assert.ok(authError instanceof OpenStackHttpError && authError.status === 401);
    } finally {
      process.stdout.write = originalOut;
      process.stderr.write = originalErr;
      configureLogging({ level: 'off', format: 'text' });
    }
    assert.ok(captured.length >= 4, `captured ${captured.length} lines`);
    assert.ok(
      captured.some((line) => /HTTP 500/.test(line)),
      'the 500 is logged',
    );
    assert.ok(
      captured.some((line) => /HTTP 401/.test(line)),
      'the 401 is logged',
    );
    for (const line of captured) {
      assert.ok(!line.includes(PASSWORD), `password in log line: ${line}`);
      assert.ok(!line.includes(token), `token in log line: ${line}`);
      assert.ok(!line.includes('pw-S3cret'), `part of the password in log line: ${line}`);
    }
  });
});
