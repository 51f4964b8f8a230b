/**
 * The lean client (lib/clients/kube/http) against a real local HTTP server, and its endpoint reading: the same
 * contract as KubeClient (transient answers retried, a hung call times out as TransientError, 409 →
 * ConflictError, 404 kept and not retried, pages followed), plus cancellation (`close()` ends calls in
 * flight and refuses later ones), watch streams (events in order, an ERROR event → its status), times as
 * the API server parses them, and kubeconfig files read the lean way (or handed to client-node).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { KubernetesObject } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { apiCodeOf } from '../../../lib/clients/kube/errors.ts';
import { KubeHttpClient, kubeJson, type WatchEvent } from '../../../lib/clients/kube/http/client.ts';
import { type KubeConfigLike, loadKubeEndpoint } from '../../../lib/clients/kube/http/endpoint.ts';
import { ConfigError, ConflictError, TransientError } from '../../../lib/errors/index.ts';
import { waitUntil } from '../../support/wait.ts';

const TOKEN = 'not-a-secret-test-token';
const hits = new Map<string, number>();
const bodies: { path: string; body: string; headers: IncomingMessage['headers'] }[] = [];

function status(res: ServerResponse, code: number, reason: string): void {
  res.writeHead(code, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message: reason }));
}

function node(name: string) {
  return { apiVersion: 'v1', kind: 'Node', metadata: { name, resourceVersion: '1' } };
}

function watch(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.write(`${JSON.stringify({ type: 'ADDED', object: node('a') })}\n`);
  // One event split across two writes, then a 410 as the apiserver sends it after compaction.
  const modified = JSON.stringify({ type: 'MODIFIED', object: node('a') });
  res.write(modified.slice(0, 10));
  res.write(`${modified.slice(10)}\n`);
  res.end(
    `${JSON.stringify({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version' } })}\n`,
  );
}

function handle(req: IncomingMessage, res: ServerResponse): void {
  const url = new URL(req.url ?? '/', 'http://x');
  const count = (hits.get(url.pathname) ?? 0) + 1;
  hits.set(url.pathname, count);
  if (req.headers.authorization !== `Bearer ${TOKEN}`) {
    status(res, 401, 'Unauthorized');
    return;
  }
  let body = '';
  req.on('data', (chunk: Buffer) => {
    body += chunk.toString();
  });
  req.on('end', () => {
    bodies.push({ path: url.pathname, body, headers: req.headers });
    if (url.pathname === '/api/v1/nodes/slow' || url.pathname === '/api/v1/nodes/hang') return; // never answers
    if (url.pathname === '/api/v1/nodes/flaky' && count === 1) return status(res, 503, 'ServiceUnavailable');
    if (url.pathname === '/api/v1/nodes/conflict') return status(res, 409, 'Conflict');
    if (url.pathname === '/api/v1/nodes/missing') return status(res, 404, 'NotFound');
    if (url.pathname === '/api/v1/watched' && url.searchParams.get('watch') === 'true') return watch(res);
    if (url.pathname === '/api/v1/nodes') {
      const page = Number(url.searchParams.get('continue') ?? '0');
      const metadata = page < 2 ? { continue: String(page + 1), resourceVersion: '7' } : { resourceVersion: '7' };
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ kind: 'NodeList', metadata, items: [node(`n${page}`)] }));
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(body || JSON.stringify(node(url.pathname.split('/').pop() ?? '')));
  });
}

const endpointFor = (port: number) => ({
  server: new URL(`http://127.0.0.1:${port}`),
  tls: { rejectUnauthorized: true },
  authorization: async () => `Bearer ${TOKEN}`,
});

describe('KubeHttpClient over HTTP', () => {
  const server = createServer(handle);
  let port: number;
  let client: KubeHttpClient;
  before(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    client = new KubeHttpClient(endpointFor(port), {
      timeoutMs: 150,
      retry: { attempts: 3, baseDelayMs: 1, maxDelayMs: 2 },
    });
  });
  after(async () => {
    client.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  test('a 503 is retried and the call succeeds', async () => {
    assert.equal((await client.getNode('flaky')).metadata?.name, 'flaky');
    assert.equal(hits.get('/api/v1/nodes/flaky'), 2);
  });

  test('a call that hangs times out, is retried, and maps to TransientError', async () => {
    await assert.rejects(client.getNode('slow'), TransientError);
    assert.equal(hits.get('/api/v1/nodes/slow'), 3, 'every attempt reached the server');
  });

  test('409 → ConflictError and 404 keep their status and are not retried', async () => {
    await assert.rejects(client.getNode('conflict'), ConflictError);
    assert.equal(hits.get('/api/v1/nodes/conflict'), 1);
    await assert.rejects(client.getNode('missing'), (error: unknown) => apiCodeOf(error) === 404);
    assert.equal(hits.get('/api/v1/nodes/missing'), 1);
  });

  test('lists follow continue; a page carries the list resourceVersion', async () => {
    assert.deepEqual(
      (await client.listNodes()).map((n) => n.metadata?.name),
      ['n0', 'n1', 'n2'],
    );
    const page = await client.listPage('/api/v1/nodes', { limit: 1 });
    assert.equal(page.metadata?.resourceVersion, '7');
    assert.equal(page.metadata?.continue, '1');
  });

  test('a watch streams its events in order (even split across writes); an ERROR event rejects with its status', async () => {
    const seen: WatchEvent[] = [];
    await assert.rejects(
      client.watch<KubernetesObject>(
        '/api/v1/watched',
        { resourceVersion: '5', timeoutSeconds: 30 },
        (e) => seen.push(e),
        new AbortController().signal,
      ),
      (error: unknown) => apiCodeOf(error) === 410,
    );
    assert.deepEqual(
      seen.map((e) => e.type),
      ['ADDED', 'MODIFIED'],
    );
  });

  test('Lease times go out as MicroTime (six fractional digits), event times to the second', async () => {
    const at = new Date('2026-11-25T04:00:01.234Z');
    await client.replaceLease('ns', {
      metadata: { name: 'l', resourceVersion: '3' },
      spec: { renewTime: at, acquireTime: at },
    });
    const lease = JSON.parse(bodies.at(-1)?.body ?? '{}') as { spec: { renewTime: string; acquireTime: string } };
    assert.equal(lease.spec.renewTime, '2026-11-25T04:00:01.234000Z');
    assert.equal(lease.spec.acquireTime, '2026-11-25T04:00:01.234000Z');
    assert.equal(
      kubeJson({ firstTimestamp: at, eventTime: at }),
      '{"firstTimestamp":"2026-11-25T04:00:01Z","eventTime":"2026-11-25T04:00:01.234000Z"}',
    );
  });

  test('a merge patch is sent as one', async () => {
    await client.patchClusterObject(
      { group: 'g', version: 'v1', plural: 'things' },
      'x',
      { status: { a: 1 } },
      'status',
    );
    const sent = bodies.at(-1);
    assert.equal(sent?.path, '/apis/g/v1/things/x/status');
    assert.equal(sent?.headers['content-type'], 'application/merge-patch+json');
  });

  test('close() ends a call in flight at once, and later calls fail without a request', async () => {
    const closing = new KubeHttpClient(endpointFor(port), { timeoutMs: 60_000 });
    const pending = closing.getNode('hang');
    await waitUntil('the call reached the server', () => (hits.get('/api/v1/nodes/hang') ?? 0) > 0);
    const started = Date.now();
    closing.close();
    await assert.rejects(pending, /the Kubernetes client was closed/);
    assert.ok(Date.now() - started < 1000);
    await assert.rejects(closing.getNode('anything'), /closed/);
    assert.equal(hits.get('/api/v1/nodes/anything'), undefined);
  });
});

describe('loadKubeEndpoint', () => {
  const dir = mkdtempSync(join(tmpdir(), 'drainbridge-kubeconfig-'));
  const noFallback = async (): Promise<KubeConfigLike> => assert.fail('client-node is not needed here');

  function kubeconfig(user: Record<string, unknown>, cluster: Record<string, unknown> = {}): string {
    const path = join(dir, `config-${Math.random().toString(16).slice(2)}`);
    writeFileSync(
      path,
      stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'c', cluster: { server: 'https://10.0.0.1:6443', ...cluster } }],
        users: [{ name: 'u', user }],
        contexts: [
          { name: 'ctx', context: { cluster: 'c', user: 'u' } },
          { name: 'other', context: { cluster: 'c', user: 'u' } },
        ],
        'current-context': 'ctx',
      }),
    );
    return path;
  }

  test('a token, the CA data, insecure-skip-tls-verify and tls-server-name are read without client-node', async () => {
    const ca = Buffer.from('-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');
    const path = kubeconfig(
      { token: 'abc-token' },
      { 'certificate-authority-data': ca.toString('base64'), 'tls-server-name': 'kube' },
    );
    const endpoint = await loadKubeEndpoint({ source: 'kubeconfig', path }, noFallback);
    assert.equal(endpoint.server.href, 'https://10.0.0.1:6443/');
    assert.deepEqual(endpoint.tls.ca, ca);
    assert.equal(endpoint.tls.servername, 'kube');
    assert.equal(endpoint.tls.rejectUnauthorized, true);
    assert.equal(await endpoint.authorization(), 'Bearer abc-token');
    const insecure = await loadKubeEndpoint(
      { source: 'kubeconfig', path: kubeconfig({ token: 't' }, { 'insecure-skip-tls-verify': true }) },
      noFallback,
    );
    assert.equal(insecure.tls.rejectUnauthorized, false);
  });

  test('a token file (relative to the kubeconfig) and a client certificate', async () => {
    writeFileSync(join(dir, 'token'), 'file-token\n');
    writeFileSync(join(dir, 'client.crt'), 'CERT');
    const path = kubeconfig({
      tokenFile: 'token',
      'client-certificate': 'client.crt',
      'client-key-data': Buffer.from('KEY').toString('base64'),
    });
    const endpoint = await loadKubeEndpoint({ source: 'kubeconfig', path }, noFallback);
    assert.equal(await endpoint.authorization(), 'Bearer file-token');
    assert.equal(String(endpoint.tls.cert), 'CERT');
    assert.equal(String(endpoint.tls.key), 'KEY');
  });

  test('an exec plugin goes to client-node; a context that is not there is a ConfigError naming it', async () => {
    let loaded = false;
    const fallback = async (): Promise<KubeConfigLike> => {
      loaded = true;
      return {
        getCurrentCluster: () => ({ server: 'https://eks.example:443' }),
        applyToHTTPSOptions: async (options: object) => {
          const o = options as { headers?: Record<string, string> };
          if (o.headers) o.headers.Authorization = 'Bearer from-exec';
        },
      };
    };
    const path = kubeconfig({ exec: { command: 'aws', args: ['eks', 'get-token'] } });
    const endpoint = await loadKubeEndpoint({ source: 'kubeconfig', path }, fallback);
    assert.ok(loaded);
    assert.equal(await endpoint.authorization(), 'Bearer from-exec');
    await assert.rejects(
      loadKubeEndpoint({ source: 'kubeconfig', path: kubeconfig({ token: 't' }), context: 'nope' }, noFallback),
      (error: unknown) => error instanceof ConfigError && /context "nope" is not in/.test(error.message),
    );
  });

  test('in-cluster without the service environment is a ConfigError', async () => {
    await assert.rejects(loadKubeEndpoint({ source: 'in-cluster' }, noFallback, {}), ConfigError);
  });
});
