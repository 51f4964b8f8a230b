/**
 * NovaClient behaviours the real lab cannot easily show: paging, exact host matching, the refusal
 * when the host attribute is hidden (non-admin credentials), microversion negotiation and fault
 * mapping. A small local HTTP server stands in for Keystone and Nova; the client is under test.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, test } from 'node:test';
import { KeystoneSession } from '../../../lib/clients/openstack/keystone.ts';
import { NovaActionError, NovaClient } from '../../../lib/clients/openstack/nova.ts';
import { EvacuationFailed } from '../../../lib/errors/index.ts';
import { clearSecrets } from '../../../lib/log/redact.ts';

let server: Server;
let base: string;
let maxVersion = '2.93';
let adminView = true;
let requests: { url: string; version: string | undefined; body: string }[] = [];

const all = Array.from({ length: 450 }, (_, i) => ({
  id: `srv-${String(i).padStart(3, '0')}`,
  host: i % 3 === 0 ? 'compute-1' : 'compute-10',
}));

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
  res.end(body === undefined ? '' : JSON.stringify(body));
}

function serversPage(url: URL, res: ServerResponse) {
  // Like Nova's `host=` filter for a non-admin caller: silently ignored; and a substring-ish match otherwise.
  const limit = Number(url.searchParams.get('limit'));
  const marker = url.searchParams.get('marker');
  const start = marker ? all.findIndex((s) => s.id === marker) + 1 : 0;
  const page = all.slice(start, start + limit).map((s) => ({
    id: s.id,
    name: s.id,
    status: 'ACTIVE',
    'OS-EXT-STS:task_state': null,
    ...(adminView ? { 'OS-EXT-SRV-ATTR:host': s.host } : {}),
  }));
  send(res, 200, { servers: page });
}

function handle(req: IncomingMessage, res: ServerResponse, body: string) {
  const url = new URL(req.url ?? '/', base);
  requests.push({
    url: url.pathname + url.search,
    version: req.headers['openstack-api-version'] as string | undefined,
    body,
  });
  if (url.pathname === '/v3/auth/tokens') {
    const catalog = [{ type: 'compute', endpoints: [{ interface: 'public', region_id: 'R', url: `${base}/v2.1` }] }];
    return send(
      res,
      201,
      { token: { expires_at: new Date(Date.now() + 3_600_000).toISOString(), catalog } },
      { 'X-Subject-Token': 'tok-abcdef' },
    );
  }
  if (url.pathname === '/v2.1/')
    return send(res, 200, { version: { id: 'v2.1', version: maxVersion, min_version: '2.1' } });
  if (url.pathname === '/v2.1/servers/detail') return serversPage(url, res);
  if (url.pathname === '/v2.1/servers/srv-001/action') {
    return send(res, 409, {
      conflictingRequest: {
        code: 409,
        message: "Cannot 'os-migrateLive' instance srv-001 while it is in task_state migrating",
      },
    });
  }
  if (url.pathname === '/v2.1/servers/gone')
    return send(res, 404, { itemNotFound: { code: 404, message: 'Instance gone could not be found.' } });
  send(res, 404, { itemNotFound: { message: 'no route' } });
}

before(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => handle(req, res, body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(async () => {
  clearSecrets();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

beforeEach(() => {
  requests = [];
  maxVersion = '2.93';
  adminView = true;
});

const client = () =>
  new NovaClient(
    new KeystoneSession({
      credentials: {
        authUrl: `${base}/v3`,
        method: 'password',
        username: 'u',
        password: 'pw-nova-test',
        userDomainName: 'Default',
        projectName: 'admin',
        projectDomainName: 'Default',
        interface: 'public',
        insecure: false,
      },
    }),
  );

test('servers on a host: every page followed, only the exact host kept, microversion header sent', async () => {
  const servers = await client().listServersOnHost('compute-1');
  assert.equal(servers.length, 150);
  assert.ok(servers.every((s) => s.host === 'compute-1'));
  const pages = requests.filter((r) => r.url.startsWith('/v2.1/servers/detail'));
  assert.equal(pages.length, 3);
  assert.match(pages[0]?.url ?? '', /all_tenants=1&host=compute-1&limit=200$/);
  assert.match(pages[1]?.url ?? '', /marker=srv-199$/);
  assert.ok(pages.every((p) => p.version === 'compute 2.88'));
});

test('refuses to list when the host attribute is hidden (non-admin credentials)', async () => {
  adminView = false;
  await assert.rejects(
    client().listServersOnHost('compute-1'),
    (e: unknown) => e instanceof EvacuationFailed && /admin rights/.test(e.message),
  );
});

test('an endpoint older than 2.53 is refused; a newer one is capped at 2.88', async () => {
  maxVersion = '2.38';
  await assert.rejects(client().microversion(), /needs at least 2\.53/);
  maxVersion = '2.60';
  assert.equal(await client().microversion(), '2.60');
});

test("a refused action names the server and Nova's reason; a missing server is undefined", async () => {
  const nova = client();
  await assert.rejects(nova.liveMigrate('srv-001'), (e: unknown) => {
    assert.ok(e instanceof NovaActionError);
    assert.equal(e.status, 409);
    assert.match(
      e.message,
      /live migration of server srv-001 failed: Cannot 'os-migrateLive' instance srv-001 while it is in task_state migrating/,
    );
    return true;
  });
  const action = requests.find((r) => r.url.endsWith('/action'));
  assert.deepEqual(JSON.parse(action?.body ?? '{}'), { 'os-migrateLive': { host: null, block_migration: 'auto' } });
  assert.equal(await nova.getServer('gone'), undefined);
});
