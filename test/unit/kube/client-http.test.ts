/**
 * KubeClient against a real local HTTP server: transient answers are retried, a hung call times out
 * and maps to TransientError, definite answers are not retried, and lists follow `continue`.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeClient } from '../../../lib/clients/kube/client.ts';
import { apiCodeOf } from '../../../lib/clients/kube/errors.ts';
import { ConflictError, TransientError } from '../../../lib/errors/index.ts';

const hits = new Map<string, number>();

function node(name: string) {
  return { apiVersion: 'v1', kind: 'Node', metadata: { name, resourceVersion: '1' } };
}

function status(res: ServerResponse, code: number, reason: string) {
  res.writeHead(code, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message: reason }));
}

const CANNED: Record<string, [number, string]> = {
  '/api/v1/nodes/conflict': [409, 'Conflict'],
  '/api/v1/nodes/missing': [404, 'NotFound'],
};

function list(url: URL, res: ServerResponse): void {
  const page = url.searchParams.get('continue') ?? '0';
  assert.equal(url.searchParams.get('limit'), '1');
  const next = Number(page) + 1;
  const metadata = next < 3 ? { continue: String(next) } : {};
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ kind: 'NodeList', apiVersion: 'v1', metadata, items: [node(`n${page}`)] }));
}

function handle(req: IncomingMessage, res: ServerResponse): void {
  const url = new URL(req.url ?? '/', 'http://x');
  const count = (hits.get(url.pathname) ?? 0) + 1;
  hits.set(url.pathname, count);
  const canned = CANNED[url.pathname];
  if (url.pathname === '/api/v1/nodes/slow') {
    // Never answers: the client's timeout has to end the call.
  } else if (url.pathname === '/api/v1/nodes/flaky' && count === 1) status(res, 503, 'ServiceUnavailable');
  else if (canned) status(res, canned[0], canned[1]);
  else if (url.pathname === '/api/v1/nodes') list(url, res);
  else {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(node(url.pathname.split('/').pop() ?? '')));
  }
}

describe('KubeClient over HTTP', () => {
  const server = createServer(handle);
  let client: KubeClient;
  before(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromOptions({
      clusters: [{ name: 'c', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
      users: [{ name: 'u', token: 'not-a-secret-test-token' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    client = new KubeClient(kubeConfig, {
      timeoutMs: 150,
      retry: { attempts: 3, baseDelayMs: 1, maxDelayMs: 2 },
      chunkSize: 1,
    });
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  test('a 503 is retried and the call succeeds', async () => {
    assert.equal((await client.getNode('flaky')).metadata?.name, 'flaky');
    assert.equal(hits.get('/api/v1/nodes/flaky'), 2);
  });

  test('a call that hangs times out, is retried, and maps to TransientError', async () => {
    await assert.rejects(client.getNode('slow'), TransientError);
    // Each attempt reaches the server unless an aborted keep-alive socket fails the next one first.
    assert.ok((hits.get('/api/v1/nodes/slow') ?? 0) >= 2, 'retried');
  });

  test('409 → ConflictError and 404 keep their status and are not retried', async () => {
    await assert.rejects(client.getNode('conflict'), ConflictError);
    assert.equal(hits.get('/api/v1/nodes/conflict'), 1);
    await assert.rejects(client.getNode('missing'), (error: unknown) => apiCodeOf(error) === 404);
    assert.equal(hits.get('/api/v1/nodes/missing'), 1);
  });

  test('lists are paged with limit and continue', async () => {
    const nodes = await client.listNodes();
    assert.deepEqual(
      nodes.map((n) => n.metadata?.name),
      ['n0', 'n1', 'n2'],
    );
  });
});
